import fs from 'node:fs';
import path from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};
/** The SPA's own paths: anything else that is not a file is the API's 404. */
const SPA_PATHS = /^\/(?:$|signin$|dashboard(?:\/|$)|admin(?:\/|$)|portal(?:\/|$))/;

/**
 * Serves the built web app (web/dist) from the API's own port: files by path (hashed assets cached
 * for a year), and index.html for the app's routes. Without a build the app's paths answer 503 with
 * how to build it; the API is unaffected.
 */
export function registerWebApp(app: OpenAPIHono<AppEnv>, distDir: string): void {
  const root = path.resolve(distDir);
  app.get('*', async (c, next) => {
    const requestPath = decodeURIComponent(c.req.path);
    if (requestPath.startsWith('/api/') || requestPath.startsWith('/.well-known/')) return next();
    const file = path.resolve(root, `.${requestPath}`);
    if (file.startsWith(root + path.sep) && path.extname(file) && fs.existsSync(file) && fs.statSync(file).isFile()) {
      const immutable = requestPath.startsWith('/assets/');
      return c.body(fs.readFileSync(file), 200, {
        'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      });
    }
    // Another path is the API's 404, except for a browser, which gets the app's "not found" page (still a 404).
    const appPath = SPA_PATHS.test(requestPath);
    if (!appPath && !(c.req.header('accept') ?? '').includes('text/html')) return next();
    const index = path.join(root, 'index.html');
    if (!fs.existsSync(index)) return appPath ? c.text('The web app is not built: run `npm run build:web`.', 503) : next();
    return c.html(fs.readFileSync(index, 'utf8'), appPath ? 200 : 404, { 'Cache-Control': 'no-cache', 'X-Frame-Options': 'DENY' });
  });
}
