import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openDatabase, type Database } from './client.js';

// The embedded engine's own guarantees; these run on PGlite whatever TEST_DATABASE_URL says.
describe('PGlite behind the wire server', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: null, poolMax: 20 });
    await database.pool.query('CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)');
    await database.pool.query('INSERT INTO counter VALUES (1, 0)');
  });
  afterAll(() => database.close());

  it('keeps concurrent parameterised queries from different connections apart', async () => {
    // Per-message scheduling interleaves Parse/Bind/Execute of two connections in PGlite's one
    // session (`portal "" does not exist`, or one query's rows answering another).
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => database.pool.query('SELECT $1::int AS i, repeat($2, $1::int) AS s', [i, 'x'])),
    );
    results.forEach((result, i) => expect(result.rows[0]).toEqual({ i, s: 'x'.repeat(i) }));
  });

  it('answers the next query after a parameterised query with a large result', async () => {
    const single = await openDatabase({ dataDir: null, poolMax: 1 });
    try {
      await single.pool.query('CREATE TABLE blob (id int PRIMARY KEY, state bytea)');
      await single.pool.query('INSERT INTO blob VALUES (1, $1)', [Buffer.alloc(1_400_000, 7)]);
      const big = await single.pool.query('SELECT state FROM blob WHERE id = $1', [1]);
      expect(big.rows[0]?.state.length).toBe(1_400_000);
      const next = await single.pool.query('SELECT $1::int AS n', [42]);
      expect(next.rows[0]).toEqual({ n: 42 });
    } finally {
      await single.close();
    }
  });

  it('sends a many-row result intact while the socket is backed up', async () => {
    // PGlite hands out views of its heap; queued by reference on a busy socket, later rows
    // overwrote earlier ones in flight and the client read garbage lengths.
    const single = await openDatabase({ dataDir: null, poolMax: 1 });
    try {
      await single.pool.query('CREATE TABLE journal (id int PRIMARY KEY, payload text NOT NULL)');
      const payload = (i: number) => `${i}:`.padEnd(600, String.fromCharCode(97 + (i % 26)));
      for (let i = 0; i < 600; i += 100) {
        const ids = Array.from({ length: 100 }, (_, k) => i + k);
        await single.pool.query('INSERT INTO journal SELECT * FROM unnest($1::int[], $2::text[])', [ids, ids.map(payload)]);
      }
      for (let round = 0; round < 3; round++) {
        const { rows } = await single.pool.query<{ id: number; payload: string }>('SELECT id, payload FROM journal ORDER BY id');
        expect(rows).toHaveLength(600);
        rows.forEach((row, i) => expect(row).toEqual({ id: i, payload: payload(i) }));
      }
    } finally {
      await single.close();
    }
  });

  it('runs one transaction at a time: 20 concurrent read-modify-writes lose nothing', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        database.transaction(async (tx) => {
          const { rows } = await tx.query('SELECT n FROM counter WHERE id = 1 FOR UPDATE');
          await new Promise((resolve) => setTimeout(resolve, 2)); // let other connections try to cut in
          await tx.query('UPDATE counter SET n = $1 WHERE id = 1', [Number(rows[0]?.n) + 1]);
        }),
      ),
    );
    const { rows } = await database.pool.query('SELECT n FROM counter WHERE id = 1');
    expect(rows[0]?.n).toBe(20);
  });

  it('rolls back the transaction of a connection that drops, and keeps serving others', async () => {
    const client = new pg.Client(database.connection);
    client.on('error', () => {}); // it is about to be cut off on purpose
    await client.connect();
    await client.query('BEGIN');
    await client.query('UPDATE counter SET n = -1 WHERE id = 1');
    // The next query from another connection waits for this transaction...
    const waiting = database.pool.query('SELECT n FROM counter WHERE id = 1');
    // ...which ends when its connection goes away without COMMIT.
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const { rows } = await waiting;
    expect(rows[0]?.n).toBe(20);
  });

  it('rolls back and keeps serving when a connection drops while its opening unit runs', async () => {
    const before = (await database.pool.query('SELECT n FROM counter WHERE id = 1')).rows[0]?.n;
    const client = new pg.Client(database.connection);
    client.on('error', () => {});
    await client.connect();
    // One simple-query unit that opens a transaction and is still running when the socket goes;
    // the drop is handled once the unit ends (PGlite runs it synchronously in its thread).
    const running = client.query('BEGIN; UPDATE counter SET n = -2 WHERE id = 1; SELECT pg_sleep(0.3)').catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await running;
    const { rows } = await database.pool.query('SELECT n FROM counter WHERE id = 1');
    expect(rows[0]?.n).toBe(before);
  });
});
