import { randomBytes, randomUUID } from 'node:crypto';
import { eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { emailOutbox } from '../email/tables.js';
import { payrollRuns } from '../payroll/tables.js';
import { confirmRun, failRun } from '../payroll/settlement.js';
import * as payrollStore from '../payroll/store.js';
import { agentSpikeDetected } from './service.js';

/** The employer's bell and the payroll receipts a settled run sends. */
let t: TestApp;
let owner: string;
let employerId: string;
let staff: { id: string; email: string; wallet: string }[];

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
const wallet = () => `0x${randomBytes(20).toString('hex')}`;

async function submittedRun(items: { id: string; wallet: string }[]): Promise<{ runId: string; txHash: string }> {
  const runId = randomUUID();
  const rows = items.map((i) => ({ employeeId: i.id, chain: 'tempo' as const, walletAddress: i.wallet, amount: 1_500_000_000n, memo: null, status: 'pending' as const, reason: null }));
  await payrollStore.insertRun(t.database.db, { id: runId, employerId, totalAmount: 3_000_000_000n, payPeriodStart: null, payPeriodEnd: null, createdBy: null }, rows);
  const txHash = `0x${randomBytes(32).toString('hex')}`;
  await payrollStore.claimDraft(t.database.db, runId, { submittedBy: 'owner', txHash });
  return { runId, txHash };
}

interface Listing {
  notifications: { id: string; type: string; severity: string; title: string; link: string | null; read: boolean; data: Record<string, unknown> }[];
  unread_count: number;
  next_cursor: string | null;
}
const list = async (query = '', token = owner, id = employerId) => t.request('GET', `/api/employers/${id}/notifications${query}`, { token });

beforeAll(async () => {
  t = await startTestApp();
  owner = await t.token('bell-owner', 'owner@bell.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Bell Co' } }))).id;
  staff = [];
  for (const name of ['Ada', 'Grace']) {
    const email = `${name.toLowerCase()}@bell.example`;
    const body = { email, full_name: `${name} Bell`, wallet_address: wallet() };
    const response = await t.request('POST', `/api/employers/${employerId}/team`, { token: owner, body });
    staff.push({ id: (await json<{ id: string }>(response)).id, email, wallet: body.wallet_address });
  }
});

afterAll(async () => {
  await t?.close();
});

describe('payroll settlement effects', () => {
  it('rings the bell once and queues one receipt per paid employee, however often settlement repeats', async () => {
    const { runId, txHash } = await submittedRun(staff);
    expect(await t.database.transaction((tx) => confirmRun(tx.db, runId, { txHash, blockNumber: 7n }))).toBe(true);
    // A retried job finds the run settled: nothing happens again.
    expect(await t.database.transaction((tx) => confirmRun(tx.db, runId, { txHash, blockNumber: 7n }))).toBe(false);
    // Even a run forced back through settlement (the worst case) sends nobody a second email.
    await t.database.db.update(payrollRuns).set({ status: 'submitted' }).where(eq(payrollRuns.id, runId));
    await t.database.transaction((tx) => confirmRun(tx.db, runId, { txHash, blockNumber: 7n }));

    const emails = await t.database.db.select().from(emailOutbox).where(like(emailOutbox.dedupeKey, `payroll-receipt:${runId}:%`));
    expect(emails.map((e) => e.toAddress).sort()).toEqual(staff.map((s) => s.email).sort());
    for (const email of emails) {
      expect(email.subject).toBe('Bell Co paid you $1,500.00');
      expect(email.bodyText).toContain(txHash);
    }
    const listing = await json<Listing>(await list());
    const settled = listing.notifications.filter((n) => n.data.payroll_run_id === runId);
    expect(settled).toEqual([
      expect.objectContaining({ type: 'payroll_confirmed', severity: 'success', link: `/dashboard/payroll/${runId}`, read: false, title: 'Payroll paid: $3,000.00 to 2 people' }),
    ]);
  });

  it('tells the employer when a run failed, and sends no receipts', async () => {
    const { runId } = await submittedRun(staff);
    await t.database.transaction((tx) => failRun(tx.db, runId, 'transaction reverted'));
    const listing = await json<Listing>(await list());
    expect(listing.notifications.find((n) => n.data.payroll_run_id === runId)).toMatchObject({ type: 'payroll_failed', severity: 'error' });
    expect(await t.database.db.select().from(emailOutbox).where(like(emailOutbox.dedupeKey, `payroll-receipt:${runId}:%`))).toEqual([]);
  });

  it('rings agent_spike_detected as a warning linking to the agents settings, once per anomaly', async () => {
    const spike = { employerId, authorizationId: randomUUID(), label: 'Buyer bot', amount: 90_000_000n, median: 5_000_000n, newCap: 25_000_000n, anomalyKey: 'p-1' };
    expect(await agentSpikeDetected(t.database.db, spike)).toBe(true);
    expect(await agentSpikeDetected(t.database.db, spike)).toBe(false);
    const listing = await json<Listing>(await list());
    expect(listing.notifications.filter((n) => n.type === 'agent_spike_detected')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        link: '/dashboard/settings/agents',
        body: 'A payment of $90.00 was more than 10x the 7-day median ($5.00). The cap is now $25.00 until you restore it.',
        data: expect.objectContaining({ amount_usd: '90.000000', per_tx_cap_usd: '25.000000' }),
      }),
    ]);
  });
});

