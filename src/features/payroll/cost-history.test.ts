import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { fillMonths, monthStart } from './cost-history.js';
import * as store from './store.js';

/**
 * GET /api/employers/{id}/payroll/cost-history: what confirmed runs paid per UTC month. Runs are
 * written through the store and moved to their final state directly, so their months are chosen.
 */
let t: TestApp;
let owner: { token: string; employerId: string; staff: string[] };
let rival: { token: string; employerId: string; staff: string[] };

const USD = 1_000_000n;
const month = (monthsBack: number) => monthStart(new Date(), monthsBack).toISOString().slice(0, 7);

async function employer(sub: string) {
  const token = await t.token(sub, `${sub}@costs.example`);
  const { id } = (await (await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc` } })).json()) as { id: string };
  const staff: string[] = [];
  for (const name of ['Ada', 'Grace']) {
    const body = { email: `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@costs.example`, full_name: name, wallet_address: privateKeyToAccount(generatePrivateKey()).address };
    const response = await t.request('POST', `/api/employers/${id}/team`, { token, body });
    expect(response.status).toBe(201);
    staff.push(((await response.json()) as { id: string }).id);
  }
  return { token, employerId: id, staff };
}

/**
 * A run of the employer paying each employee `usd`, left in `status` and finalized at `at`;
 * `failedItem` marks the last item failed (it paid nothing).
 */
async function run(who: typeof owner, usd: bigint[], status: 'confirmed' | 'failed' | 'draft', at: Date, failedItem = false) {
  const id = randomUUID();
  const items = usd.map((amount, i) => ({
    employeeId: who.staff[i]!,
    chain: 'tempo' as const,
    walletAddress: privateKeyToAccount(generatePrivateKey()).address,
    amount: amount * USD,
    memo: null,
    status: 'pending' as const,
    reason: null,
  }));
  const total = items.reduce((sum, item) => sum + item.amount, 0n);
  await store.insertRun(t.database.db, { id, employerId: who.employerId, totalAmount: total, payPeriodStart: null, payPeriodEnd: null, createdBy: null }, items);
  if (status === 'draft') return;
  const itemStatus = status === 'confirmed' ? 'paid' : 'failed';
  await t.database.db.execute(sql`UPDATE payroll_runs SET status = ${status}, finalized_at = ${at.toISOString()} WHERE id = ${id}`);
  await t.database.db.execute(sql`UPDATE payment_items SET status = ${itemStatus}, finalized_at = ${at.toISOString()} WHERE run_id = ${id}`);
  if (failedItem) await t.database.db.execute(sql`UPDATE payment_items SET status = 'failed' WHERE run_id = ${id} AND employee_id = ${who.staff[usd.length - 1]!}`);
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  owner = await employer('costs-owner');
  rival = await employer('costs-rival');
  const now = new Date();
  const lastMonth = monthStart(now, 1);
  // Last month: two runs, one of whose items failed; and its very last second (still last month in UTC).
  await run(owner, [1000n, 2000n], 'confirmed', new Date(lastMonth.getTime() + 86_400_000));
  await run(owner, [500n, 700n], 'confirmed', new Date(monthStart(now, 0).getTime() - 1000), true);
  // This month: one run; a failed run and a draft pay nothing.
  await run(owner, [300n], 'confirmed', new Date(monthStart(now, 0).getTime() + 1000));
  await run(owner, [9000n, 9000n], 'failed', new Date(monthStart(now, 0).getTime() + 2000));
  await run(owner, [8000n], 'draft', now);
  // Thirteen months ago: outside a 12-month window, inside a 14-month one.
  await run(owner, [100n, 100n], 'confirmed', new Date(monthStart(now, 13).getTime() + 5000));
  // Another employer's run is never counted.
  await run(rival, [4242n], 'confirmed', new Date(lastMonth.getTime() + 5000));
});
afterAll(async () => {
  await t.close();
});

const costs = (who: typeof owner, query = '', id = who.employerId) => t.request('GET', `/api/employers/${id}/payroll/cost-history${query}`, { token: who.token });

describe('GET /api/employers/{id}/payroll/cost-history', () => {
  it('answers the last 12 UTC months, oldest first, with what confirmed runs paid and zeros elsewhere', async () => {
    const response = await costs(owner);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { employer_id: string; months: { month: string; paid_usd: string; runs: number; recipients: number }[] };
    expect(body.employer_id).toBe(owner.employerId);
    expect(body.months.map((m) => m.month)).toEqual(Array.from({ length: 12 }, (_, i) => month(11 - i)));
    // 1000 + 2000 + 500 (the 700 item failed); two runs, two distinct people.
    expect(body.months[10]).toEqual({ month: month(1), paid_usd: '3500.000000', runs: 2, recipients: 2 });
    expect(body.months[11]).toEqual({ month: month(0), paid_usd: '300.000000', runs: 1, recipients: 1 });
    expect(body.months.slice(0, 10).every((m) => m.paid_usd === '0.000000' && m.runs === 0 && m.recipients === 0)).toBe(true);
  });

  it('reaches as far back as asked (months=14 includes the run 13 months ago)', async () => {
    const body = (await (await costs(owner, '?months=14')).json()) as { months: { month: string; paid_usd: string }[] };
    expect(body.months).toHaveLength(14);
    expect(body.months[0]).toMatchObject({ month: month(13), paid_usd: '200.000000' });
    const one = (await (await costs(owner, '?months=1')).json()) as { months: { month: string; paid_usd: string }[] };
    expect(one.months).toEqual([{ month: month(0), paid_usd: '300.000000', runs: 1, recipients: 1 }]);
  });

  it('answers 400 naming months when it is not a whole number from 1 to 36', async () => {
    for (const query of ['?months=0', '?months=37', '?months=x', '?months=2.5']) {
      const response = await costs(owner, query);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ field: 'months' });
    }
    expect((await costs(owner, '?months=36')).status).toBe(200);
  });

  it("answers 404 for another tenant's employer, as for a missing one, and 401 without a token", async () => {
    for (const id of [rival.employerId, randomUUID()]) {
      const response = await costs(owner, '', id);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'Employer not found.', code: 'NOT_FOUND' });
    }
    expect((await t.request('GET', `/api/employers/${owner.employerId}/payroll/cost-history`)).status).toBe(401);
  });
});

describe('fillMonths', () => {
  it('counts calendar months in UTC across a year end', () => {
    const now = new Date('2027-01-31T23:59:59Z');
    const filled = fillMonths(now, 3, [{ month: '2026-12', paid: 5n, runs: 1, recipients: 1 }]);
    expect(filled.map((m) => [m.month, m.paid])).toEqual([
      ['2026-11', 0n],
      ['2026-12', 5n],
      ['2027-01', 0n],
    ]);
  });
});
