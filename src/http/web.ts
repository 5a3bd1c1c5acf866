import fs from 'node:fs';
import path from 'node:path';
import type { Context } from 'hono';
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
 * The built web app (web/dist) on the API's own port: files by path (hashed assets cached for a
 * year), index.html for the app's routes, and the app's "not found" page (a 404) for a browser asking
 * for any other page. It answers only what no route matched (the app's not-found handler calls it),
 * so it never shadows an API route or its 405. Without a build the app's paths answer 503.
 */
export function webApp(distDir: string): (c: Context<AppEnv>) => Response | null {
  const root = path.resolve(distDir);
  return (c) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return null;
    const requestPath = decodeURIComponent(c.req.path);
    if (requestPath.startsWith('/api/') || requestPath.startsWith('/.well-known/')) return null;
    const file = path.resolve(root, `.${requestPath}`);
    if (file.startsWith(root + path.sep) && path.extname(file) && fs.existsSync(file) && fs.statSync(file).isFile()) {
      const immutable = requestPath.startsWith('/assets/');
      return c.body(fs.readFileSync(file), 200, {
        'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      });
    }
    const appPath = SPA_PATHS.test(requestPath);
    if (!appPath && !(c.req.header('accept') ?? '').includes('text/html')) return null;
    const index = path.join(root, 'index.html');
    if (!fs.existsSync(index)) return appPath ? c.text('The web app is not built: run `npm run build:web`.', 503) : null;
    return c.html(fs.readFileSync(index, 'utf8'), appPath ? 200 : 404, { 'Cache-Control': 'no-cache', 'X-Frame-Options': 'DENY' });
  };
}