describe('GET /api/employers/{id}/notifications and POST .../read', () => {
  it('pages newest first with a cursor, counts unread, and marks read', async () => {
    const first = await json<Listing>(await list('?limit=2'));
    expect(first.notifications).toHaveLength(2);
    expect(first.unread_count).toBe(3);
    const second = await json<Listing>(await list(`?limit=2&cursor=${first.next_cursor}`));
    expect(second.notifications).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    expect(new Set([...first.notifications, ...second.notifications].map((n) => n.id)).size).toBe(3);

    const read = await t.request('POST', `/api/employers/${employerId}/notifications/read`, { token: owner, body: { ids: [first.notifications[0]!.id] } });
    expect(await json(read)).toEqual({ updated: 1, unread_count: 2 });
    expect((await json<Listing>(await list('?unread=true'))).notifications).toHaveLength(2);
    const all = await t.request('POST', `/api/employers/${employerId}/notifications/read`, { token: owner, body: { all: true } });
    expect(await json(all)).toEqual({ updated: 2, unread_count: 0 });
    // Idempotent.
    const again = await t.request('POST', `/api/employers/${employerId}/notifications/read`, { token: owner, body: { all: true } });
    expect(await json(again)).toEqual({ updated: 0, unread_count: 0 });
  });

  it('answers another tenant 404, like a missing employer', async () => {
    const rival = await t.token('bell-rival', 'rival@bell.example');
    await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival' } });
    expect((await list('', rival)).status).toBe(404);
    expect((await list('', owner, randomUUID())).status).toBe(404);
    const read = await t.request('POST', `/api/employers/${employerId}/notifications/read`, { token: rival, body: { all: true } });
    expect(read.status).toBe(404);
  });

  it('refuses bad input with 400 naming the field, and no token with 401', async () => {
    expect(await json(await list('?cursor=bm9wZQ'))).toMatchObject({ code: 'VALIDATION_ERROR', field: 'cursor' });
    expect(await json(await list('?limit=500'))).toMatchObject({ code: 'VALIDATION_ERROR', field: 'limit' });
    const both = await t.request('POST', `/api/employers/${employerId}/notifications/read`, { token: owner, body: { ids: [randomUUID()], all: true } });
    expect(await json(both)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'ids' });
    expect((await t.request('GET', `/api/employers/${employerId}/notifications`)).status).toBe(401);
  });
});
