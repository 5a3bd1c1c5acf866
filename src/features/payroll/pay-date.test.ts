import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { nextPayment, utcDay } from '../employers/pay-schedule.js';
import { TreasuryService } from '../treasury/service.js';
import { payslipPayDate } from './service.js';

/**
 * Pay schedules on payroll (issue 29): a run's pay date (prepare, decisions, the runs list, its
 * payslips) and the expected pay of a period (GET /api/employers/{id}/payroll/expected).
 */
let t: TestApp;
let ownerToken: string;
let employerId: string;
let ada: string;
let grace: string;
/** Paused: on the team, not payable. */
let paused: string;

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

async function addEmployee(name: string, salary: string, extra: Record<string, unknown> = {}) {
  const body = { email: `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@paydate.example`, full_name: name, annual_salary_usd: salary, ...extra };
  const response = await t.request('POST', `/api/employers/${employerId}/team`, { token: ownerToken, body: { wallet_address: privateKeyToAccount(generatePrivateKey()).address, ...body } });
  expect(response.status).toBe(201);
  return (await json<{ id: string }>(response)).id;
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  ownerToken = await t.token('paydate-owner', 'owner@paydate.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: ownerToken, body: { name: 'Pay Date Co' } }))).id;
  ada = await addEmployee('Ada', '73000');
  grace = await addEmployee('Grace', '36500');
  paused = await addEmployee('Pat', '365000');
  await t.request('PATCH', `/api/employers/${employerId}/team/${paused}`, { token: ownerToken, body: { payroll_paused: true } });
  const treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '20000' } });
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(employerId), 20_000_000_000n);
});
afterAll(() => t.close());

const period = { pay_period_start: '2026-10-01', pay_period_end: '2026-10-31' };

describe('a run’s pay date', () => {
  it('is taken by prepare, answered on the draft and on the runs list', async () => {
    const prepared = await t.request('POST', `/api/employers/${employerId}/payroll`, {
      token: ownerToken,
      body: { items: [{ employee_id: ada, amount_usd: '6200' }], ...period, pay_date: '2026-11-28' },
    });
    expect(prepared.status).toBe(201);
    const draft = await json<{ payroll_run_id: string }>(prepared);
    expect(draft).toMatchObject({ ...period, pay_date: '2026-11-28' });
    const runs = await json<{ runs: { id: string; pay_date: string | null }[] }>(await t.request('GET', `/api/employers/${employerId}/payroll/runs`, { token: ownerToken }));
    expect(runs.runs.find((r) => r.id === draft.payroll_run_id)).toMatchObject({ ...period, pay_date: '2026-11-28' });
  });

  it('goes from an agent plan to its run and to the payslips, which show it as their pay date', async () => {
    const proposed = await t.request('POST', `/api/employers/${employerId}/payroll/decisions`, {
      token: ownerToken,
      body: { items: [{ employee_id: grace, amount_usd: '3100', chain: 'tempo' }], ...period, pay_date: '2026-11-30' },
    });
    expect(proposed.status).toBe(201);
    const { decision_id } = await json<{ decision_id: string }>(proposed);
    const executed = await t.request('POST', '/api/x402/payroll/execute', { token: ownerToken, body: { employer_id: employerId, decision_id } });
    expect(executed.status).toBe(200);
    const { payroll_run_id: runId } = await json<{ payroll_run_id: string }>(executed);

    const runs = await json<{ runs: { id: string; status: string; pay_date: string | null }[] }>(await t.request('GET', `/api/employers/${employerId}/payroll/runs`, { token: ownerToken }));
    expect(runs.runs.find((r) => r.id === runId)).toMatchObject({ status: 'confirmed', ...period, pay_date: '2026-11-30' });
    const slips = await json<{ payslips: { pay_date: string | null; status: string }[] }>(
      await t.request('GET', `/api/employers/${employerId}/payroll/runs/${runId}/payslips`, { token: ownerToken }),
    );
    expect(slips.payslips).toEqual([expect.objectContaining({ status: 'paid', pay_date: '2026-11-30T00:00:00.000Z' })]);
  });

  it('is refused unless a calendar date, naming the field, on prepare, checks and decisions', async () => {
    const items = [{ employee_id: ada, amount_usd: '10' }];
    for (const path of ['payroll', 'payroll/checks', 'payroll/decisions']) {
      for (const pay_date of ['2026-02-30', '28/11/2026', 20261128]) {
        const response = await t.request('POST', `/api/employers/${employerId}/${path}`, { token: ownerToken, body: { items, pay_date } });
        expect(response.status, `${path} ${pay_date}`).toBe(400);
        expect(await json(response)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'pay_date' });
      }
    }
  });
});

