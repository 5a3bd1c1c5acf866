import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/support/database.js';
import { claimDueWrites, insertPendingWrite, markAttemptFailed } from './store.js';
import { reputationWrites } from './tables.js';

/** A write's next attempt is due by the service clock (its own database: the clock never goes back). */
let t: Awaited<ReturnType<typeof openTestDatabase>>;

beforeAll(async () => {
  t = await openTestDatabase();
});

afterAll(async () => {
  await t?.close();
});

describe('reputation writes on the service clock', () => {
  it('a write retried in an hour is claimed once the service clock is an hour on, and its lease runs from that time', async () => {
    const db = t.database.db;
    await insertPendingWrite(db, { kind: 'attestation', writeType: 'payment', subject: 'clock-subject', sourceType: 'payment', sourceId: 'clock-source', amount: 1n });
    const [claimed] = await claimDueWrites(db, 10, 60);
    expect(claimed).toMatchObject({ sourceId: 'clock-source', attempts: 1 });
    await markAttemptFailed(db, claimed!.id, 1, 'the chain was away', { giveUp: false, delaySeconds: 3600 });
    expect(await claimDueWrites(db, 10, 60)).toEqual([]);

    await t.database.clock.advance(t.database.db, 3601);
    const [again] = await claimDueWrites(db, 10, 60);
    expect(again).toMatchObject({ id: claimed!.id, attempts: 2 });
    const [row] = await db.select().from(reputationWrites).where(eq(reputationWrites.id, claimed!.id));
    const leaseLeft = (row!.nextAttemptAt.getTime() - t.database.clock.nowMs()) / 1000;
    expect(leaseLeft).toBeGreaterThan(50);
    expect(leaseLeft).toBeLessThanOrEqual(60);
  });
});
