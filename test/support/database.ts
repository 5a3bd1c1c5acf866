import { randomBytes } from 'node:crypto';
import pg from 'pg';

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
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
