import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { TreasuryService } from '../treasury/service.js';
import { expectedPay, runWarnings } from './run-warnings.js';
import * as store from './store.js';

describe('expectedPay', () => {
  it('is the salary for the days of the period, both ends included, or a twelfth of it without a period', () => {
    expect(expectedPay(120_000_000_000n, null)).toBe(10_000_000_000n);
    const october = { start: new Date('2026-10-01T00:00:00Z'), end: new Date('2026-10-31T00:00:00Z') };
    expect(expectedPay(365_000_000_000n, october)).toBe(31_000_000_000n);
    // To the nearest cent: 120,000 for 31 days is 10,191.780821..., shown and compared as 10,191.78.
    expect(expectedPay(120_000_000_000n, october)).toBe(10_191_780_000n);
    expect(expectedPay(98_000_000_000n, null)).toBe(8_166_670_000n);
  });
});

describe('runWarnings', () => {
  const ada = { employeeId: randomUUID(), fullName: 'Ada', annualSalary: 120_000_000_000n, amount: 10_000_000_000n };
  it('lets a normal run through with no warning, and an employee with no salary is never an outlier', () => {
    expect(runWarnings({ items: [ada, { ...ada, employeeId: randomUUID(), annualSalary: 0n, amount: 5n }], period: null, overlapping: [], recent: [] }, new Date())).toEqual([]);
  });

  it('says how long ago an employee was paid in minutes, hours or days', () => {
    const now = new Date('2026-11-26T12:00:00Z');
    const recentlyPaid = (iso: string) =>
      runWarnings({ items: [ada], period: null, overlapping: [], recent: [{ employeeId: ada.employeeId, runId: randomUUID(), createdAt: new Date(iso) }] }, now)[0]!.message;
    expect(recentlyPaid('2026-11-26T11:48:00Z')).toBe('Ada was paid by another run 12 minutes ago.');
    expect(recentlyPaid('2026-11-26T09:00:00Z')).toBe('Ada was paid by another run 3 hours ago.');
    expect(recentlyPaid('2026-11-22T12:00:00Z')).toBe('Ada was paid by another run 4 days ago.');
  });

  it('flags an amount just past the threshold either way, not one at it', () => {
    const at = (amount: bigint) => runWarnings({ items: [{ ...ada, amount }], period: null, overlapping: [], recent: [] }, new Date()).map((w) => w.code);
    expect(at(15_000_000_000n)).toEqual([]); // exactly +50%
    expect(at(15_000_000_001n)).toEqual(['AMOUNT_OUTLIER']);
    expect(at(5_000_000_000n)).toEqual([]); // exactly -50%
    expect(at(4_999_999_999n)).toEqual(['AMOUNT_OUTLIER']);
  });
});

let t: TestApp;
let owner: string;
let employerId: string;
let ada: string;
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
type Warning = { code: string; employee_id: string | null; run_id: string | null; expected_usd: string | null; threshold_percent: number | null; message: string };
const check = (body: unknown, token = owner, id = employerId) => t.request('POST', `/api/employers/${id}/payroll/checks`, { token, body });

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  owner = await t.token('warnings-owner', 'owner@warnings.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Warnings Inc' } }))).id;
  const added = await t.request('POST', `/api/employers/${employerId}/team`, {
    token: owner,
    body: { email: 'ada@warnings.example', full_name: 'Ada Lovelace', wallet_address: privateKeyToAccount(generatePrivateKey()).address, annual_salary_usd: '120000' },
  });
  ada = (await json<{ id: string }>(added)).id;
  const treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  const service = t.chains!.tempo.serviceAddress;
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: '50000' } });
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(employerId), 50_000_000_000n);
});
afterAll(() => t.close());

