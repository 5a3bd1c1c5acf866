import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../test/support/database.js';
import type { Database } from '../db/client.js';
import { MAX_ADVANCE_SECONDS, ServiceClock, startServiceClock } from './clock.js';

let database: Database;
let close: () => Promise<void>;
const quiet = { info: () => {}, warn: () => {} };

beforeAll(async () => {
  ({ database, close } = await openTestDatabase());
});
afterAll(async () => {
  database.clock.stop();
  await close();
});

/** How far SQL's clock_now() is ahead of the real now(), in seconds. */
async function sqlOffset(): Promise<number> {
  const { rows } = await database.db.execute<{ ahead: string }>(sql`SELECT extract(epoch FROM clock_now() - now()) AS ahead`);
  return Number(rows[0]!.ahead);
}

/** Rewrites clock_now() as an advance would, to any offset (a test's stand-in for an older read). */
const setStoredOffset = (seconds: number) =>
  database.db.execute(sql.raw(`CREATE OR REPLACE FUNCTION clock_now() RETURNS timestamptz LANGUAGE sql STABLE AS $$ SELECT now() + interval '${seconds} seconds' $$`));

/** How far the TypeScript clock is ahead of the real time, in whole seconds. */
const jsOffset = (clock: ServiceClock) => Math.round((clock.nowMs() - Date.now()) / 1000);

// The tests run in order on one database: the clock never goes back.
describe('the service clock', () => {
  it('runs at the real time until advanced, in TypeScript and in SQL', async () => {
    expect(await database.clock.sync(database.db)).toBe(0);
    expect(jsOffset(database.clock)).toBe(0);
    expect(await sqlOffset()).toBe(0);
  });

  it('an advance moves TypeScript and SQL time together, and advances add up', async () => {
    expect(await database.clock.advance(database.db, 7200)).toBe(7200);
    expect(jsOffset(database.clock)).toBe(7200);
    expect(await sqlOffset()).toBe(7200);
    expect(database.clock.nowSeconds()).toBe(Math.floor(database.clock.nowMs() / 1000));
    expect(await database.clock.advance(database.db, 60)).toBe(7260);
    expect(await sqlOffset()).toBe(7260);
  });

  it('SQL reads the offset from the body of clock_now(), which the planner inlines like now()', async () => {
    const { rows } = await database.db.execute<{ 'QUERY PLAN': string }>(sql`EXPLAIN (VERBOSE, COSTS OFF) SELECT clock_now()`);
    expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/now\(\) \+ '02:01:00'::interval/);
  });

  it('refuses to go back, to stand still, a fraction or more than the maximum; nothing moves', async () => {
    for (const seconds of [0, -1, 1.5, MAX_ADVANCE_SECONDS + 1, Number.NaN]) {
      await expect(database.clock.advance(database.db, seconds)).rejects.toThrow(RangeError);
    }
    expect(await database.clock.sync(database.db)).toBe(7260);
    expect(await sqlOffset()).toBe(7260);
  });

  it('two instances advancing at once both count; each sees the other after a sync', async () => {
    const other = new ServiceClock();
    await Promise.all([database.clock.advance(database.db, 300), other.advance(database.db, 500)]);
    expect(await database.clock.sync(database.db)).toBe(8060);
    expect(await other.sync(database.db)).toBe(8060);
  });

  it('a read older than what this process already saw never takes it back', async () => {
    const ahead = new ServiceClock();
    await ahead.advance(database.db, 40); // 8100 in the database and here
    await setStoredOffset(8060); // what a read racing the advance returns
    expect(await ahead.sync(database.db)).toBe(8100);
    await setStoredOffset(8100);
  });

  it('column defaults stamp rows with the service time, never the real now()', async () => {
    const { rows } = await database.db.execute<{ table_name: string; column_name: string }>(sql`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
        AND column_default ILIKE '%now()%' AND column_default NOT ILIKE '%clock_now()%'`);
    expect(rows).toEqual([]);
    const { rows: stamped } = await database.db.execute<{ ahead: string }>(sql`
      WITH inserted AS (INSERT INTO users (id) VALUES (gen_random_uuid()::text) RETURNING created_at)
      SELECT extract(epoch FROM created_at - now()) AS ahead FROM inserted`);
    expect(Math.round(Number(stamped[0]!.ahead))).toBe(8100);
  });
});

describe('at start-up', () => {
  it('live mode refuses a database whose clock was advanced', async () => {
    await expect(startServiceClock('live', database, quiet)).rejects.toThrow(/advanced by 8100 s/);
  });

  it('local mode follows the advances another instance makes', async () => {
    const follower = new ServiceClock();
    await startServiceClock('local', { ...database, clock: follower }, quiet);
    expect(follower.offsetSeconds).toBe(8100);
    await database.clock.advance(database.db, 100);
    await expect.poll(() => follower.offsetSeconds, { timeout: 5_000 }).toBe(8200);
    follower.stop();
  });
});
