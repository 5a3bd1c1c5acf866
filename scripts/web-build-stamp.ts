import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Written into the build output after a build: the hash of the sources it was built from. */
export const STAMP_FILE = '.source-hash';

/**
 * What a web build depends on: everything under `webDir` except its output, and the lock file
 * (a dependency upgrade changes the bundle). Sorted, so the hash does not depend on listing order.
 */
export function webSources(webDir: string, outDir: string, lockFile: string): string[] {
  const files: string[] = [lockFile];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (full === outDir || entry.name === 'node_modules') continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.push(full);
    }
  };
  walk(webDir);
  return files.sort();
}

/** Content hash of `files` (names included: a rename is a change). Missing files hash as absent. */
export function sourceHash(files: string[], root: string): string {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${path.relative(root, file)}\0`);
    hash.update(fs.existsSync(file) ? fs.readFileSync(file) : '(absent)');
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why a build is needed, or null when the output was built from exactly these sources. */
export function buildReason(outDir: string, hash: string): string | null {
  if (!fs.existsSync(path.join(outDir, 'index.html'))) return 'no build yet';
  const stampFile = path.join(outDir, STAMP_FILE);
  if (!fs.existsSync(stampFile)) return 'the build has no source stamp';
  return fs.readFileSync(stampFile, 'utf8').trim() === hash ? null : 'the web sources changed';
}

export function writeStamp(outDir: string, hash: string): void {
  fs.writeFileSync(path.join(outDir, STAMP_FILE), `${hash}\n`);
}