describe('POST /api/employers/{id}/payroll/checks', () => {
  it('warns about nothing for a first, ordinary run, and writes nothing', async () => {
    const runsBefore = (await store.listRuns(t.database.db, employerId, { offset: 0, limit: 100 })).total;
    const response = await check({ items: [{ employee_id: ada, amount_usd: '10000' }], pay_period_start: '2026-10-01', pay_period_end: '2026-10-31' });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ warnings: [] });
    expect((await store.listRuns(t.database.db, employerId, { offset: 0, limit: 100 })).total).toBe(runsBefore);
  });

  it('warns about an outlier amount, with the salary for the period and the threshold', async () => {
    const { warnings } = await json<{ warnings: Warning[] }>(await check({ items: [{ employee_id: ada, amount_usd: '900000' }] }));
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'AMOUNT_OUTLIER', employee_id: ada, amount_usd: '900000.000000', expected_usd: '10000.000000', threshold_percent: 50 }),
    ]);
    expect(warnings[0]!.message).toBe('$900,000.00 for Ada Lovelace is more than 50% away from their salary for the period ($10,000.00).');
  });

  it('after a paid run: warns that the period overlaps it and that the employee was paid within days', async () => {
    const prepared = await t.request('POST', `/api/employers/${employerId}/payroll`, {
      token: owner,
      body: { items: [{ employee_id: ada, amount_usd: '10000' }], pay_period_start: '2026-10-01', pay_period_end: '2026-10-31' },
    });
    expect(prepared.status).toBe(201);
    const runId = (await json<{ payroll_run_id: string }>(prepared)).payroll_run_id;
    // The owner's transaction is out: the run is submitted (what counts as paid for the warning).
    expect(await store.claimDraft(t.database.db, runId, { submittedBy: 'owner', txHash: `0x${'ab'.repeat(32)}` })).not.toBeNull();

    const { warnings } = await json<{ warnings: Warning[] }>(
      await check({ items: [{ employee_id: ada, amount_usd: '10000' }], pay_period_start: '2026-10-15', pay_period_end: '2026-11-14' }),
    );
    expect(warnings.map((w) => [w.code, w.run_id])).toEqual([
      ['PERIOD_ALREADY_PAID', runId],
      ['RECENTLY_PAID', runId],
    ]);
    expect(warnings[0]!.message).toBe('Another payroll run already paid 2026-10-01 to 2026-10-31, which overlaps this pay period.');
    // The next period does not overlap (the recent payment still shows).
    const next = await json<{ warnings: Warning[] }>(await check({ items: [{ employee_id: ada, amount_usd: '10000' }], pay_period_start: '2026-11-01', pay_period_end: '2026-11-30' }));
    expect(next.warnings.map((w) => w.code)).toEqual(['RECENTLY_PAID']);
  });

  it('a prepared run records the screen of each recipient: the compliance page shows them checked, not "Not checked"', async () => {
    const added = await t.request('POST', `/api/employers/${employerId}/team`, {
      token: owner,
      body: { email: 'bea@warnings.example', full_name: 'Bea', wallet_address: privateKeyToAccount(generatePrivateKey()).address, annual_salary_usd: '60000' },
    });
    const bea = (await json<{ id: string }>(added)).id;
    const before = await json<{ employees: { id: string; latest_result: string | null }[] }>(await t.request('GET', `/api/employers/${employerId}/compliance`, { token: owner }));
    const prepared = await t.request('POST', `/api/employers/${employerId}/payroll`, { token: owner, body: { items: [{ employee_id: bea, amount_usd: '5000' }] } });
    expect(prepared.status).toBe(201);
    const after = await json<{ employees: { id: string; latest_result: string | null; latest_checked_at: string | null }[] }>(
      await t.request('GET', `/api/employers/${employerId}/compliance`, { token: owner }),
    );
    expect(before.employees.find((e) => e.id === bea)?.latest_result).toBe(null);
    expect(after.employees.find((e) => e.id === bea)).toMatchObject({ latest_result: 'CLEAR', latest_checked_at: expect.any(String) });
  });

  it("answers another owner's employer and employees like missing ones, anonymous callers 401, bad input 400 naming the field", async () => {
    const rival = await t.token('warnings-rival', 'rival@warnings.example');
    const rivalEmployer = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival' } }))).id;
    expect((await check({ items: [{ employee_id: ada, amount_usd: '1' }] }, rival)).status).toBe(404);
    const foreign = await check({ items: [{ employee_id: ada, amount_usd: '1' }] }, rival, rivalEmployer);
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toMatchObject({ field: 'items.0.employee_id' });
    expect((await t.request('POST', `/api/employers/${employerId}/payroll/checks`, { body: { items: [] } })).status).toBe(401);
    const bad = await check({ items: [{ employee_id: ada, amount_usd: '-5' }] });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'items.0.amount_usd' });
  });
});
