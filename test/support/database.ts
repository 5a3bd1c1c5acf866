import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';

/**
 * Where a test file's database lives. With TEST_DATABASE_URL (a PostgreSQL server), each call
 * creates a fresh database on it and drops it afterwards; without, PGlite runs in memory.
 */
export interface TestDatabaseTarget {
  url: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabaseTarget(): Promise<TestDatabaseTarget> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return { url: undefined, drop: async () => {} };
  return createScratchDatabase(serverUrl);
}

/** A fresh, migrated database for one test file; `close` closes it and drops it. */
export async function openTestDatabase(): Promise<{ database: Database; close(): Promise<void> }> {
  const target = await createTestDatabaseTarget();
  const database = await openDatabase({ url: target.url, dataDir: null });
  await migrate(database);
  return {
    database,
    async close() {
      await database.close();
      await target.drop();
    },
  };
}

/** A new, empty database on a PostgreSQL server, and a way to drop it. */
export async function createScratchDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

async function withClient(url: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
