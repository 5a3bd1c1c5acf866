import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the server under test answers, e.g. http://127.0.0.1:41234 (no trailing slash). */
    webBaseUrl: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_DIR = path.join(ROOT, 'test-results', 'web');
const READY_TIMEOUT_MS = 120_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Signals the server's whole process group (npx -> tsx -> node). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Builds the SPA once and starts the server the way `npm start` does, on a free port with a fresh
 * DATA_DIR (embedded PGlite and chains, seeded demo tenant). `WEB_BASE_URL` skips both and tests a
 * server that is already running (the flows use unique names, so they can run again and again).
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Screenshots of this run only.
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const external = process.env.WEB_BASE_URL?.trim();
  if (external) {
    project.provide('webBaseUrl', external.replace(/\/+$/, ''));
    return undefined;
  }

  const started = Date.now();
  if (process.env.WEB_SKIP_BUILD !== '1') {
    const build = spawnSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`npm run build:web failed (exit ${build.status})`);
  }

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'web-e2e-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    APP_MODE: 'local',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: baseUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    JOBS_ENABLED: 'true',
    VIRTUAL_MASTER_ZERO_BYTES: '1',
    // Two people per payroll transaction: the payroll flows pay their runs in several batches.
    PAYROLL_BATCH_MAX_RECIPIENTS: '2',
  };
  // Embedded PGlite under DATA_DIR, whatever the calling shell points at.
  delete env.DATABASE_URL;
  delete env.NODE_ENV;

  const log = createWriteStream(path.join(RESULTS_DIR, 'server.log'));
  const server = spawn('npx', ['tsx', 'src/main.ts'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout?.pipe(log);
  server.stderr?.pipe(log);
  let exitNote: string | null = null;
  server.once('exit', (code, signal) => {
    exitNote = `server exited (code ${code}, signal ${signal}); see test-results/web/server.log`;
  });

  const teardown = async () => {
    signalGroup(server, 'SIGTERM');
    await Promise.race([exited(server), sleep(15_000)]);
    signalGroup(server, 'SIGKILL');
    await Promise.race([exited(server), sleep(5_000)]);
    log.end();
    if (process.env.WEB_KEEP_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exitNote) {
      await teardown();
      throw new Error(exitNote);
    }
    const ok = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await teardown();
      throw new Error(`server did not answer /healthz within ${READY_TIMEOUT_MS / 1000} s; see test-results/web/server.log`);
    }
    await sleep(250);
  }
  console.log(`[web] server ready at ${baseUrl} after ${((Date.now() - started) / 1000).toFixed(1)} s (build included), DATA_DIR ${dataDir}`);
  project.provide('webBaseUrl', baseUrl);
  return teardown;
}
