import { randomUUID } from 'node:crypto';
import { generateKeyPairSigner, type Address as SolanaAddress } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { TreasuryService } from '../treasury/service.js';
import { SolanaPolicyWallet } from './solana-policy.js';
import { insertDecision } from './store.js';

/**
 * POST /api/x402/payroll/execute (spec 4.5): an agent's plan, executed once with the owner's
 * identity JWT. Tempo items in one batch; Solana items through the policy wallet, whose
 * rejections are per item. The policy here: at most $100 per Solana payment.
 */
let t: TestApp;
let treasury: TreasuryService;
let ownerToken: string;
let employerId: string;
let tempoStaff: { id: string; wallet: Address }[];
let solanaStaff: { id: string; wallet: SolanaAddress }[];

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

async function addEmployee(token: string, id: string, name: string, wallets: { wallet_address?: string; solana_wallet_address?: string }) {
  const response = await t.request('POST', `/api/employers/${id}/team`, {
    token,
    body: { email: `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@decisions.example`, full_name: name, ...wallets },
  });
  expect(response.status).toBe(201);
  return (await json<{ id: string }>(response)).id;
}

async function fundTreasury(id: string, units: bigint) {
  const service = t.chains!.tempo.serviceAddress;
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: (Number(units) / 1e6).toString() } });
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), units);
}

const available = async (id: string) => (await treasury.account(id)).available;
const tempoBalance = (owner: Address) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

const propose = (items: { employee_id: string; amount_usd: string; chain?: string }[], token = ownerToken, id = employerId) =>
  t.request('POST', `/api/employers/${id}/payroll/decisions`, { token, body: { items, agent_identifier: 'erc8004:tempo:7' } });
const execute = (body: unknown, token = ownerToken) => t.request('POST', '/api/x402/payroll/execute', { token, body });

async function proposed(items: { employee_id: string; amount_usd: string; chain?: string }[]) {
  const response = await propose(items);
  expect(response.status).toBe(201);
  return (await json<{ decision_id: string }>(response)).decision_id;
}