describe('payslipPayDate', () => {
  const finalizedAt = new Date('2026-12-01T09:30:00Z');
  it("is the run's pay date when it has one, else when the payment was final; nothing before it is paid", () => {
    expect(payslipPayDate({ status: 'paid', finalizedAt }, '2026-11-30')).toEqual(new Date('2026-11-30T00:00:00Z'));
    expect(payslipPayDate({ status: 'paid', finalizedAt }, null)).toEqual(finalizedAt);
    expect(payslipPayDate({ status: 'submitted', finalizedAt: null }, '2026-11-30')).toBeNull();
    expect(payslipPayDate({ status: 'failed', finalizedAt }, '2026-11-30')).toBeNull();
  });
});

describe('GET /api/employers/{id}/payroll/expected', () => {
  const expected = (query = '', token = ownerToken, id = employerId) => t.request('GET', `/api/employers/${id}/payroll/expected${query}`, { token });
  type Answer = { pay_date: string | null; period: { start: string; end: string } | null; total_usd: string; employees: { employee_id: string; expected_usd: string; payable: boolean }[] };

  it('without a schedule or period: a twelfth of the salary, totalled over the payable employees only', async () => {
    const answer = await json<Answer>(await expected());
    expect(answer).toMatchObject({ employer_id: employerId, pay_date: null, period: null });
    expect(answer.employees).toEqual([
      { employee_id: ada, expected_usd: '6083.330000', payable: true },
      { employee_id: grace, expected_usd: '3041.670000', payable: true },
      { employee_id: paused, expected_usd: '30416.670000', payable: false },
    ]);
    expect(answer.total_usd).toBe('9125.000000');
  });

  it("for a given period: the salary for its days (both ends), the outlier warning's rule", async () => {
    const answer = await json<Answer>(await expected('?period_start=2026-11-01&period_end=2026-11-30'));
    expect(answer).toMatchObject({ pay_date: null, period: { start: '2026-11-01', end: '2026-11-30' }, total_usd: '9000.000000' });
    expect(answer.employees[0]).toEqual({ employee_id: ada, expected_usd: '6000.000000', payable: true });
  });

  it("with a schedule and no period: the next pay date, its period, and that period's pay", async () => {
    await t.request('PATCH', `/api/employers/${employerId}`, { token: ownerToken, body: { pay_schedule: { frequency: 'weekly', anchor_date: '2026-01-02' } } });
    const next = nextPayment({ frequency: 'weekly', anchorDate: '2026-01-02' }, utcDay(new Date()));
    const answer = await json<Answer>(await expected());
    // 7 days: 73000 * 7 / 365 = 1400, 36500 * 7 / 365 = 700.
    expect(answer).toMatchObject({ pay_date: next.payDate, period: next.period, total_usd: '2100.000000' });
    // A given period wins over the schedule's.
    expect(await json<Answer>(await expected('?period_start=2026-11-01&period_end=2026-11-30'))).toMatchObject({ pay_date: null, total_usd: '9000.000000' });
  });

  it('refuses a half or backwards period naming the field, and answers another tenant like a missing employer', async () => {
    for (const query of ['?period_start=2026-11-01', '?period_end=2026-11-30', '?period_start=2026-11-30&period_end=2026-11-01', '?period_start=2026-13-01&period_end=2026-12-01']) {
      const response = await expected(query);
      expect(response.status, query).toBe(400);
      expect((await json<{ field: string }>(response)).field, query).toMatch(/^period_(start|end)$/);
    }
    const rival = await t.token('paydate-rival', 'rival@paydate.example');
    await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival' } });
    const foreign = await expected('', rival);
    const missing = await expected('', rival, randomUUID());
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toEqual(await json(missing));
    expect((await t.request('GET', `/api/employers/${employerId}/payroll/expected`, {})).status).toBe(401);
  });
});
