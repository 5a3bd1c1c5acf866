import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildReason, sourceHash, webSources, writeStamp } from '../scripts/web-build-stamp.js';

/** `npm start` builds the web app only when its sources changed (scripts/build-web.ts). */
describe('web build stamp', () => {
  let root: string;
  let webDir: string;
  let outDir: string;
  let lockFile: string;
  const hash = () => sourceHash(webSources(webDir, outDir, lockFile), root);
  const built = () => {
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, 'index.html'), '<html></html>');
    writeStamp(outDir, hash());
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'web-stamp-'));
    webDir = path.join(root, 'web');
    outDir = path.join(webDir, 'dist');
    lockFile = path.join(root, 'package-lock.json');
    fs.mkdirSync(path.join(webDir, 'src'), { recursive: true });
    fs.writeFileSync(path.join(webDir, 'index.html'), '<div id="root"></div>');
    fs.writeFileSync(path.join(webDir, 'vite.config.ts'), 'export default {}');
    fs.writeFileSync(path.join(webDir, 'src', 'App.tsx'), 'export const App = () => null;');
    fs.writeFileSync(lockFile, '{"lockfileVersion":3}');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('builds when there is no build, or a build without a stamp', () => {
    expect(buildReason(outDir, hash())).toBe('no build yet');
    fs.mkdirSync(outDir);
    fs.writeFileSync(path.join(outDir, 'index.html'), '<html></html>');
    expect(buildReason(outDir, hash())).toBe('the build has no source stamp');
  });

  it('skips the build when nothing changed, and its own output does not count as a change', () => {
    built();
    fs.mkdirSync(path.join(outDir, 'assets'));
    fs.writeFileSync(path.join(outDir, 'assets', 'index-abc.js'), 'console.log(1)');
    expect(buildReason(outDir, hash())).toBeNull();
  });

  it.each([
    ['a source file edited', () => fs.appendFileSync(path.join(webDir, 'src', 'App.tsx'), '\n// edited')],
    ['a source file added', () => fs.writeFileSync(path.join(webDir, 'src', 'New.tsx'), 'export {}')],
    ['a source file renamed', () => fs.renameSync(path.join(webDir, 'src', 'App.tsx'), path.join(webDir, 'src', 'Main.tsx'))],
    ['the vite config edited', () => fs.appendFileSync(path.join(webDir, 'vite.config.ts'), '\n')],
    ['the lock file changed', () => fs.writeFileSync(lockFile, '{"lockfileVersion":3,"packages":{}}')],
  ])('builds again after %s', (_what, change) => {
    built();
    change();
    expect(buildReason(outDir, hash())).toBe('the web sources changed');
  });

  it('ignores modification times: touching a file without changing it is no change', () => {
    built();
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(webDir, 'src', 'App.tsx'), later, later);
    expect(buildReason(outDir, hash())).toBeNull();
  });
});