beforeAll(async () => {
  t = await startTestApp({ SOLANA_PAYROLL_PER_TX_CAP_USD: '100' }, { chains: true });
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  ownerToken = await t.token('decision-owner', 'owner@decisions.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: ownerToken, body: { name: 'Planner Co' } }))).id;
  tempoStaff = [];
  for (const name of ['Tess', 'Tom']) {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    tempoStaff.push({ id: await addEmployee(ownerToken, employerId, name, { wallet_address: wallet }), wallet });
  }
  solanaStaff = [];
  for (const name of ['Sol', 'Sam']) {
    const wallet = (await generateKeyPairSigner()).address;
    solanaStaff.push({ id: await addEmployee(ownerToken, employerId, name, { solana_wallet_address: wallet }), wallet });
  }
  await fundTreasury(employerId, 10_000_000_000n);
  // The service's Solana float, which the employer's treasury reimburses payment by payment.
  await t.request('POST', '/api/dev/faucet', { body: { network: t.chains!.solana.network, address: t.chains!.solana.serviceAddress, amount: '1000' } });
});
afterAll(() => t.close());

describe('a decision with a pay period', () => {
  it('carries the period into the run and its memos; an end before the start is refused naming the field', async () => {
    const pia = await addEmployee(ownerToken, employerId, 'Pia', { wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    const body = { items: [{ employee_id: pia, amount_usd: '10' }], pay_period_start: '2026-09-01', pay_period_end: '2026-09-30' };
    const proposedResponse = await t.request('POST', `/api/employers/${employerId}/payroll/decisions`, { token: ownerToken, body });
    expect(proposedResponse.status).toBe(201);
    const { decision_id } = await json<{ decision_id: string }>(proposedResponse);
    const executed = await execute({ employer_id: employerId, decision_id });
    expect(executed.status).toBe(200);
    const { payroll_run_id } = await json<{ payroll_run_id: string }>(executed);
    const { rows } = await t.database.pool.query('SELECT pay_period_start, pay_period_end FROM payroll_runs WHERE id = $1', [payroll_run_id]);
    expect(new Date(rows[0].pay_period_start).toISOString()).toBe('2026-09-01T00:00:00.000Z');
    expect(new Date(rows[0].pay_period_end).toISOString()).toBe('2026-09-30T00:00:00.000Z');

    const backwards = await t.request('POST', `/api/employers/${employerId}/payroll/decisions`, {
      token: ownerToken,
      body: { ...body, pay_period_start: '2026-10-01' },
    });
    expect(backwards.status).toBe(400);
    expect(await json(backwards)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'pay_period_end' });
  });
});

describe('POST /api/x402/payroll/execute', () => {
  it('pays Tempo items in one batch and Solana items through the policy wallet; an item over the cap is policy_rejected and the run still succeeds', async () => {
    const before = await available(employerId);
    const decisionId = await proposed([
      { employee_id: tempoStaff[0]!.id, amount_usd: '250' },
      { employee_id: tempoStaff[1]!.id, amount_usd: '300.5' },
      { employee_id: solanaStaff[0]!.id, amount_usd: '40', chain: 'solana' },
      { employee_id: solanaStaff[1]!.id, amount_usd: '100.000001', chain: 'solana' },
    ]);
    const response = await execute({ employer_id: employerId, decision_id: decisionId });
    expect(response.status).toBe(200);
    const body = await json<Record<string, unknown> & { solana_signatures: string[]; payroll_run_id: string; tempo_tx_hash: string }>(response);
    expect(body).toMatchObject({
      decision_id: decisionId,
      tempo_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      tempo_broadcast_error: null,
      tempo_explorer_url: null, // the embedded chain has no explorer
      solana_broadcast_error: null,
      solana_policy_rejections: [{ employee_id: solanaStaff[1]!.id, reason: expect.stringContaining('over the per-transaction cap') }],
      total_amount: 690.500001,
      employee_count: 4,
    });
    expect(body.solana_signatures).toHaveLength(1);
    expect(body.solana_explorer_urls).toEqual([expect.stringContaining(body.solana_signatures[0]!)]);

    // Money moved exactly as reported: the rejected item's amount went back to the treasury.
    expect(await tempoBalance(tempoStaff[0]!.wallet)).toBe(250_000_000n);
    expect(await t.chains!.solana.tokenBalance(solanaStaff[0]!.wallet)).toBe(40_000_000n);
    expect(await t.chains!.solana.tokenBalance(solanaStaff[1]!.wallet).catch(() => 0n)).toBe(0n);
    expect(before - (await available(employerId))).toBe(590_500_000n);

    const { rows } = await t.database.pool.query(
      `SELECT r.status AS run_status, r.decision_id, i.employee_id, i.chain, i.status, i.reason, i.tx_hash
       FROM payroll_runs r JOIN payment_items i ON i.run_id = r.id WHERE r.id = $1`,
      [body.payroll_run_id],
    );
    expect(new Set(rows.map((r) => r.run_status))).toEqual(new Set(['confirmed']));
    expect(rows[0].decision_id).toBe(decisionId);
    const byEmployee = Object.fromEntries(rows.map((r) => [r.employee_id, r]));
    expect(byEmployee[tempoStaff[0]!.id]).toMatchObject({ chain: 'tempo', status: 'paid', tx_hash: body.tempo_tx_hash });
    expect(byEmployee[solanaStaff[0]!.id]).toMatchObject({ chain: 'solana', status: 'paid', tx_hash: body.solana_signatures[0] });
    expect(byEmployee[solanaStaff[1]!.id]).toMatchObject({ status: 'policy_rejected', reason: expect.stringContaining('cap') });
    const decision = await t.database.pool.query('SELECT status FROM agent_decisions WHERE id = $1', [decisionId]);
    expect(decision.rows[0].status).toBe('executed');
    // The ERC-8004 agent that planned it earns feedback for what was paid (spec 6), queued once.
    const feedback = await t.database.pool.query(
      `SELECT kind, write_type, subject, amount::text FROM reputation_writes WHERE source_type = 'payroll_run' AND source_id = $1`,
      [body.payroll_run_id],
    );
    expect(feedback.rows).toEqual([{ kind: 'erc8004_feedback', write_type: 'payroll', subject: '7', amount: '590500000' }]);
  });

  it('reports a Solana payment the float cannot cover as failed, and returns its money to the treasury', async () => {
    const solana = t.chains!.solana;
    const float = await solana.tokenBalance(solana.serviceAddress);
    const parking = (await generateKeyPairSigner()).address;
    await solana.transfer(parking, float, 'drain the float for this test');
    try {
      const before = await available(employerId);
      const decisionId = await proposed([{ employee_id: solanaStaff[0]!.id, amount_usd: '5', chain: 'solana' }]);
      const response = await execute({ employer_id: employerId, decision_id: decisionId });
      expect(response.status).toBe(200);
      const body = await json<{ payroll_run_id: string; solana_broadcast_error: string | null; solana_signatures: string[] }>(response);
      expect(body.solana_broadcast_error).toEqual(expect.any(String));
      expect(body.solana_signatures).toEqual([]);
      expect(await available(employerId)).toBe(before);
      const { rows } = await t.database.pool.query('SELECT status FROM payment_items WHERE run_id = $1', [body.payroll_run_id]);
      expect(rows).toEqual([{ status: 'failed' }]);
    } finally {
      await t.request('POST', '/api/dev/faucet', { body: { network: solana.network, address: solana.serviceAddress, amount: '1000' } });
    }
  });

  it('executes a decision once, even when two calls race', async () => {
    const decisionId = await proposed([{ employee_id: tempoStaff[0]!.id, amount_usd: '1' }]);
    const before = await tempoBalance(tempoStaff[0]!.wallet);
    const results = await Promise.all([execute({ employer_id: employerId, decision_id: decisionId }), execute({ employer_id: employerId, decision_id: decisionId })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await json(results.find((r) => r.status === 409)!)).toMatchObject({ code: 'DECISION_NOT_PROPOSED' });
    expect((await tempoBalance(tempoStaff[0]!.wallet)) - before).toBe(1_000_000n);
  });

  it('refuses a plan the treasury cannot cover (422) and leaves it proposed for a retry', async () => {
    const decisionId = await proposed([{ employee_id: tempoStaff[1]!.id, amount_usd: '999999' }]);
    const refused = await execute({ employer_id: employerId, decision_id: decisionId });
    expect(refused.status).toBe(422);
    expect(await json(refused)).toMatchObject({ code: 'INSUFFICIENT_TREASURY' });
    const { rows } = await t.database.pool.query('SELECT status FROM agent_decisions WHERE id = $1', [decisionId]);
    expect(rows[0].status).toBe('proposed');
    const runs = await t.database.pool.query('SELECT count(*)::int AS n FROM payroll_runs WHERE decision_id = $1', [decisionId]);
    expect(runs.rows[0].n).toBe(0);
  });

  it("answers another employer's decision like a missing one, and validates input", async () => {
    const rivalToken = await t.token('decision-rival');
    const rivalId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: rivalToken, body: { name: 'Rival' } }))).id;
    const ours = await proposed([{ employee_id: tempoStaff[0]!.id, amount_usd: '1' }]);
    // The rival names our decision under their employer, or our employer directly.
    const underTheirs = await execute({ employer_id: rivalId, decision_id: ours }, rivalToken);
    const missing = await execute({ employer_id: rivalId, decision_id: randomUUID() }, rivalToken);
    expect(underTheirs.status).toBe(404);
    expect(await json(underTheirs)).toEqual(await json(missing));
    expect((await execute({ employer_id: employerId, decision_id: ours }, rivalToken)).status).toBe(404);
    // A plan may only name this employer's employees: another's is refused like a missing one when proposed...
    const rivalEmployee = await addEmployee(rivalToken, rivalId, 'Eve', { wallet_address: privateKeyToAccount(generatePrivateKey()).address });
    const foreign = await propose([{ employee_id: tempoStaff[0]!.id, amount_usd: '1' }, { employee_id: rivalEmployee, amount_usd: '1' }]);
    const nobody = await propose([{ employee_id: tempoStaff[0]!.id, amount_usd: '1' }, { employee_id: randomUUID(), amount_usd: '1' }]);
    expect(foreign.status).toBe(404);
    const missingEmployee = await json(nobody);
    expect(await json(foreign)).toEqual(missingEmployee);
    expect(missingEmployee).toMatchObject({ field: 'items.1.employee_id' });
    // ...and again when executed (a plan stored before that check, or written by other means).
    const foreignPlan = (await insertDecision(t.database.db, { employerId, agentIdentifier: null, plan: { items: [{ employee_id: rivalEmployee, amount: '1000000', chain: 'tempo' }] } })).id;
    const refused = await execute({ employer_id: employerId, decision_id: foreignPlan });
    expect(refused.status).toBe(422);
    expect(await json(refused)).toMatchObject({ code: 'EMPLOYEE_NOT_PAYABLE', employees: [{ employee_id: rivalEmployee, reason: 'not an employee of this employer' }] });

    for (const [body, field] of [
      [{ decision_id: ours }, 'employer_id'],
      [{ employer_id: employerId }, 'decision_id'],
      [{ employer_id: 'x', decision_id: ours }, 'employer_id'],
      [{ employer_id: employerId, decision_id: 7 }, 'decision_id'],
    ] as const) {
      const response = await execute(body);
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({ field });
    }
    expect((await t.request('POST', '/api/x402/payroll/execute', { body: { employer_id: employerId, decision_id: ours } })).status).toBe(401);
    const badPlan = await propose([{ employee_id: tempoStaff[0]!.id, amount_usd: '1', chain: 'bitcoin' }]);
    expect(badPlan.status).toBe(400);
    expect(await json(badPlan)).toMatchObject({ field: 'items.0.chain' });
  });
});

describe('the Solana policy wallet', () => {
  it('refuses a payment calling a program outside the whitelist, sending nothing', async () => {
    const recipient = (await generateKeyPairSigner()).address;
    const wallet = new SolanaPolicyWallet(t.chains!.solana, { perTxCap: 1_000_000_000n, allowedPrograms: new Set([TOKEN_PROGRAM_ADDRESS]) });
    const outcome = await wallet.pay(recipient, 1_000_000n, 'reference');
    expect(outcome).toEqual({ sent: false, rejected: expect.stringMatching(/^program \w+ is not whitelisted$/) });
    expect(await t.chains!.solana.tokenBalance(recipient).catch(() => 0n)).toBe(0n);
  });
});
