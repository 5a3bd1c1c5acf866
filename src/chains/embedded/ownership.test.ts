import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../../test/support/database.js';
import { openDatabase, type Database } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { openEmbeddedChains } from './index.js';
import { ChainJournalTakenError } from './ownership.js';

// On PGlite the data directory's lock keeps a second process out (datadir-lock.ts); this is the
// PostgreSQL case, where two instances can reach one database.
describe.runIf(process.env.TEST_DATABASE_URL)('embedded chains on a PostgreSQL database another instance runs', () => {
  let target: TestDatabaseTarget;
  const databases: Database[] = [];
  const instance = async () => {
    const database = await openDatabase({ url: target.url, dataDir: null });
    databases.push(database);
    return database;
  };

  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    await migrate(await instance());
  });
  afterAll(async () => {
    for (const database of databases) await database.close();
    await target.drop();
  });

  it('refuses to start, writing nothing, while the first instance runs; starts once it stopped', async () => {
    const [first] = databases;
    const running = await openEmbeddedChains(first!, { virtualMasterZeroBytes: 1 });
    const journal = async () => (await first!.pool.query('SELECT count(*)::int AS n FROM embedded_chain_journal')).rows[0].n as number;
    const entries = await journal();
    expect(entries).toBeGreaterThan(0);

    const second = await instance();
    await expect(openEmbeddedChains(second, { virtualMasterZeroBytes: 1 })).rejects.toBeInstanceOf(ChainJournalTakenError);
    await expect(openEmbeddedChains(second, { virtualMasterZeroBytes: 1 })).rejects.toThrow(/npm run devnet/);
    expect(await journal()).toBe(entries);

    await running.close();
    const next = await openEmbeddedChains(second, { virtualMasterZeroBytes: 1 });
    expect(await next.tempo.connection.publicClient.getBlockNumber()).toBeGreaterThan(0n);
    await next.close();
  });

  it('reports a lost claim (its connection cut) to the caller, and says nothing after a release', async () => {
    const [first] = databases;
    const lost: Error[] = [];
    const running = await openEmbeddedChains(first!, { virtualMasterZeroBytes: 1, onJournalLost: (error) => lost.push(error) });
    const { rows } = await first!.pool.query<{ n: number }>(
      `SELECT pg_terminate_backend(pid)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 4217845302 AND granted`,
    );
    expect(rows[0]?.n).toBe(1);
    await expect.poll(() => lost.length).toBe(1);
    expect(lost[0]!.message).toMatch(/chain journal/);
    await running.close();

    const again = await openEmbeddedChains(first!, { virtualMasterZeroBytes: 1, onJournalLost: (error) => lost.push(error) });
    await again.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lost).toHaveLength(1);
  });
});
