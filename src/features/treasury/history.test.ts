import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import type { JobDefinition, JobRunner } from '../../jobs/runner.js';
import { createLogger } from '../../log.js';
import { TreasuryHistory } from './history.js';
import { defineTreasuryJobs } from './jobs.js';
import { TreasuryService } from './service.js';
import { utcDay } from '../employers/index.js';
import { recordSnapshot } from './store.js';
import { treasuryBalanceSnapshots } from './tables.js';

/**
 * The treasury balance history on the real app with embedded chains: the snapshot job, history
 * reads, and GET /api/employers/{id}/treasury/history.
 */
let t: TestApp;
let treasury: TreasuryService;

const USD = 1_000_000n;
const DAY_MS = 86_400_000;

interface Tenant {
  token: string;
  employerId: string;
  accountId: bigint;
}
let acme: Tenant;
let rival: Tenant;

async function tenant(sub: string, fundUsd: bigint): Promise<Tenant> {
  const token = await t.token(sub, `${sub}@history.example`);
  const created = await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc` } });
  const employerId = ((await created.json()) as { id: string }).id;
  const accountId = await treasury.accountId(employerId);
  const tempo = t.chains!.tempo;
  const minted = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: tempo.serviceAddress, amount: (fundUsd / USD).toString() } });
  expect(minted.status).toBe(200);
  await tempo.depositToTreasury(accountId, fundUsd);
  return { token, employerId, accountId };
}

const snapshotsOf = (employerId: string) =>
  t.database.db.select().from(treasuryBalanceSnapshots).where(eq(treasuryBalanceSnapshots.employerId, employerId));

/** The job as the runner would run it, without pg-boss: its definition, captured. */
function snapshotJob(history: TreasuryHistory): JobDefinition {
  const defined: JobDefinition[] = [];
  defineTreasuryJobs({ define: (definition: JobDefinition) => defined.push(definition) } as unknown as JobRunner, { history });
  return defined[0]!;
}
const jobContext = () => ({ jobId: randomUUID(), retryCount: 0, signal: new AbortController().signal, log: createLogger('silent') });

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  acme = await tenant('history-acme', 1000n * USD);
  rival = await tenant('history-rival', 400n * USD);
});
afterAll(async () => {
  await t.close();
});

describe('the treasury-balance-snapshots job', () => {
  it('writes one snapshot per employer and day when two instances run it at once', async () => {
    const job = snapshotJob(new TreasuryHistory({ treasury, employers: t.services.employers, database: t.database }));
    const other = snapshotJob(new TreasuryHistory({ treasury, employers: t.services.employers, database: t.database }));
    await Promise.all([job.handle({}, jobContext()), other.handle({}, jobContext()), job.handle({}, jobContext())]);
    const rows = await snapshotsOf(acme.employerId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ day: utcDay(new Date()), available: 1000n * USD, locked: 0n });
    expect(await snapshotsOf(rival.employerId)).toHaveLength(1);
  });

  it("refreshes the day's snapshot with a later reading, never with an earlier one", async () => {
    const [before] = await snapshotsOf(acme.employerId);
    await t.chains!.tempo.lockTreasury(acme.accountId, 100n * USD);
    await snapshotJob(t.services.onChain!.treasuryHistory).handle({}, jobContext());
    const [after] = await snapshotsOf(acme.employerId);
    expect(after).toMatchObject({ day: before!.day, available: 900n * USD, locked: 100n * USD });
    expect(after!.observedAt.getTime()).toBeGreaterThan(before!.observedAt.getTime());

    // A slow instance's older reading commits last: it does not replace the newer one.
    const stale = { employerId: acme.employerId, available: 1000n * USD, locked: 0n, observedAt: new Date(after!.observedAt.getTime() - 1000) };
    expect(await recordSnapshot(t.database.db, stale)).toBe(false);
    expect((await snapshotsOf(acme.employerId))[0]).toMatchObject({ available: 900n * USD, locked: 100n * USD });
  });

  it('leaves employers without a treasury account alone (they have no balance to chart)', async () => {
    const token = await t.token('history-no-account');
    const created = await t.request('POST', '/api/employers', { token, body: { name: 'No Account Inc' } });
    const { id } = (await created.json()) as { id: string };
    await snapshotJob(t.services.onChain!.treasuryHistory).handle({}, jobContext());
    expect(await snapshotsOf(id)).toHaveLength(0);
  });
});

describe('GET /api/employers/{id}/treasury/history', () => {
  const history = (who: Tenant, query = '', id = who.employerId) => t.request('GET', `/api/employers/${id}/treasury/history${query}`, { token: who.token });

  it('answers the observed days in the window, oldest first, and the first observed day', async () => {
    const now = Date.now();
    /** Noon (UTC) n days ago. */
    const daysAgo = (n: number) => new Date(new Date(now - n * DAY_MS).setUTCHours(12, 0, 0, 0));
    for (const [n, usd] of [[2, 300n], [5, 500n], [40, 200n]] as const) {
      await recordSnapshot(t.database.db, { employerId: rival.employerId, available: usd * USD, locked: 0n, observedAt: daysAgo(n) });
    }
    const body = (await (await history(rival, '?days=3')).json()) as { days: number; first_observed_day: string; points: { day: string; total_usd: string }[] };
    expect(body.days).toBe(3);
    expect(body.first_observed_day).toBe(utcDay(daysAgo(40)));
    // Yesterday was not observed: no point, nothing interpolated. Today is the balance read now.
    expect(body.points.map((p) => [p.day, p.total_usd])).toEqual([
      [utcDay(daysAgo(2)), '300.000000'],
      [utcDay(new Date()), '400.000000'],
    ]);

    const all = (await (await history(rival)).json()) as { days: number; points: { day: string; available_usd: string; locked_usd: string; observed_at: string }[] };
    expect(all.days).toBe(90);
    expect(all.points.map((p) => p.day)).toEqual([utcDay(daysAgo(40)), utcDay(daysAgo(5)), utcDay(daysAgo(2)), utcDay(new Date())]);
    expect(all.points[0]).toEqual({ day: utcDay(daysAgo(40)), available_usd: '200.000000', locked_usd: '0.000000', total_usd: '200.000000', observed_at: daysAgo(40).toISOString() });
  });

  it("answers today's live balance and stores nothing: a read has no side effect (only the job records)", async () => {
    const fresh = await tenant('history-fresh', 50n * USD);
    const body = (await (await history(fresh, '?days=1')).json()) as { first_observed_day: string; points: { total_usd: string }[] };
    expect(body.first_observed_day).toBe(utcDay(new Date()));
    expect(body.points).toEqual([expect.objectContaining({ total_usd: '50.000000' })]);
    const { rows } = await t.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM treasury_balance_snapshots WHERE employer_id = $1', [fresh.employerId]);
    expect(rows[0]!.n).toBe(0);
  });

  it('answers 400 naming days when it is not a whole number of days from 1 to 366', async () => {
    for (const query of ['?days=0', '?days=367', '?days=x', '?days=1.5']) {
      const response = await history(acme, query);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ field: 'days' });
    }
    expect((await history(acme, '?days=366')).status).toBe(200);
  });

  it("answers 404 for another tenant's employer, as for a missing one, and 401 without a token", async () => {
    const before = await snapshotsOf(rival.employerId);
    for (const id of [rival.employerId, randomUUID()]) {
      const response = await history(acme, '', id);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'Employer not found.', code: 'NOT_FOUND' });
    }
    expect(await snapshotsOf(rival.employerId)).toEqual(before);
    expect((await t.request('GET', `/api/employers/${acme.employerId}/treasury/history`)).status).toBe(401);
  });
});
