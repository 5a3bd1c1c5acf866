import { randomBytes, randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildApp } from '../../app.js';
import { requireUser } from '../../http/auth.js';
import type { Caller } from '../../http/context.js';
import { createLogger } from '../../log.js';
import { parseUsd } from '../../money.js';
import { OfflineAiProvider, type AiProvider, type AiRequest } from '../../providers/ai/index.js';
import { ComplianceService } from '../compliance/service.js';
import { sanctionsSnapshot } from '../compliance/sanctions-list.js';
import { CreateEmployeeBody } from '../employers/schema.js';
import * as payrollStore from '../payroll/store.js';
import { mapColumns } from './column-mapping.js';
import { aiRoutes } from './routes.js';
import { AiService } from './service.js';
import { CSV_FIELDS } from './schema.js';

/**
 * POST /api/ai/parse-csv, /api/ai/anomaly-detect and /api/ai/compliance-explain over the full app:
 * the deterministic answers on realistic data, a scripted model that may improve or reword them
 * (and is ignored when its answer is invalid), tenancy, validation, and live mode's 503.
 */

let t: TestApp;
/** What the scripted model answers next; null is "no answer", as the offline provider. */
let reply: (request: AiRequest) => string | null = () => null;
const SNAPSHOT = sanctionsSnapshot();
const asked: AiRequest[] = [];
const scripted: AiProvider = {
  name: 'openai',
  complete: (request) => {
    asked.push(request);
    return Promise.resolve(reply(request));
  },
};

let owner: string;
let employerId: string;
let otherOwner: string;
let otherEmployerId: string;
let otherRunId: string;
const staff = {} as Record<'ada' | 'bob' | 'carol' | 'dan', { id: string; wallet: string }>;
let firstRunId: string;
let currentRunId: string;

