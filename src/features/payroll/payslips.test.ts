import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, type PayingFetch } from '../../../test/support/pay.js';
import { pdfText } from '../../../test/support/pdf.js';
import { displayUsd, formatUsd } from '../../money.js';
import { TreasuryService } from '../treasury/service.js';

/**
 * The free payslip routes (issue 29): an employee's list, one payslip and its PDF, and a run's
 * payslips for the owner, over runs paid on the embedded chain.
 */
let t: TestApp;
let server: LoopbackServer;
let ownerToken: string;
let employerId: string;
let ada: { id: string; wallet: Address; email: string; token: string };
let grace: { id: string; wallet: Address; email: string };
let rival: { token: string; employerId: string; employeeId: string; runId: string };
let ownerPays: PayingFetch;
/** The paid run: Ada 5000.25, Grace 6000, pay period November 2026. */
let runId: string;

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
type Slip = Record<string, unknown> & { net_amount: string; net_amount_usd: string; gross_amount: string; advance_deduction: string };

async function createEmployer(sub: string) {
  const token = await t.token(sub, `${sub}@payslips.example`);
  const employer = await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc` } }));
  const treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  const service = t.chains!.tempo.serviceAddress;
  expect((await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: '20000' } })).status).toBe(200);
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(employer.id), 20_000_000_000n);
  return { token, employerId: employer.id };
}

async function addEmployee(token: string, id: string, name: string, extra: Record<string, unknown> = {}) {
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const email = `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@payslips.example`;
  const response = await t.request('POST', `/api/employers/${id}/team`, { token, body: { email, full_name: name, wallet_address: wallet, ...extra } });
  expect(response.status).toBe(201);
  return { id: (await json<{ id: string }>(response)).id, wallet, email };
}

/** Prepares and executes a run (paid execute from the agent wallet); returns its id. */
async function paidRun(token: string, id: string, items: { employee_id: string; amount_usd: string }[], period = {}) {
  const prepared = await t.request('POST', `/api/employers/${id}/payroll`, { token, body: { items, ...period } });
  expect(prepared.status).toBe(201);
  const { payroll_run_id } = await json<{ payroll_run_id: string }>(prepared);
  const executed = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: payroll_run_id }, headers: { 'X-Identity-Token': token } });
  expect(executed.status).toBe(200);
  return payroll_run_id;
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  ({ token: ownerToken, employerId } = await createEmployer('payslips-owner'));
  const adaRecord = await addEmployee(ownerToken, employerId, 'Ada');
  grace = await addEmployee(ownerToken, employerId, 'Grace');
  ada = { ...adaRecord, token: await t.token('payslips-ada', adaRecord.email) };
  ownerPays = (await railA(t, server.url, '50')).pay;
  runId = await paidRun(ownerToken, employerId, [{ employee_id: ada.id, amount_usd: '5000.25' }, { employee_id: grace.id, amount_usd: '6000' }], {
    pay_period_start: '2026-11-01',
    pay_period_end: '2026-11-30',
  });
  const other = await createEmployer('payslips-rival');
  const mallory = await addEmployee(other.token, other.employerId, 'Mallory');
  rival = { ...other, employeeId: mallory.id, runId: await paidRun(other.token, other.employerId, [{ employee_id: mallory.id, amount_usd: '10' }]) };
});

afterAll(async () => {
  await server.close();
  await t.close();
});

const get = (path: string, token?: string) => t.request('GET', path, token ? { token } : {});

describe('the employee reads their payslips', () => {
  it('lists them newest first, shows one with gross, deduction, net, memo, transaction, period and pay date', async () => {
    const listed = await get(`/api/employees/${ada.id}/payslips`, ada.token);
    expect(listed.status).toBe(200);
    const page = await json<{ payslips: Slip[]; total: number; limit: number }>(listed);
    expect(page).toMatchObject({ employee_id: ada.id, total: 1, page: 1, limit: 50 });
    const one = await get(`/api/employees/${ada.id}/payslips/${runId}`, ada.token);
    expect(one.status).toBe(200);
    const { payslip } = await json<{ payslip: Slip }>(one);
    expect(page.payslips).toEqual([payslip]);
    expect(payslip).toMatchObject({
      run_id: runId,
      employee_id: ada.id,
      employee_name: 'Ada',
      employer_name: 'payslips-owner Inc',
      status: 'paid',
      gross_amount: '5000250000',
      gross_amount_usd: '5000.250000',
      advance_deduction: '0',
      advance_deduction_usd: '0.000000',
      net_amount: '5000250000',
      net_amount_usd: '5000.250000',
      memo: { memo: expect.stringMatching(/^0x[0-9a-f]{64}$/), fields: expect.objectContaining({ type: 'salary' }) },
      tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      block_number: expect.any(Number),
      pay_period: { start: '2026-11-01', end: '2026-11-30' },
      pay_date: expect.any(String),
    });
  });

  it('downloads the PDF: an attachment named with its date that shows the net amount', async () => {
    const response = await get(`/api/employees/${ada.id}/payslips/${runId}/pdf`, ada.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="payslip-\d{4}-\d{2}-\d{2}-[0-9a-f]{8}\.pdf"$/);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    const text = await pdfText(bytes);
    expect(text).toContain('Net pay');
    expect(text).toContain('$5,000.25');
    expect(text).toContain('Employee: Ada');
    expect(text).toContain('Pay period: 2026-11-01 to 2026-11-30');
  });

  it('pages with limit and page', async () => {
    const second = await paidRun(ownerToken, employerId, [{ employee_id: ada.id, amount_usd: '1' }]);
    const first = await json<{ payslips: Slip[]; total: number }>(await get(`/api/employees/${ada.id}/payslips?limit=1`, ada.token));
    expect(first).toMatchObject({ total: 2, limit: 1, payslips: [{ run_id: second }] });
    const next = await json<{ payslips: Slip[] }>(await get(`/api/employees/${ada.id}/payslips?limit=1&page=2`, ada.token));
    expect(next.payslips.map((p) => p.run_id)).toEqual([runId]);
  });
});

describe('the owner reads payslips', () => {
  it("lists a run's payslips, one per employee, and reads and downloads any of them", async () => {
    const response = await get(`/api/employers/${employerId}/payroll/runs/${runId}/payslips`, ownerToken);
    expect(response.status).toBe(200);
    const body = await json<{ payslips: Slip[] }>(response);
    expect(body).toMatchObject({ employer_id: employerId, run_id: runId });
    expect(body.payslips.map((p) => [p.employee_name, p.net_amount_usd]).sort()).toEqual([
      ['Ada', '5000.250000'],
      ['Grace', '6000.000000'],
    ]);
    expect((await get(`/api/employees/${grace.id}/payslips/${runId}`, ownerToken)).status).toBe(200);
    const pdf = await get(`/api/employees/${grace.id}/payslips/${runId}/pdf`, ownerToken);
    expect(pdf.status).toBe(200);
    expect(await pdfText(new Uint8Array(await pdf.arrayBuffer()))).toContain('$6,000.00');
  });

  it('a draft has no payslips', async () => {
    const prepared = await t.request('POST', `/api/employers/${employerId}/payroll`, { token: ownerToken, body: { items: [{ employee_id: grace.id, amount_usd: '2' }] } });
    const { payroll_run_id } = await json<{ payroll_run_id: string }>(prepared);
    expect(await json(await get(`/api/employers/${employerId}/payroll/runs/${payroll_run_id}/payslips`, ownerToken))).toMatchObject({ payslips: [] });
    expect((await get(`/api/employees/${grace.id}/payslips/${payroll_run_id}`, ownerToken)).status).toBe(404);
  });
});

describe('who may not read them', () => {
  it("answers a colleague's, another tenant's and unknown ids 404, like missing ones", async () => {
    const cases: [string, string][] = [
      [`/api/employees/${grace.id}/payslips`, ada.token],
      [`/api/employees/${grace.id}/payslips/${runId}`, ada.token],
      [`/api/employees/${grace.id}/payslips/${runId}/pdf`, ada.token],
      [`/api/employers/${employerId}/payroll/runs/${runId}/payslips`, ada.token],
      [`/api/employees/${ada.id}/payslips`, rival.token],
      [`/api/employees/${ada.id}/payslips/${runId}/pdf`, rival.token],
      [`/api/employers/${employerId}/payroll/runs/${runId}/payslips`, rival.token],
      [`/api/employers/${rival.employerId}/payroll/runs/${runId}/payslips`, rival.token],
      [`/api/employees/${rival.employeeId}/payslips/${runId}`, ownerToken],
      [`/api/employees/${ada.id}/payslips/${rival.runId}`, ownerToken],
      [`/api/employees/${randomUUID()}/payslips`, ownerToken],
      [`/api/employees/${ada.id}/payslips/${randomUUID()}`, ada.token],
      [`/api/employers/${employerId}/payroll/runs/${randomUUID()}/payslips`, ownerToken],
    ];
    for (const [path, token] of cases) {
      const response = await get(path, token);
      expect(response.status, path).toBe(404);
      expect(await json(response), path).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('answers anonymous callers 401', async () => {
    for (const path of [`/api/employees/${ada.id}/payslips`, `/api/employees/${ada.id}/payslips/${runId}/pdf`, `/api/employers/${employerId}/payroll/runs/${runId}/payslips`]) {
      expect((await get(path)).status, path).toBe(401);
    }
  });

  it('answers malformed ids and paging 400, naming the field', async () => {
    const cases: [string, string][] = [
      ['/api/employees/nope/payslips', 'id'],
      [`/api/employees/${ada.id}/payslips/nope`, 'runId'],
      [`/api/employees/${ada.id}/payslips/nope/pdf`, 'runId'],
      [`/api/employers/nope/payroll/runs/${runId}/payslips`, 'id'],
      [`/api/employers/${employerId}/payroll/runs/nope/payslips`, 'runId'],
      [`/api/employees/${ada.id}/payslips?limit=101`, 'limit'],
      [`/api/employees/${ada.id}/payslips?page=0`, 'page'],
    ];
    for (const [path, field] of cases) {
      const response = await get(path, ownerToken);
      expect(response.status, path).toBe(400);
      expect(await json(response), path).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });
});

describe('a run that deducts an advance', () => {
  it('shows gross, deduction and net that add up, on the payslip and in the PDF', async () => {
    const employee = await addEmployee(ownerToken, employerId, 'Advanced', { annual_salary_usd: '100000' });
    const token = await t.token(`payslips-advanced-${employee.id}`, employee.email);
    expect((await get(`/api/employees/${employee.id}/salary-stream`, token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const claimed = await ownerPays('/api/mpp/employee/advance', { method: 'POST', body: { employeeAddress: employee.wallet }, headers: { 'X-Identity-Token': token } });
    expect(claimed.status).toBe(200);
    const advance = BigInt((await json<{ amount: string }>(claimed)).amount);
    expect(advance).toBeGreaterThan(0n);

    const run = await paidRun(ownerToken, employerId, [{ employee_id: employee.id, amount_usd: '1000' }]);
    const { payslip } = await json<{ payslip: Slip }>(await get(`/api/employees/${employee.id}/payslips/${run}`, token));
    expect(payslip).toMatchObject({
      gross_amount: '1000000000',
      advance_deduction: advance.toString(),
      advance_deduction_usd: formatUsd(advance),
      net_amount: (1_000_000_000n - advance).toString(),
      net_amount_usd: formatUsd(1_000_000_000n - advance),
    });
    expect(BigInt(payslip.net_amount) + BigInt(payslip.advance_deduction)).toBe(BigInt(payslip.gross_amount));

    const pdf = await pdfText(new Uint8Array(await (await get(`/api/employees/${employee.id}/payslips/${run}/pdf`, token)).arrayBuffer()));
    expect(pdf).toContain(`Gross pay\n${displayUsd(1_000_000_000n)}\nDeductions (advances)\n${displayUsd(-advance)}\nNet pay\n${displayUsd(1_000_000_000n - advance)}`);
  });
});
