import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { ServiceClock } from '../clock/clock.js';
import type { Logger } from '../log.js';
import { lockDataDir } from './datadir-lock.js';

/**
 * A query handle: the pool outside a transaction, or one connection inside it. Stores take it as
 * their first argument so a caller inside a transaction always passes the transaction's handle.
 */
export type Db = NodePgDatabase;

/** A unique-constraint violation, as node-postgres reports it (drizzle wraps it in `cause`). */
export const isUniqueViolation = (error: unknown): boolean =>
  [(error as { code?: string }).code, (error as { cause?: { code?: string } }).cause?.code].includes('23505');

/**
 * No connection within `connectTimeoutMs`: every pooled one was busy (pg-pool's wait), or the server
 * did not answer a new one (pg's connect). Nothing reached the database. Drizzle wraps it in `cause`.
 */
export function isConnectionTimeout(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (/^timeout exceeded when trying to connect$|^Connection terminated due to connection timeout$/.test(current.message)) return true;
  }
  return false;
}

/** One open transaction: drizzle over its connection, and raw SQL for libraries (pg-boss). */
export interface Tx {
  db: Db;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

export interface Database {
  engine: 'pglite' | 'postgres';
  /**
   * Pool-level handle, for work that needs no transaction. Never use it while a transaction is
   * open in the same flow: on PGlite the query would wait for that transaction forever.
   */
  db: Db;
  pool: pg.Pool;
  /** How other clients (pg-boss) connect to the same database. */
  connection: pg.PoolConfig;
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The service's time, kept with the data: the same time SQL reads as `clock_now()`. */
  clock: ServiceClock;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent, embedded PGlite is used. */
  url?: string | undefined;
  /** PGlite files live under `<dataDir>/pglite`; null keeps PGlite in memory (tests). */
  dataDir: string | null;
  poolMax?: number;
  /** How long opening one connection may take. Default 5 s. */
  connectTimeoutMs?: number;
  /** Where errors of idle connections are reported; without it they are dropped (tests, tools). */
  log?: Logger;
}

// A query that waits this long is stuck (on PGlite: behind a transaction that never ends).
// Failing loudly beats hanging a request forever.
const QUERY_TIMEOUT_MS = 30_000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const pool = { max: options.poolMax ?? 10, connectTimeoutMs: options.connectTimeoutMs ?? 5_000, log: options.log };
  if (options.url) {
    // connectionTimeoutMillis travels with the connection, so pg-boss's pool gets the same bound.
    const connection: pg.PoolConfig = { connectionString: options.url, connectionTimeoutMillis: pool.connectTimeoutMs };
    return wrapPool('postgres', connection, pool, async () => {});
  }
  return openPglite(options.dataDir, pool);
}

async function openPglite(dataDir: string | null, poolOptions: PoolOptions): Promise<Database> {
  const release = dataDir ? lockDataDir(dataDir) : () => {};
  // The socket lives in a private directory: PGlite's server accepts any credentials.
  const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgl-'));
  fs.chmodSync(socketDir, 0o700);
  const worker = startWorker(dataDir ? path.join(dataDir, 'pglite') : null, path.join(socketDir, '.s.PGSQL.5432'));
  try {
    await waitFor(worker, 'ready');
  } catch (error) {
    release();
    throw error;
  }
  const connection: pg.PoolConfig = {
    host: socketDir,
    port: 5432,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: poolOptions.connectTimeoutMs,
  };
  return wrapPool('pglite', connection, poolOptions, async () => {
    worker.postMessage({ type: 'close' });
    await waitFor(worker, 'closed').catch(() => {});
    await worker.terminate();
    fs.rmSync(socketDir, { recursive: true, force: true });
    release();
  });
}

function startWorker(dataDir: string | null, socketPath: string): Worker {
  const workerData = { dataDir, socketPath };
  const compiled = new URL('./pglite-worker.js', import.meta.url);
  if (fs.existsSync(compiled)) return new Worker(compiled, { workerData });
  // Running from TypeScript sources (npm start, tests): the worker registers tsx, then loads them.
  const source = new URL('./pglite-worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

function waitFor(worker: Worker, type: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type === type) {
        cleanup();
        resolve();
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`PGlite worker exited with code ${code}`));
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

interface PoolOptions {
  max: number;
  connectTimeoutMs: number;
  log: Logger | undefined;
}

function wrapPool(
  engine: Database['engine'],
  connection: pg.PoolConfig,
  options: PoolOptions,
  closeEngine: () => Promise<void>,
): Database {
  const pool = new pg.Pool({ ...connection, max: options.max, query_timeout: QUERY_TIMEOUT_MS });
  // An idle client's connection dropping must not crash the process (the pool replaces it), but an
  // operator must see it: a restarted or failed-over server shows up here first.
  pool.on('error', (error) => options.log?.error({ err: error, engine }, 'database connection lost (idle client)'));
  const db = drizzle({ client: pool });
  const clock = new ServiceClock();
  return {
    engine,
    db,
    pool,
    connection,
    clock,
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work({
          db: drizzle({ client }),
          query: (text, values) => client.query(text, values),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError; // do not hand a connection in an unknown state back to the pool
        });
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async close() {
      clock.stop();
      await pool.end();
      await closeEngine();
    },
  };
}