const wallet = (byte: string) => `0x${byte.repeat(20)}`;
const SOLANA_KEYS = ['9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'So11111111111111111111111111111111111111112'];

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

const post = (path: string, body: unknown, token: string | undefined = owner) => t.request('POST', path, { token, body });

async function addEmployee(token: string, employer: string, body: Record<string, string>): Promise<string> {
  const res = await t.request('POST', `/api/employers/${employer}/team`, { token, body });
  expect(res.status).toBe(201);
  return (await json<{ id: string }>(res)).id;
}

/** A payroll run written through the payroll store, driven to `state` as the payroll flow does. */
async function payrollRun(employer: string, items: { employeeId: string; wallet: string; usd: string }[], state: 'draft' | 'confirmed' | 'failed'): Promise<string> {
  const id = randomUUID();
  const rows = items.map((i) => ({
    employeeId: i.employeeId,
    chain: 'tempo' as const,
    walletAddress: i.wallet,
    amount: parseUsd(i.usd)!,
    memo: null,
    status: 'pending' as const,
    reason: null,
  }));
  const totalAmount = rows.reduce((sum, r) => sum + r.amount, 0n);
  await payrollStore.insertRun(t.database.db, { id, employerId: employer, totalAmount, payPeriodStart: null, payPeriodEnd: null, createdBy: null }, rows);
  if (state === 'draft') return id;
  const txHash = `0x${randomBytes(32).toString('hex')}`;
  await payrollStore.claimDraft(t.database.db, id, { submittedBy: 'owner', txHash });
  if (state === 'confirmed') await payrollStore.markConfirmed(t.database.db, id, { txHash, blockNumber: 1n });
  else await payrollStore.markFailed(t.database.db, id, 'reverted');
  return id;
}

beforeAll(async () => {
  t = await startTestApp();
  // Registered before the first request, with the deps app.ts passes (a scripted provider here).
  t.app.route('/', aiRoutes({
    mode: t.config.mode,
    ai: scripted,
    rules: new AiService({ ai: scripted, employers: t.services.employers, database: t.database }),
    requireUser: requireUser(t.verifyIdentity, t.services.users),
  }));

  owner = await t.token('ai-owner', 'owner@ai.example');
  employerId = (await json<{ id: string }>(await post('/api/employers', { name: 'Anomaly Co' }))).id;
  otherOwner = await t.token('ai-other', 'owner@other.example');
  otherEmployerId = (await json<{ id: string }>(await post('/api/employers', { name: 'Other Co' }, otherOwner))).id;

  const people = [
    ['ada', 'Ada Lovelace', 'a1', '120000'],
    ['bob', 'Bob Babbage', 'b2', '96000'],
    ['carol', 'Carol Shaw', 'c3', '60000'],
    ['dan', 'Dan Dennett', 'd4', '72000'],
  ] as const;
  for (const [key, name, byte, salary] of people) {
    const w = wallet(byte);
    staff[key] = { id: await addEmployee(owner, employerId, { email: `${key}@ai.example`, full_name: name, wallet_address: w, annual_salary_usd: salary }), wallet: w };
  }
  const { ada, bob, carol, dan } = staff;
  const usual = (danUsd = '3000') => [
    { employeeId: ada.id, wallet: ada.wallet, usd: '5000' },
    { employeeId: bob.id, wallet: bob.wallet, usd: '4000' },
    { employeeId: dan.id, wallet: dan.wallet, usd: danUsd },
  ];
  firstRunId = await payrollRun(employerId, usual(), 'confirmed');
  await payrollRun(employerId, usual(), 'confirmed');
  await payrollRun(employerId, usual('3100'), 'confirmed');
  // Never paid: neither its amount nor its wallet is history.
  await payrollRun(employerId, [{ employeeId: dan.id, wallet: wallet('ee'), usd: '50000' }], 'failed');
  currentRunId = await payrollRun(
    employerId,
    [
      { employeeId: ada.id, wallet: ada.wallet, usd: '16000' }, // 3.2x her median, and above 1.5 months of salary
      { employeeId: bob.id, wallet: carol.wallet, usd: '4000' }, // paid to Carol's wallet
      { employeeId: carol.id, wallet: carol.wallet, usd: '5000' }, // first payment
      { employeeId: dan.id, wallet: dan.wallet.toUpperCase().replace('0X', '0x'), usd: '3000' }, // same wallet, other case
    ],
    'draft',
  );

  const stranger = await addEmployee(otherOwner, otherEmployerId, { email: 'x@other.example', full_name: 'Xavier Other', wallet_address: wallet('99') });
  otherRunId = await payrollRun(otherEmployerId, [{ employeeId: stranger, wallet: wallet('99'), usd: '1000' }], 'draft');
});
afterAll(() => t?.close());
afterEach(() => {
  reply = () => null;
});

describe('POST /api/ai/parse-csv', () => {
  const parse = (body: unknown, token?: string) => post('/api/ai/parse-csv', body, token);
  type Mapping = { mapping: Record<string, string | null>; confidence: Record<string, number>; unmapped_columns: string[]; source: string };

  it('maps messy headers by their words, and uses the bulk-import field names', async () => {
    expect([...CSV_FIELDS].sort()).toEqual([...CreateEmployeeBody.keyof().options].sort());
    const headers = ['\uFEFFEmployee Name', 'E-mail', 'Wallet', 'Salary (USD)', 'Dept.', 'Cost center', 'Start date', 'Notes'];
    const res = await parse({
      employerId,
      headers,
      sampleRows: [
        ['Ada Lovelace', 'ada@acme.example', wallet('a1'), '$120,000', 'Engineering', 'CC-100', '2024-01-02', ''],
        ['Grace Hopper', 'grace@acme.example', wallet('b2'), '98,500.00', 'Research', 'CC-200', '2023-06-01', 'remote'],
      ],
    });
    expect(res.status).toBe(200);
    const body = await json<Mapping>(res);
    expect(body).toMatchObject({
      mapping: {
        email: 'E-mail',
        full_name: '\uFEFFEmployee Name',
        wallet_address: 'Wallet',
        solana_wallet_address: null,
        annual_salary_usd: 'Salary (USD)',
        department: 'Dept.',
        cost_centre: 'Cost center',
      },
      unmapped_columns: ['Start date', 'Notes'],
      source: 'heuristic',
    });
    expect(body.confidence.solana_wallet_address).toBe(0);
    for (const field of ['email', 'full_name', 'wallet_address', 'annual_salary_usd']) expect(body.confidence[field]).toBeGreaterThan(0.9);
    expect(asked.at(-1)!.prompt).toContain('Salary (USD)'); // the model was asked (it had no answer)
  });

  it('reads the sample values when the headers say nothing', async () => {
    const res = await parse({
      employerId,
      headers: ['Column A', 'Column B', 'Column C', 'Column D', 'Wallet'],
      sampleRows: [
        ['Ada Lovelace', 'ada@acme.example', wallet('a1'), '120000', SOLANA_KEYS[0]],
        ["Mary-Jane O'Neil", 'mj@acme.example', wallet('b2'), '98000', SOLANA_KEYS[1]],
        ['Grace Hopper', 'grace@acme.example', wallet('c3'), '101000', SOLANA_KEYS[2]],
      ],
    });
    const body = await json<Mapping>(res);
    expect(body.mapping).toEqual({
      email: 'Column B',
      full_name: 'Column A',
      wallet_address: 'Column C',
      // "Wallet" holding base58 keys is the Solana wallet.
      solana_wallet_address: 'Wallet',
      // Numbers alone could be ids: a salary needs a salary-like header.
      annual_salary_usd: null,
      department: null,
      cost_centre: null,
    });
    expect(body.unmapped_columns).toEqual(['Column D']);
  });

  it('leaves out columns that only look like a field', () => {
    const { mapping, unmapped_columns } = mapColumns(
      ['First name', 'Last name', 'Monthly salary', 'Address', 'Manager', 'Work Email', 'Annual comp', 'Team', 'CostCentre'],
      [['Ada', 'Lovelace', '10000', '12 High St, London', 'Grace Hopper', 'ada@acme.example', '120000', 'Platform', '4100']],
    );
    expect(mapping).toEqual({
      email: 'Work Email',
      full_name: null,
      wallet_address: null,
      solana_wallet_address: null,
      annual_salary_usd: 'Annual comp',
      department: 'Team',
      cost_centre: 'CostCentre',
    });
    expect(unmapped_columns).toEqual(['First name', 'Last name', 'Monthly salary', 'Address', 'Manager']);
  });

  it("keeps the heuristic when the model's answer is not JSON, names an unknown header or uses one twice", async () => {
    const headers = ['Name', 'Email', 'Salary'];
    const expected = { email: 'Email', full_name: 'Name', annual_salary_usd: 'Salary' };
    for (const answer of [
      'Sure! Name is the full name and Email the email.',
      '{"mapping": {"email": "E-mail address", "full_name": "Name"}}',
      '{"mapping": {"email": "Email", "full_name": "Email"}}',
      '{"mapping": {"email": 42}}',
    ]) {
      reply = () => answer;
      const body = await json<Mapping>(await parse({ employerId, headers }));
      expect(body.source, answer).toBe('heuristic');
      expect(body.mapping, answer).toMatchObject(expected);
    }
  });

  it("takes a valid model mapping, with the model's confidence", async () => {
    reply = () => '```json\n{"mapping": {"email": "Contact", "full_name": "Who", "department": "Where"}, "confidence": {"email": 0.8}}\n```';
    const res = await parse({ employerId, headers: ['Who', 'Contact', 'Where', 'Notes'], sampleRows: [['Ada Lovelace', 'ada@acme.example', 'Paris', '']] });
    const body = await json<Mapping>(res);
    expect(body).toEqual({
      mapping: { email: 'Contact', full_name: 'Who', wallet_address: null, solana_wallet_address: null, annual_salary_usd: null, department: 'Where', cost_centre: null },
      // The model's figure for email; the heuristic's where they agree (full_name); 0.5 otherwise.
      confidence: { email: 0.8, full_name: 0.55, wallet_address: 0, solana_wallet_address: 0, annual_salary_usd: 0, department: 0.5, cost_centre: 0 },
      unmapped_columns: ['Notes'],
      source: 'model',
    });
  });

  it('answers 400 naming the field', async () => {
    const long = 'x'.repeat(201);
    for (const [body, field] of [
      [{ headers: ['Email'] }, 'employerId'],
      [{ employerId: 'not-a-uuid', headers: ['Email'] }, 'employerId'],
      [{ employerId }, 'headers'],
      [{ employerId, headers: [] }, 'headers'],
      [{ employerId, headers: Array.from({ length: 101 }, (_, i) => `h${i}`) }, 'headers'],
      [{ employerId, headers: [''] }, 'headers.0'],
      [{ employerId, headers: ['Email', long] }, 'headers.1'],
      [{ employerId, headers: ['Email', 'Name', 'Email'] }, 'headers.2'],
      [{ employerId, headers: ['Email\nBcc'] }, 'headers.0'],
      [{ employerId, headers: ['Email'], sampleRows: Array.from({ length: 21 }, () => ['a@b.example']) }, 'sampleRows'],
      [{ employerId, headers: ['Email'], sampleRows: [['ok'], [7]] }, 'sampleRows.1.0'],
    ] as const) {
      const res = await parse(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it("answers 401 without a token and 404 for another tenant's employer", async () => {
    expect((await parse({ employerId, headers: ['Email'] }, '')).status).toBe(401);
    const theirs = await parse({ employerId: otherEmployerId, headers: ['Email'] });
    const missing = await parse({ employerId: randomUUID(), headers: ['Email'] });
    expect(theirs.status).toBe(404);
    expect(await json(theirs)).toEqual(await json(missing));
  });
});

describe('POST /api/ai/anomaly-detect', () => {
  type Report = { payroll_run_id: string; anomalies: { employee_id: string; kind: string; severity: string; message: string }[]; summary: string; source: string };
  const detect = (body: unknown, token?: string) => post('/api/ai/anomaly-detect', body, token);
  const names = () => Object.fromEntries(Object.entries(staff).map(([key, s]) => [s.id, key]));
  const flagged = (report: Report) =>
    report.anomalies.map((a) => `${names()[a.employee_id]} ${a.kind} ${a.severity}`).sort();

  it('flags a spike, a changed wallet, a wallet paid twice, a first payment and pay above the salary', async () => {
    const res = await detect({ employerId, payrollRunId: currentRunId });
    expect(res.status).toBe(200);
    const report = await json<Report>(res);
    expect(report.payroll_run_id).toBe(currentRunId);
    expect(flagged(report)).toEqual([
      'ada above_annual_salary warning',
      'ada amount_spike warning',
      'bob duplicate_wallet error',
      'bob wallet_changed warning',
      'carol duplicate_wallet error',
      'carol new_recipient info',
    ]);
    const message = (who: string, kind: string) => report.anomalies.find((a) => names()[a.employee_id] === who && a.kind === kind)!.message;
    expect(message('ada', 'amount_spike')).toBe('Ada Lovelace is paid USD 16,000.00, 3.2x the median of their last 3 paid items (USD 5,000.00).');
    expect(message('ada', 'above_annual_salary')).toContain('annual salary of USD 120,000.00 (USD 15,000.00)');
    expect(message('bob', 'wallet_changed')).toBe(`Bob Babbage is paid to ${staff.carol.wallet}, not to ${staff.bob.wallet}, the wallet their last paid item went to.`);
    expect(message('carol', 'duplicate_wallet')).toBe(`${staff.carol.wallet} is paid for Carol Shaw and also for Bob Babbage in this run.`);
    expect(report.summary).toMatch(/^6 anomalies for 3 of 4 payments totalling USD 28,000\.00: 2 errors, 3 warnings, 1 info\. Most serious: .* is paid for .* Review these before submitting the run\.$/);
    expect(report.source).toBe('heuristic');
  });

  it('compares a run only with what was paid before it', async () => {
    const report = await json<Report>(await detect({ employerId, payrollRunId: firstRunId }));
    expect(flagged(report)).toEqual(['ada new_recipient info', 'bob new_recipient info', 'dan new_recipient info']);
    expect(report.summary).toContain('3 anomalies for 3 of 3 payments totalling USD 12,000.00: 3 info.');
    expect(report.summary).not.toContain('Review');
  });

  it('lets the model reword the summary only, and refuses a rewording with new numbers', async () => {
    reply = () => '{"summary": "Two people share a wallet and Ada is paid far more than usual: check before you submit."}';
    const reworded = await json<Report>(await detect({ employerId, payrollRunId: currentRunId }));
    expect(reworded.source).toBe('model');
    expect(reworded.summary).toBe('Two people share a wallet and Ada is paid far more than usual: check before you submit.');
    expect(reworded.anomalies).toHaveLength(6);

    reply = () => '{"summary": "Ada is paid USD 99,999.00 this month."}';
    const refused = await json<Report>(await detect({ employerId, payrollRunId: currentRunId }));
    expect(refused.source).toBe('heuristic');
    expect(refused.summary).toMatch(/^6 anomalies/);
  });

  it("answers 404 for another employer's run or employer, exactly as for missing ones; 400 and 401", async () => {
    const theirRun = await detect({ employerId, payrollRunId: otherRunId });
    const missingRun = await detect({ employerId, payrollRunId: randomUUID() });
    expect(theirRun.status).toBe(404);
    expect(await json(theirRun)).toEqual(await json(missingRun));
    const theirEmployer = await detect({ employerId: otherEmployerId, payrollRunId: otherRunId });
    const missingEmployer = await detect({ employerId: randomUUID(), payrollRunId: otherRunId });
    expect(theirEmployer.status).toBe(404);
    expect(await json(theirEmployer)).toEqual(await json(missingEmployer));

    for (const [body, field] of [
      [{ employerId }, 'payrollRunId'],
      [{ employerId, payrollRunId: '42' }, 'payrollRunId'],
      [{ payrollRunId: currentRunId }, 'employerId'],
    ] as const) {
      const res = await detect(body);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ field });
    }
    expect((await detect({ employerId, payrollRunId: currentRunId }, '')).status).toBe(401);
  });
});

describe('POST /api/ai/compliance-explain', () => {
  type Action = { kind: string; label: string; employee_id?: string; blocklist_entry_id?: string };
  type Explanation = { wallet_address: string; status: string; checked_at: string | null; reasons: string[]; explanation: string; recommended_actions: string[]; actions: Action[]; source: string };
  const explain = (body: unknown, token?: string) => post('/api/ai/compliance-explain', body, token);
  const BLOCKLISTED = wallet('bb');
  const TIP_REFUSED = wallet('cc');
  const LISTED_LATER = wallet('dd');
  const sanctioned = SNAPSHOT.entries[0]!.address;
  let entryId: string;

  beforeAll(async () => {
    // The real compliance service writes the events; only the chain's TIP-403 answer is faked.
    const tempo = { isAuthorized: (_policy: bigint, account: Address) => Promise.resolve(account.toLowerCase() !== TIP_REFUSED) };
    const compliance = new ComplianceService({ database: t.database, employers: t.services.employers, tempo });
    const caller: Caller = { userId: 'ai-owner', email: 'owner@ai.example', isPlatformAdmin: false, ownedEmployerId: employerId, employeeIds: [] };
    await compliance.syncSanctionsList();
    entryId = (await compliance.addToBlocklist(caller, employerId, { walletAddress: BLOCKLISTED, reason: 'Chargeback fraud reported by the bank' }, 'req-ai-1')).entry.id;
    for (const walletAddress of [BLOCKLISTED, sanctioned, staff.dan.wallet, LISTED_LATER]) await compliance.check({ walletAddress, employerId });
    await compliance.check({ walletAddress: TIP_REFUSED, employerId, policyId: 7 });
    await compliance.addToBlocklist(caller, employerId, { walletAddress: LISTED_LATER, reason: 'Employee left' }, 'req-ai-2');
  });

  it('explains a wallet blocked by the employer blocklist, with the entry to remove', async () => {
    const res = await explain({ employerId, walletAddress: BLOCKLISTED.toUpperCase().replace('0X', '0x') });
    expect(res.status).toBe(200);
    const body = await json<Explanation>(res);
    expect(body).toMatchObject({
      wallet_address: BLOCKLISTED,
      status: 'BLOCKED',
      reasons: ['On your employer blocklist (reason: Chargeback fraud reported by the bank).'],
      source: 'heuristic',
    });
    expect(body.checked_at).toEqual(expect.any(String));
    expect(body.explanation).toContain(`Payments to ${BLOCKLISTED} are blocked`);
    expect(body.explanation).toContain('risk score 90 of 100');
    expect(body.recommended_actions).toEqual([
      'If the block is no longer justified, remove the wallet from your blocklist (Blocked wallets, on the Compliance page). Payroll screens the wallet again before it pays it: start a run on the Payroll page.',
    ]);
    // The page turns these into links: the entry to remove, then a run that screens the wallet again.
    expect(body.actions).toEqual([
      { kind: 'review_blocklist', label: 'Review your blocklist', blocklist_entry_id: entryId },
      { kind: 'run_payroll', label: 'Start a payroll run' },
    ]);
  });

  it('speaks of the web app, never of API routes, in every case', async () => {
    for (const walletAddress of [BLOCKLISTED, sanctioned, TIP_REFUSED, LISTED_LATER, staff.dan.wallet, wallet('12')]) {
      const body = await json<Explanation>(await explain({ employerId, walletAddress }));
      const text = [body.explanation, ...body.reasons, ...body.recommended_actions, ...body.actions.map((a) => a.label)].join(' ');
      expect(text).not.toMatch(/\/api\/|\b(GET|POST|PUT|PATCH|DELETE) \//);
    }
  });

  it('explains a sanctions match and a TIP-403 refusal', async () => {
    const sanctions = await json<Explanation>(await explain({ employerId, walletAddress: sanctioned }));
    expect(sanctions.status).toBe('BLOCKED');
    expect(sanctions.reasons[0]).toMatch(/^On the sanctions list: OFAC SDN: .+\.$/);
    expect(sanctions.recommended_actions[0]).toMatch(/^Do not pay this wallet\. A sanctions match cannot be overridden/);

    const tip = await json<Explanation>(await explain({ employerId, walletAddress: TIP_REFUSED }));
    expect(tip).toMatchObject({ status: 'BLOCKED', reasons: ['Not authorized by TIP-403 policy 7.'] });
    expect(tip.recommended_actions[0]).toContain('Authorize the wallet in TIP-403 policy 7');
  });

  it("explains a cleared wallet, one listed since its check, and one never checked", async () => {
    const dan = await json<Explanation>(await explain({ employerId, walletAddress: staff.dan.wallet }));
    expect(dan).toMatchObject({ status: 'CLEARED', recommended_actions: ['No action needed.'], actions: [] });
    expect(dan.explanation).toContain('(the wallet of Dan Dennett) was cleared');

    const later = await json<Explanation>(await explain({ employerId, walletAddress: LISTED_LATER }));
    expect(later.status).toBe('CLEARED');
    expect(later.recommended_actions[0]).toMatch(/^Do not pay this wallet: it is on your employer blocklist now \(Employee left\)\./);

    expect(later.actions).toEqual([{ kind: 'review_blocklist', label: 'Review your blocklist', blocklist_entry_id: expect.any(String) }]);

    const never = await json<Explanation>(await explain({ employerId, walletAddress: wallet('12') }));
    expect(never).toMatchObject({ status: 'UNKNOWN', checked_at: null, actions: [{ kind: 'run_payroll', label: 'Start a payroll run' }] });
    expect(never.recommended_actions[0]).toContain('start a run on the Payroll page');
  });

  it("never reads another employer's ledger; 404 for its employer; 400 and 401", async () => {
    // The other employer never checked the wallet this employer blocked.
    const theirs = await json<Explanation>(await explain({ employerId: otherEmployerId, walletAddress: BLOCKLISTED }, otherOwner));
    expect(theirs.status).toBe('UNKNOWN');
    const foreign = await explain({ employerId: otherEmployerId, walletAddress: BLOCKLISTED });
    const missing = await explain({ employerId: randomUUID(), walletAddress: BLOCKLISTED });
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toEqual(await json(missing));

    const bad = await explain({ employerId, walletAddress: '0x1234' });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ field: 'walletAddress' });
    expect((await explain({ employerId, walletAddress: BLOCKLISTED }, '')).status).toBe(401);
  });

  it('lets the model reword the explanation only', async () => {
    reply = () => '{"explanation": "Your own blocklist stops payments to this wallet because of reported chargeback fraud."}';
    const body = await json<Explanation>(await explain({ employerId, walletAddress: BLOCKLISTED }));
    expect(body).toMatchObject({ status: 'BLOCKED', source: 'model', explanation: 'Your own blocklist stops payments to this wallet because of reported chargeback fraud.' });
    expect(body.reasons).toEqual(['On your employer blocklist (reason: Chargeback fraud reported by the bank).']);
  });

  it("keeps the rules' text when the model's rewording names an API route", async () => {
    reply = () => `{"explanation": "Your blocklist stops this wallet: call DELETE /api/employers/blocklist to unblock it."}`;
    const body = await json<Explanation>(await explain({ employerId, walletAddress: BLOCKLISTED }));
    expect(body.source).toBe('heuristic');
    expect(body.explanation).toContain(`Payments to ${BLOCKLISTED} are blocked`);
  });
});

describe('OpenAPI', () => {
  it('documents the three routes under AI with their errors', async () => {
    const doc = await json<{ paths: Record<string, { post: { tags: string[]; responses: Record<string, unknown> } }> }>(await t.request('GET', '/api/openapi.json'));
    for (const path of ['/api/ai/parse-csv', '/api/ai/anomaly-detect', '/api/ai/compliance-explain']) {
      expect(doc.paths[path]!.post.tags).toEqual(['AI']);
      expect(Object.keys(doc.paths[path]!.post.responses).sort()).toEqual(['200', '400', '401', '404', '413', '415', '503']);
    }
  });
});

describe('live mode', () => {
  /** The app in live mode with the AI routes over `ai`, sharing the test database. */
  function liveApp(ai: AiProvider) {
    const app = buildApp(
      { config: { ...t.config, mode: 'live' }, database: t.database, log: createLogger('silent'), verifyIdentity: t.verifyIdentity, devIdentityProvider: null, readiness: [] },
      t.services,
    );
    app.route('/', aiRoutes({ mode: 'live', ai, rules: new AiService({ ai, employers: t.services.employers, database: t.database }), requireUser: requireUser(t.verifyIdentity, t.services.users) }));
    return (path: string, body: unknown, token?: string) =>
      Promise.resolve(
        app.request(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
        }),
      );
  }

  it('answers 503 AI_NOT_CONFIGURED on every AI route with the offline provider, after authentication', async () => {
    const request = liveApp(new OfflineAiProvider());
    for (const [path, body] of [
      ['/api/ai/parse-csv', { employerId, headers: ['Email'] }],
      ['/api/ai/anomaly-detect', { employerId, payrollRunId: currentRunId }],
      ['/api/ai/compliance-explain', { employerId, walletAddress: wallet('12') }],
      ['/api/ai/parse-csv', {}], // before validation: nothing is worked on
    ] as const) {
      const res = await request(path, body, owner);
      expect(res.status, path).toBe(503);
      expect(await json(res)).toEqual({ error: 'AI is not configured on this server: set AI_PROVIDER and AI_API_KEY.', code: 'AI_NOT_CONFIGURED' });
      expect((await request(path, body)).status).toBe(401);
    }
  });

  it('serves the routes with a configured provider', async () => {
    const request = liveApp(scripted);
    const res = await request('/api/ai/parse-csv', { employerId, headers: ['Email'] }, owner);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ mapping: { email: 'Email' }, source: 'heuristic' });
  });
});
