// `npm start` (prestart): builds the web app only when its sources changed since the last build.
// `npm run build` always builds (scripts/build-web.ts --force).
import path from 'node:path';
import { buildReason, sourceHash, webSources, writeStamp } from './web-build-stamp.js';

const root = path.resolve(import.meta.dirname, '..');
const webDir = path.join(root, 'web');
const outDir = path.join(webDir, 'dist');
const hash = sourceHash(webSources(webDir, outDir, path.join(root, 'package-lock.json')), root);
const reason = process.argv.includes('--force') ? 'forced' : buildReason(outDir, hash);

if (reason) {
  console.log(`building the web app (${reason})`);
  const { build } = await import('vite'); // only when building: loading it is most of an up-to-date check's time
  await build({ root: webDir, logLevel: 'warn' });
  writeStamp(outDir, hash);
} else {
  console.log('the web app is up to date');
}
