import { Hono } from 'hono';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../test/support/database.js';
import { openDatabase, type Database } from '../db/client.js';
import { createLogger } from '../log.js';
import type { AppEnv } from './context.js';
import { handleError } from './errors.js';

/** A request that cannot get a database connection in time is told to come back, not that we broke. */
let target: TestDatabaseTarget;
let database: Database;
beforeAll(async () => {
  target = await createTestDatabaseTarget();
  database = await openDatabase({ url: target.url, dataDir: null, poolMax: 1, connectTimeoutMs: 200 });
});
afterAll(async () => {
  await database.close();
  await target.drop();
});

describe('a database with no free connection', () => {
  it('answers 503 DATABASE_BUSY with Retry-After, and serves again once a connection is free', async () => {
    const app = new Hono<AppEnv>();
    app.use('*', async (c, next) => {
      c.set('log', createLogger('silent'));
      await next();
    });
    app.get('/read', async (c) => c.json((await database.db.execute(sql`SELECT 1 AS one`)).rows[0]));
    app.onError(handleError);

    const held = await database.pool.connect();
    const busy = await app.request('/read');
    expect({ status: busy.status, retryAfter: busy.headers.get('retry-after'), code: ((await busy.json()) as { code: string }).code }).toEqual({
      status: 503,
      retryAfter: '1',
      code: 'DATABASE_BUSY',
    });
    held.release();
    const served = await app.request('/read');
    expect(served.status).toBe(200);
  });
});
