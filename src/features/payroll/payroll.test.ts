import { randomUUID } from 'node:crypto';
import { createWalletClient, erc20Abi, http, parseEventLogs, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { loseAnswer, proofMaker, railA, type PayingFetch } from '../../../test/support/pay.js';
import { payrollTreasuryAbi, stablecoinAbi } from '../../chains/evm/abis.js';
import { formatUsd } from '../../money.js';
import { decodeMemo } from '../memo/codec.js';
import { TreasuryService } from '../treasury/service.js';
import { PayrollService } from './service.js';
import * as store from './store.js';

/**
 * Payroll end to end on the local server: internal prepare/submit/runs/transactions with the
 * owner's bearer, and the paid execute/payslip/history through the real gate with mppx (rail A).
 */
let t: TestApp;
let server: LoopbackServer;
let treasury: TreasuryService;
let ownerToken: string;
let employerId: string;
let staff: { id: string; wallet: Address; email: string }[];
let rival: { token: string; employerId: string; employeeId: string; wallet: Address };

const wallet = () => privateKeyToAccount(generatePrivateKey()).address;
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

async function createEmployer(sub: string, body: Record<string, unknown> = {}) {
  const token = await t.token(sub, `${sub}@payroll.example`);
  const employer = await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc`, ...body } }));
  return { token, employerId: employer.id };
}

async function addEmployee(token: string, id: string, name: string, extra: Record<string, unknown> = {}) {
  const address = wallet();
  const email = `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@payroll.example`;
  const response = await t.request('POST', `/api/employers/${id}/team`, {
    token,
    body: { email, full_name: name, wallet_address: address, cost_centre: 'ENG', ...extra },
  });
  expect(response.status).toBe(201);
  return { id: (await json<{ id: string }>(response)).id, wallet: address, email };
}

/** Mints to the service wallet and deposits into the employer's treasury account. */
async function fundTreasury(id: string, usd: string) {
  const service = t.chains!.tempo.serviceAddress;
  expect((await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: usd } })).status).toBe(200);
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), BigInt(Math.round(Number(usd) * 1e6)));
}

const prepare = (body: unknown, token = ownerToken, id = employerId) => t.request('POST', `/api/employers/${id}/payroll`, { token, body });
const tokenBalance = (owner: Address) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

let ownerPays: PayingFetch;
const asOwner = { 'X-Identity-Token': '' };

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  ({ token: ownerToken, employerId } = await createEmployer('payroll-owner'));
  staff = [await addEmployee(ownerToken, employerId, 'Ada'), await addEmployee(ownerToken, employerId, 'Grace'), await addEmployee(ownerToken, employerId, 'Alan')];
  await fundTreasury(employerId, '100000');
  const other = await createEmployer('payroll-rival');
  const rivalEmployee = await addEmployee(other.token, other.employerId, 'Mallory');
  rival = { ...other, employeeId: rivalEmployee.id, wallet: rivalEmployee.wallet };
  ownerPays = (await railA(t, server.url, '50')).pay;
  asOwner['X-Identity-Token'] = ownerToken;
});

afterAll(async () => {
  await server.close();
  await t.close();
});

const threeItems = () => [
  { employee_id: staff[0]!.id, amount_usd: '5000.25' },
  { employee_id: staff[1]!.id, amount_usd: '6000' },
  { employee_id: staff[2]!.id, amount_usd: '4000.000001', wallet_address: staff[2]!.wallet },
];

describe('prepare -> execute -> payslip -> history (3 employees)', () => {
  it('pays all three in one batch transaction with our memos, and serves payslips and history', async () => {
    const before = await Promise.all(staff.map((s) => tokenBalance(s.wallet)));
    const prepared = await prepare({ items: threeItems(), pay_period_start: '2026-11-01', pay_period_end: '2026-11-30' });
    expect(prepared.status).toBe(201);
    const draft = await json<{ payroll_run_id: string; calldata: { to: string; data: Hex; chain_id: number }; items: { memo: Hex; amount_usd: string }[]; total_amount_usd: string }>(prepared);
    expect(draft).toMatchObject({ status: 'draft', recipient_count: 3, total_amount_usd: '15000.250001', pay_period_start: '2026-11-01' });
    expect(draft.calldata).toMatchObject({ chain_id: 4217, to: t.chains!.tempo.contracts.payrollTreasury });
    expect(draft.items.map((i) => decodeMemo(i.memo))).toEqual(draft.items.map(() => expect.objectContaining({ type: 'salary', pay_period_end: '2026-11-30', cost_centre_tag: expect.any(String) })));

    const executed = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: asOwner });
    expect(executed.status).toBe(200);
    const result = await json<{ tx_hash: Hex }>(executed);
    expect(result).toMatchObject({ success: true, payroll_run_id: draft.payroll_run_id, recipient_count: 3, employer_account_id: expect.any(String) });

    // One transaction paid everyone, with each item's memo.
    const receipt = await t.chains!.tempo.connection.publicClient.getTransactionReceipt({ hash: result.tx_hash });
    const memoTransfers = parseEventLogs({ abi: stablecoinAbi, logs: receipt.logs, eventName: 'TransferWithMemo' });
    expect(memoTransfers.map((e) => e.args.memo).sort()).toEqual(draft.items.map((i) => i.memo).sort());
    expect(parseEventLogs({ abi: payrollTreasuryAbi, logs: receipt.logs, eventName: 'PayrollPayment' })).toHaveLength(3);
    const after = await Promise.all(staff.map((s) => tokenBalance(s.wallet)));
    expect(after.map((a, i) => a - before[i]!)).toEqual([5_000_250_000n, 6_000_000_000n, 4_000_000_001n]);

    const runs = await json<{ runs: { id: string; status: string; tx_hash: string; submitted_by: string }[] }>(
      await t.request('GET', `/api/employers/${employerId}/payroll/runs`, { token: ownerToken }),
    );
    expect(runs.runs.find((r) => r.id === draft.payroll_run_id)).toMatchObject({ status: 'confirmed', tx_hash: result.tx_hash, submitted_by: 'agent' });

    // The employee reads their own payslip and history with their identity token.
    // Signing in with the verified email links the employee record.
    const employeeToken = await t.token('payroll-ada', staff[0]!.email);
    const { pay: employeePays } = await railA(t, server.url);
    const slip = await employeePays(`/api/mpp/payslips/${draft.payroll_run_id}/${staff[0]!.id}`, { headers: { 'X-Identity-Token': employeeToken } });
    expect(slip.status).toBe(200);
    const { payslip } = await json<{ payslip: Record<string, unknown> }>(slip);
    expect(payslip).toMatchObject({
      run_id: draft.payroll_run_id,
      employee_id: staff[0]!.id,
      amount_usd: 5000.25,
      status: 'paid',
      tx_hash: result.tx_hash,
      memo: { memo: draft.items[0]!.memo, fields: expect.objectContaining({ type: 'salary' }) },
      block_number: Number(receipt.blockNumber),
    });
    expect(payslip.finalized_at).toEqual(expect.any(String));

    const history = await employeePays(`/api/mpp/employee/${staff[0]!.id}/history?limit=1`, { headers: { 'X-Identity-Token': employeeToken } });
    expect(history.status).toBe(200);
    expect(await json(history)).toMatchObject({ employee_id: staff[0]!.id, count: 1, payments: [{ amount_usd: 5000.25, status: 'paid', tx_hash: result.tx_hash }] });

    // The employee cannot read a colleague's payslip.
    const colleague = await employeePays(`/api/mpp/payslips/${draft.payroll_run_id}/${staff[1]!.id}`, { headers: { 'X-Identity-Token': employeeToken } });
    expect(colleague.status).toBe(404);
  });

  it('executes a run exactly once when two calls race: one batch on chain, the other 409', async () => {
    const draft = await json<{ payroll_run_id: string }>(await prepare({ items: threeItems() }));
    const before = await tokenBalance(staff[0]!.wallet);
    const key = await json<{ agent_key: string }>(await t.request('POST', `/api/employers/${employerId}/agent-key`, { token: ownerToken }));
    const [first, second] = await Promise.all([(await railA(t, server.url)).pay, (await railA(t, server.url)).pay]);
    const results = await Promise.all([
      first!('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: asOwner }),
      second!('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: { 'X-Agent-Key': key.agent_key } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const conflict = await json(results.find((r) => r.status === 409)!);
    expect(conflict).toMatchObject({ code: 'RUN_NOT_DRAFT' });
    expect((await tokenBalance(staff[0]!.wallet)) - before).toBe(5_000_250_000n);
    // And a third, later call is refused too.
    const again = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: asOwner });
    expect(again.status).toBe(409);
  });
});

describe('crash recovery', () => {
  /** What an executor leaves when it dies holding a run's one batch: the run claimed, the batch planned and claimed. */
  async function claimOneBatch(runId: string) {
    await store.claimDraft(t.database.db, runId, { submittedBy: 'agent', txHash: null });
    await t.database.transaction((tx) => store.planBatches(tx.db, runId, 400));
    const [batch] = await store.batchesOfRun(t.database.db, runId);
    const token = randomUUID();
    expect(await store.claimBatch(t.database.db, batch!.id, token, new Date(0))).toBe(true);
    const items = await store.batchItems(t.database.db, runId, 0);
    const transfers = items.map((i) => ({ recipient: i.walletAddress as Address, amount: i.amount, memo: i.memo as Hex }));
    return { record: (hash: Hex, raw: Hex) => store.recordBatchBroadcast(t.database.db, batch!, token, hash, raw), transfers };
  }

  it('converges after a crash between signing and broadcast: the same bytes are sent once and the run confirms', async () => {
    const draft = await json<{ payroll_run_id: string }>(await prepare({ items: [{ employee_id: staff[1]!.id, amount_usd: '7' }] }));
    const runId = draft.payroll_run_id;
    const payroll = new PayrollService({ database: t.database, employers: t.services.employers, treasury, tempo: t.chains!.tempo, screen: null });
    const before = await tokenBalance(staff[1]!.wallet);
    // The process claims the run, signs and records the batch, then dies before broadcasting it.
    const { record, transfers } = await claimOneBatch(runId);
    // (A hook that never returns: nothing after it runs, as in a killed process. A hook that throws
    // would instead have its nonce filled, and these bytes could never mine.)
    let recorded!: () => void;
    const wasRecorded = new Promise<void>((resolve) => (recorded = resolve));
    void t.chains!.tempo.executeBatchPayroll(await treasury.accountId(employerId), transfers, {
      beforeBroadcast: async ({ hash, raw }) => {
        expect(await record(hash, raw)).toBe(true);
        recorded();
        await new Promise(() => {});
      },
    });
    await wasRecorded;
    expect(await tokenBalance(staff[1]!.wallet)).toBe(before);

    // The reconciler sends the recorded bytes, then confirms from the receipt; more passes change nothing.
    await payroll.reconcile(runId);
    const settled = await payroll.reconcile(runId);
    expect(settled).toMatchObject({ status: 'confirmed', submittedBy: 'agent' });
    await payroll.reconcile(runId);
    expect((await tokenBalance(staff[1]!.wallet)) - before).toBe(7_000_000n);
  });

  it('confirms, not fails, a batch that mined between reading its receipt and sending it again ("nonce too low")', async () => {
    const draft = await json<{ payroll_run_id: string }>(await prepare({ items: [{ employee_id: staff[2]!.id, amount_usd: '3' }] }));
    const runId = draft.payroll_run_id;
    const before = await tokenBalance(staff[2]!.wallet);
    const { record, transfers } = await claimOneBatch(runId);
    const tempo = t.chains!.tempo;
    // The executing process records and broadcasts; it mines.
    await tempo.executeBatchPayroll(await treasury.accountId(employerId), transfers, {
      beforeBroadcast: async ({ hash, raw }) => void (await record(hash, raw)),
    });
    // A reconciler that read "no receipt" just before it mined: its resend says the nonce is used.
    let receiptReads = 0;
    const connection = new Proxy(tempo.connection, {
      get: (target, key) =>
        key === 'receipt'
          ? (hash: Hex) => (receiptReads++ === 0 ? Promise.resolve(null) : target.receipt(hash))
          : key === 'rebroadcast'
            ? () => Promise.reject(new Error('nonce too low: next nonce 9, tx nonce 8'))
            : Reflect.get(target, key, target),
    });
    const lateTempo = new Proxy(tempo, { get: (target, key) => (key === 'connection' ? connection : Reflect.get(target, key, target)) });
    const reconciler = new PayrollService({ database: t.database, employers: t.services.employers, treasury, tempo: lateTempo, screen: null });
    expect(await reconciler.reconcile(runId)).toMatchObject({ status: 'confirmed' });
    expect((await tokenBalance(staff[2]!.wallet)) - before).toBe(3_000_000n);
  });
});

describe('the owner signs: prepare -> sign -> submit', () => {
  it('records the hash once, confirms the run from its receipt, and refuses a second submit', async () => {
    const admin = privateKeyToAccount(generatePrivateKey());
    const own = await createEmployer('payroll-self-signer', { admin_wallet: admin.address });
    const worker = await addEmployee(own.token, own.employerId, 'Linus');
    await fundTreasury(own.employerId, '1000');
    const draft = await json<{ payroll_run_id: string; calldata: { to: Address; data: Hex } }>(
      await prepare({ items: [{ employee_id: worker.id, amount_usd: '12.5' }] }, own.token, own.employerId),
    );
    await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: admin.address, amount: '1' } });
    const signer = createWalletClient({ account: admin, chain: t.chains!.tempo.connection.chain, transport: http(`${server.url}/api/dev/rpc/tempo`) });
    const hash = await signer.sendTransaction({ to: draft.calldata.to, data: draft.calldata.data });
    await t.chains!.tempo.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });

    const submit = (body: unknown, runId = draft.payroll_run_id, token = own.token, id = own.employerId) =>
      t.request('POST', `/api/employers/${id}/payroll/${runId}/submit`, { token, body });
    const submitted = await submit({ tx_hash: hash });
    expect(submitted.status).toBe(200);
    expect(await json(submitted)).toMatchObject({ status: 'confirmed', tx_hash: hash, submitted_by: 'owner', recipient_count: 1 });
    expect(await tokenBalance(worker.wallet)).toBe(12_500_000n);

    const twice = await submit({ tx_hash: hash });
    expect(twice.status).toBe(409);
    expect(await json(twice)).toMatchObject({ code: 'RUN_NOT_DRAFT', status: 'confirmed' });

    // Another draft cannot claim the same hash; a hash of a transaction that pays something else fails the run.
    const other = await json<{ payroll_run_id: string }>(await prepare({ items: [{ employee_id: worker.id, amount_usd: '1' }] }, own.token, own.employerId));
    const reused = await submit({ tx_hash: hash }, other.payroll_run_id);
    expect(reused.status).toBe(409);
    expect(await json(reused)).toMatchObject({ code: 'TX_HASH_IN_USE' });
    const unrelated = await signer.sendTransaction({ to: admin.address, value: 0n });
    await t.chains!.tempo.connection.publicClient.waitForTransactionReceipt({ hash: unrelated, pollingInterval: 5 });
    expect(await json(await submit({ tx_hash: unrelated }, other.payroll_run_id))).toMatchObject({ status: 'failed', failure_reason: 'the transaction does not pay this run' });

    // The rival owner cannot submit to this employer's run.
    expect((await submit({ tx_hash: unrelated }, other.payroll_run_id, rival.token, own.employerId)).status).toBe(404);
  });
});

describe('refusals', () => {
  it('names a TIP-403-blocked recipient in a 422 and stores nothing', async () => {
    const { policyId } = await t.chains!.tempo.createPolicy('blacklist', [staff[1]!.wallet]);
    await t.database.pool.query('UPDATE employers SET tip403_policy_id = $1 WHERE id = $2', [policyId.toString(), employerId]);
    try {
      const runsBefore = await t.database.pool.query('SELECT count(*)::int AS n FROM payroll_runs WHERE employer_id = $1', [employerId]);
      const refused = await prepare({ items: threeItems() });
      expect(refused.status).toBe(422);
      const body = await json<{ code: string; error: string; blocked_wallets: { employee_id: string; wallet_address: string }[] }>(refused);
      expect(body.code).toBe('RECIPIENT_BLOCKED');
      expect(body.error).toContain(staff[1]!.wallet);
      expect(body.blocked_wallets).toEqual([expect.objectContaining({ employee_id: staff[1]!.id, wallet_address: staff[1]!.wallet })]);
      const runsAfter = await t.database.pool.query('SELECT count(*)::int AS n FROM payroll_runs WHERE employer_id = $1', [employerId]);
      expect(runsAfter.rows[0].n).toBe(runsBefore.rows[0].n);
      // The others alone pass the policy.
      expect((await prepare({ items: [threeItems()[0]] })).status).toBe(201);
    } finally {
      await t.database.pool.query('UPDATE employers SET tip403_policy_id = NULL WHERE id = $1', [employerId]);
    }
  });

  it('refuses a run the treasury cannot cover (422) and one whose employee cannot be paid now', async () => {
    const short = await prepare({ items: [{ employee_id: staff[0]!.id, amount_usd: '999999999' }] });
    expect(short.status).toBe(422);
    expect(await json(short)).toMatchObject({ code: 'INSUFFICIENT_TREASURY', required_usd: '999999999.000000' });

    await t.database.pool.query('UPDATE employees SET payroll_paused = true WHERE id = $1', [staff[2]!.id]);
    try {
      const paused = await prepare({ items: threeItems() });
      expect(paused.status).toBe(422);
      expect(await json(paused)).toMatchObject({ code: 'EMPLOYEE_NOT_PAYABLE', employees: [{ employee_id: staff[2]!.id, reason: 'payroll paused' }] });
    } finally {
      await t.database.pool.query('UPDATE employees SET payroll_paused = false WHERE id = $1', [staff[2]!.id]);
    }
  });

  it('fails a run the chain refuses at execute time, keeping nothing paid', async () => {
    const draft = await json<{ payroll_run_id: string }>(await prepare({ items: [{ employee_id: staff[0]!.id, amount_usd: '1' }] }));
    // The treasury is drained between prepare and execute.
    const accountId = await treasury.accountId(employerId);
    const account = await t.chains!.tempo.treasuryAccount(accountId);
    await t.chains!.tempo.lockTreasury(accountId, account!.available);
    try {
      const refused = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: asOwner });
      expect(refused.status).toBe(422);
      expect(await json(refused)).toMatchObject({ code: 'INSUFFICIENT_TREASURY', payroll_run_id: draft.payroll_run_id });
      const { rows } = await t.database.pool.query('SELECT status FROM payroll_runs WHERE id = $1', [draft.payroll_run_id]);
      expect(rows[0].status).toBe('failed');
    } finally {
      await t.chains!.tempo.unlockTreasury(accountId, account!.available);
    }
  });
});

describe('tenant isolation', () => {
  it("answers another employer's run, employee and wallet like missing ones", async () => {
    const rivalDraft = await json<{ payroll_run_id: string }>(await (async () => {
      await fundTreasury(rival.employerId, '100');
      return prepare({ items: [{ employee_id: rival.employeeId, amount_usd: '1' }] }, rival.token, rival.employerId);
    })());
    // Their run through our identity: 404, same body as a missing run.
    const foreign = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: rivalDraft.payroll_run_id }, headers: asOwner });
    const missing = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: randomUUID() }, headers: asOwner });
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toEqual(await json(missing));
    // Paying without identity buys nothing either.
    expect((await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: rivalDraft.payroll_run_id } })).status).toBe(404);
    expect((await ownerPays(`/api/mpp/payslips/${rivalDraft.payroll_run_id}/${rival.employeeId}`, { headers: asOwner })).status).toBe(404);
    expect((await ownerPays(`/api/mpp/employee/${rival.employeeId}/history`, { headers: asOwner })).status).toBe(404);

    // Their employee, or our employee at their wallet, in our run.
    const theirEmployee = await prepare({ items: [{ employee_id: rival.employeeId, amount_usd: '1' }] });
    expect(theirEmployee.status).toBe(404);
    expect(await json(theirEmployee)).toMatchObject({ field: 'items.0.employee_id' });
    const theirWallet = await prepare({ items: [{ employee_id: staff[0]!.id, amount_usd: '1', wallet_address: rival.wallet }] });
    expect(theirWallet.status).toBe(404);
    expect(await json(theirWallet)).toMatchObject({ field: 'items.0.wallet_address' });
    // Their employer's routes.
    expect((await prepare({ items: threeItems() }, ownerToken, rival.employerId)).status).toBe(404);
    expect((await t.request('GET', `/api/employers/${rival.employerId}/payroll/runs`, { token: ownerToken })).status).toBe(404);
    expect((await t.request('POST', `/api/employers/${employerId}/payroll/${rivalDraft.payroll_run_id}/submit`, { token: ownerToken, body: { tx_hash: `0x${'1'.repeat(64)}` } })).status).toBe(404);
    // The rival never sees our transactions.
    const theirs = await json<{ transactions: { employee_id: string }[] }>(await t.request('GET', '/api/transactions', { token: rival.token }));
    expect(theirs.transactions.every((tx) => tx.employee_id === rival.employeeId)).toBe(true);
  });
});

describe('validation', () => {
  it('names the field of every invalid prepare body', async () => {
    const id = staff[0]!.id;
    const cases: [unknown, string][] = [
      [{}, 'items'],
      [{ items: [] }, 'items'],
      [{ items: [{ employee_id: 'x', amount_usd: '1' }] }, 'items.0.employee_id'],
      [{ items: [{ employee_id: id, amount_usd: 1 }] }, 'items.0.amount_usd'],
      [{ items: [{ employee_id: id, amount_usd: '1.0000001' }] }, 'items.0.amount_usd'],
      [{ items: [{ employee_id: id, amount_usd: '1e3' }] }, 'items.0.amount_usd'],
      [{ items: [{ employee_id: id, amount_usd: '0' }] }, 'items.0.amount_usd'],
      [{ items: [{ employee_id: id, amount_usd: '-1' }] }, 'items.0.amount_usd'],
      [{ items: [{ employee_id: id, amount_usd: '1', wallet_address: '0x12' }] }, 'items.0.wallet_address'],
      [{ items: [{ employee_id: id, amount_usd: '1' }, { employee_id: id, amount_usd: '2' }] }, 'items.1.employee_id'],
      [{ items: [{ employee_id: id, amount_usd: '1' }], pay_period_start: '2026-02-30' }, 'pay_period_start'],
      [{ items: [{ employee_id: id, amount_usd: '1' }], pay_period_start: '2026-11-02', pay_period_end: '2026-11-01' }, 'pay_period_end'],
      [{ items: Array.from({ length: 10_001 }, () => ({ employee_id: id, amount_usd: '1' })) }, 'items'],
    ];
    for (const [body, field] of cases) {
      const response = await prepare(body);
      expect(response.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect((await json<{ field: string }>(response)).field).toBe(field);
    }
    expect((await t.request('POST', `/api/employers/${employerId}/payroll`, { body: { items: threeItems() } })).status).toBe(401);
  });

  it('validates submit, runs, transactions, execute and history input', async () => {
    const runId = randomUUID();
    for (const body of [{}, { tx_hash: '0x12' }, { tx_hash: 5 }]) {
      const response = await t.request('POST', `/api/employers/${employerId}/payroll/${runId}/submit`, { token: ownerToken, body });
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({ field: 'tx_hash' });
    }
    for (const query of ['page=0', 'limit=0', 'limit=101', 'page=x']) {
      const response = await t.request('GET', `/api/employers/${employerId}/payroll/runs?${query}`, { token: ownerToken });
      expect(response.status, query).toBe(400);
    }
    for (const [query, field] of [
      ['page=0', 'page'],
      ['limit=101', 'limit'],
      ['employeeId=nope', 'employeeId'],
      ['status=sent', 'status'],
      ['from=yesterday', 'from'],
      ['to=2026-13-01T00:00:00Z', 'to'],
    ]) {
      const response = await t.request('GET', `/api/transactions?${query}`, { token: ownerToken });
      expect(response.status, query).toBe(400);
      expect(await json(response)).toMatchObject({ field });
    }
    for (const body of [{}, { payrollRunId: 'nope' }]) {
      const response = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body, headers: asOwner });
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({ field: 'payrollRunId' });
    }
    for (const limit of ['0', '101', 'x']) {
      const response = await ownerPays(`/api/mpp/employee/${staff[0]!.id}/history?limit=${limit}`, { headers: asOwner });
      expect(response.status, limit).toBe(400);
      expect(await json(response)).toMatchObject({ field: 'limit' });
    }
    expect((await ownerPays(`/api/mpp/payslips/nope/${staff[0]!.id}`, { headers: asOwner })).status).toBe(400);
    // Unpaid calls are 402 before anything else.
    expect((await fetch(`${server.url}/api/mpp/payroll/execute`, { method: 'POST', body: '{}' })).status).toBe(402);
  });
});

describe('GET /api/transactions', () => {
  it('filters by employee, status and time, and pages', async () => {
    const all = await json<{ transactions: { employee_id: string; status: string; created_at: string }[]; total: number }>(
      await t.request('GET', '/api/transactions?limit=100', { token: ownerToken }),
    );
    expect(all.total).toBeGreaterThan(3);
    const ada = await json<{ transactions: { employee_id: string }[]; total: number }>(
      await t.request('GET', `/api/transactions?employeeId=${staff[0]!.id}&status=paid`, { token: ownerToken }),
    );
    expect(ada.total).toBeGreaterThan(0);
    expect(ada.transactions.every((tx) => tx.employee_id === staff[0]!.id)).toBe(true);
    const future = await json<{ total: number }>(await t.request('GET', '/api/transactions?from=2100-01-01T00:00:00Z', { token: ownerToken }));
    expect(future.total).toBe(0);
    const page = await json<{ transactions: unknown[]; page: number; limit: number }>(await t.request('GET', '/api/transactions?page=2&limit=1', { token: ownerToken }));
    expect(page).toMatchObject({ page: 2, limit: 1 });
    expect(page.transactions).toHaveLength(1);
    // A user who owns no employer has no transactions to list.
    expect((await t.request('GET', '/api/transactions', { token: await t.token('nobody-owner') })).status).toBe(404);
  });
});

describe('charge before acting', () => {
  const EXECUTE = '/api/mpp/payroll/execute';
  const execute = (proof: Record<string, string>, body: unknown) =>
    fetch(`${server.url}${EXECUTE}`, { method: 'POST', headers: { 'content-type': 'application/json', ...asOwner, ...proof }, body: JSON.stringify(body) });
  const draftFor = async (employee: { id: string }, amountUsd: string) =>
    (await json<{ payroll_run_id: string }>(await prepare({ items: [{ employee_id: employee.id, amount_usd: amountUsd }] }))).payroll_run_id;
  const runRow = async (runId: string) =>
    (await t.database.pool.query<{ status: string; fee_payment_id: string | null }>('SELECT status, fee_payment_id FROM payroll_runs WHERE id = $1', [runId])).rows[0]!;



  it('two executes at once from a payer who can cover one fee: one run paid, the other refused (402) before anything moved', async () => {
    const recipients = [staff[0]!, staff[1]!];
    const runs = [await draftFor(recipients[0]!, '2'), await draftFor(recipients[1]!, '3')];
    const payer = await proofMaker(t, server.url, 'A', '1.00');
    const proofs = [await payer.proof(EXECUTE), await payer.proof(EXECUTE)];
    const before = await Promise.all(recipients.map((s) => tokenBalance(s.wallet)));

    const responses = await Promise.all(runs.map((runId, i) => execute(proofs[i]!, { payrollRunId: runId })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
    expect((await json<{ code: string }>(responses.find((r) => r.status === 402)!)).code).toBe('PAYMENT_SETTLEMENT_FAILED');

    // Exactly one batch: the paid run's recipient received it, the refused run is still a draft.
    const paid = responses.findIndex((r) => r.status === 200);
    const refused = 1 - paid;
    const received = await Promise.all(recipients.map(async (s, i) => (await tokenBalance(s.wallet)) - before[i]!));
    expect(received[paid]).toBe([2_000_000n, 3_000_000n][paid]);
    expect(received[refused]).toBe(0n);
    expect(await runRow(runs[paid]!)).toMatchObject({ status: 'confirmed', fee_payment_id: expect.any(String) });
    expect(await runRow(runs[refused]!)).toEqual({ status: 'draft', fee_payment_id: null });
    expect(await tokenBalance(payer.payer as Address)).toBe(0n);
  });

  it('a fee whose answer was lost: the same proof and request get the first answer again, with no second batch and no second charge', async () => {
    const runId = await draftFor(staff[2]!, '4');
    const payer = await proofMaker(t, server.url, 'A', '5');
    const proof = await payer.proof(EXECUTE);
    const first = await execute(proof, { payrollRunId: runId });
    expect(first.status).toBe(200);
    const answer = await json(first);
    const paymentId = await loseAnswer(t, { payer: payer.payer });
    const paidOnce = await tokenBalance(staff[2]!.wallet);

    const again = await execute(proof, { payrollRunId: runId });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(answer);
    expect(await tokenBalance(staff[2]!.wallet)).toBe(paidOnce);
    const { rows } = await t.database.pool.query<{ id: string }>('SELECT id FROM payroll_runs WHERE fee_payment_id = $1', [paymentId]);
    expect(rows.map((r) => r.id)).toEqual([runId]);
    expect(await tokenBalance(payer.payer as Address)).toBe(4_000_000n);

    // Served now: a third time is a replay.
    const third = await execute(proof, { payrollRunId: runId });
    expect(third.status).toBe(402);
    expect((await json<{ code: string }>(third)).code).toBe('PAYMENT_ALREADY_USED');
  });
});

describe('advances netted against payroll (issue 26, item 3)', () => {
  const ADVANCE = '/api/mpp/employee/advance';
  type Draft = { payroll_run_id: string; total_amount_usd: string; items: { amount_usd: string; gross_amount_usd: string; advance_deduction_usd: string; memo: Hex }[] };
  /** An employee with a salary who has claimed an advance; returns them and what the advance paid. */
  async function advanced() {
    const employee = await addEmployee(ownerToken, employerId, 'Advanced', { annual_salary_usd: '100000' });
    const token = await t.token(`payroll-advanced-${employee.id}`, employee.email);
    expect((await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const claimed = await ownerPays(ADVANCE, { method: 'POST', body: { employeeAddress: employee.wallet }, headers: { 'X-Identity-Token': token } });
    expect(claimed.status).toBe(200);
    const amount = BigInt((await json<{ amount: string }>(claimed)).amount);
    expect(amount).toBeGreaterThan(0n);
    return { employee, amount };
  }
  const runOf = (employee: { id: string }) => prepare({ items: [{ employee_id: employee.id, amount_usd: '1000' }] });
  const GROSS = 1_000_000_000n;

  it('prepare deducts the advances claimed since the last run, the payslip shows the deduction, and the next run deducts nothing', async () => {
    const { employee, amount } = await advanced();
    const prepared = await runOf(employee);
    expect(prepared.status).toBe(201);
    const draft = await json<Draft>(prepared);
    const net = GROSS - amount;
    expect(draft.total_amount_usd).toBe(formatUsd(net));
    expect(draft.items).toEqual([expect.objectContaining({ amount_usd: formatUsd(net), gross_amount_usd: formatUsd(GROSS), advance_deduction_usd: formatUsd(amount) })]);

    const before = await tokenBalance(employee.wallet);
    const executed = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: asOwner });
    expect(executed.status).toBe(200);
    expect((await tokenBalance(employee.wallet)) - before).toBe(net);

    const slip = await ownerPays(`/api/mpp/payslips/${draft.payroll_run_id}/${employee.id}`, { headers: asOwner });
    expect(slip.status).toBe(200);
    expect((await json<{ payslip: Record<string, unknown> }>(slip)).payslip).toMatchObject({
      amount_usd: Number(formatUsd(net)),
      gross_amount_usd: 1000,
      advance_deduction_usd: Number(formatUsd(amount)),
      status: 'paid',
    });

    // Netted once: the next run pays the full amount.
    const next = await json<Draft>(await runOf(employee));
    expect(next.items).toEqual([expect.objectContaining({ amount_usd: formatUsd(GROSS), advance_deduction_usd: '0.000000' })]);
  });

  it('two prepares at once net an advance in exactly one run', async () => {
    const { employee, amount } = await advanced();
    const responses = await Promise.all([runOf(employee), runOf(employee)]);
    const drafts = await Promise.all(responses.filter((r) => r.status === 201).map((r) => json<Draft>(r)));
    for (const response of responses.filter((r) => r.status !== 201)) {
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'ADVANCES_CHANGED' });
    }
    expect(drafts.length).toBeGreaterThan(0);
    const deducted = drafts.flatMap((d) => d.items).reduce((sum, item) => sum + BigInt(item.advance_deduction_usd.replace('.', '')), 0n);
    expect(deducted).toBe(amount);
  });

  it('a run that fails on chain gives its advances back to the next run', async () => {
    const { employee, amount } = await advanced();
    const draft = await json<Draft>(await runOf(employee));
    expect(draft.items[0]!.advance_deduction_usd).toBe(formatUsd(amount));
    const accountId = await treasury.accountId(employerId);
    const account = await t.chains!.tempo.treasuryAccount(accountId);
    await t.chains!.tempo.lockTreasury(accountId, account!.available);
    try {
      const refused = await ownerPays('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: asOwner });
      expect(refused.status).toBe(422);
    } finally {
      await t.chains!.tempo.unlockTreasury(accountId, account!.available);
    }
    const next = await json<Draft>(await runOf(employee));
    expect(next.items[0]!.advance_deduction_usd).toBe(formatUsd(amount));
  });

  it('refuses a payment smaller than the advances to net (422 ADVANCES_EXCEED_PAY), so they wait for a larger run', async () => {
    const { employee, amount } = await advanced();
    const small = await prepare({ items: [{ employee_id: employee.id, amount_usd: formatUsd(amount) }] });
    expect(small.status).toBe(422);
    expect(await json(small)).toMatchObject({ code: 'ADVANCES_EXCEED_PAY', employees: [{ employee_id: employee.id, advances_usd: formatUsd(amount) }] });
    const next = await json<Draft>(await runOf(employee));
    expect(next.items[0]!.advance_deduction_usd).toBe(formatUsd(amount));
  });
});
