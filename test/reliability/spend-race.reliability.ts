import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPayCalls } from '../../src/features/agents/tables.js';
import { escrows } from '../../src/features/escrow/tables.js';
import { payments } from '../../src/payments/tables.js';
import { spendUsage } from '../../src/features/agents/store.js';
import { posterReservations } from '../../src/features/escrow/store.js';
import { findPaidRoute } from '../../src/payments/prices.js';
import { agentPayService } from '../support/agents.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { serveCountingOverlap } from '../support/http.js';
import { reportFigure } from './figures.js';
import {
  authorizeAgent,
  baseBalance,
  dollars,
  ESCROW_POST,
  feePayer,
  fireAll,
  fundedEmployer,
  PAY,
  signCall,
  signEscrowPost,
  tally,
  tempoBalance,
  treasuryService,
  type Agent,
  type Answer,
  type SignedCall,
  type SignedRequest,
} from './support/agent-pay.js';

/**
 * Spend race (issue 12): 200 agent/pay calls in flight at once against a real loopback server,
 * each with its own paid fee (rail B) and identity proof. One authorization's per-day cap must
 * be filled exactly and never overshot; several authorizations against a short treasury must
 * never overdraw it; agent/pay calls and escrow posts racing on one cap (issue 26) must fill it
 * together, never past it. Every amount is checked three ways: the answers, the ledger, the chain.
 */
const CALLS = 200;
const FEE = findPaidRoute('POST', PAY)!.price; // $0.05
// A burst takes 3-7 s here (2 cores, PGlite or PostgreSQL); the bound only keeps a stall from passing.
const BURST_BUDGET_MS = 90_000;

let t: TestApp;
let server: Awaited<ReturnType<typeof serveCountingOverlap>>;
let fees: Awaited<ReturnType<typeof feePayer>>;
let escrowFees: Awaited<ReturnType<typeof feePayer>>;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveCountingOverlap((request) => t.app.fetch(request));
  // 2 x 200 + 40 fees of $0.05, and a margin; 40 escrow/post fees of $0.10.
  fees = await feePayer(t, server.url, '25');
  escrowFees = await feePayer(t, server.url, '6', ESCROW_POST);
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function signAll(agents: readonly Agent[], employerId: string, amount: string): Promise<SignedCall[]> {
  const calls: SignedCall[] = [];
  for (let i = 0; i < CALLS; i++) calls.push(await signCall(agents[i % agents.length]!, employerId, amount, await fees.sign()));
  return calls;
}

/** Fires the burst and returns its answers with what it took and how many overlapped in the handler. */
async function burst(calls: readonly SignedRequest[]): Promise<{ answers: Answer[]; ms: number; overlap: number }> {
  server.resetPeak();
  const started = Date.now();
  const answers = await fireAll(server.url, calls);
  return { answers, ms: Date.now() - started, overlap: server.peak() };
}

const treasuryTokenBalance = () => tempoBalance(t, t.chains!.tempo.contracts.payrollTreasury);
const sum = (values: readonly bigint[]) => values.reduce((a, b) => a + b, 0n);

/** Every recipient's balance on Tempo, in call order. */
const recipientBalances = (calls: readonly SignedCall[]) => Promise.all(calls.map((call) => tempoBalance(t, call.recipient)));

/** The ledger rows of these authorizations, by status. */
async function ledger(authorizationIds: readonly string[]) {
  const rows = (await Promise.all(authorizationIds.map((id) => t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.authorizationId, id))))).flat();
  const of = (status: string) => rows.filter((row) => row.status === status);
  return { paid: of('paid'), reserved: of('reserved'), released: of('released'), total: rows.length };
}

/** Checks common to both bursts: answers = ledger = chain, no 5xx, every fee charged once. */
async function reconcile(
  employerId: string,
  calls: readonly SignedCall[],
  answers: readonly Answer[],
  authorizationIds: readonly string[],
  before: Awaited<ReturnType<typeof snapshot>>,
) {
  expect(answers.filter((a) => a.status >= 500), 'no 5xx').toEqual([]);
  const paid = answers.flatMap((answer, i) => (answer.status === 200 ? [{ answer, call: calls[i]! }] : []));
  // Each 200 reports its own request's recipient and amount, and a transaction.
  for (const { answer, call } of paid) {
    expect(answer.recipient?.toLowerCase()).toBe(call.recipient.toLowerCase());
    expect(answer.txHash).toMatch(/^0x[0-9a-f]{64}$/);
  }
  const answeredTotal = sum(paid.map(({ answer }) => answer.amount!));

  const rows = await ledger(authorizationIds);
  const treasuryDrop = before.treasury - (await treasuryService(t).account(employerId)).available;
  const contractDrop = before.treasuryTokens - (await treasuryTokenBalance());
  const balances = await recipientBalances(calls);
  const onChain = sum(balances);
  // A paid recipient got exactly its amount; a refused one got nothing.
  answers.forEach((answer, i) => expect(balances[i], `recipient of call ${i} (${answer.status})`).toBe(answer.status === 200 ? answer.amount : 0n));
  expect(rows.paid).toHaveLength(paid.length);
  expect(sum(rows.paid.map((row) => row.amount))).toBe(answeredTotal);
  expect(treasuryDrop).toBe(answeredTotal);
  expect(contractDrop).toBe(answeredTotal);
  expect(onChain).toBe(answeredTotal);
  // Each paid row's transaction mined successfully and is the one its answer named.
  const hashes = new Set(paid.map(({ answer }) => answer.txHash!));
  expect(new Set(rows.paid.map((row) => row.txHash))).toEqual(hashes);
  for (const hash of hashes) expect((await t.chains!.tempo.connection.receipt(hash as `0x${string}`))?.status).toBe('success');

  // Every answer below 500 keeps its fee, once: 200 served fee payments, $0.05 each on Base.
  const feeRows = await t.database.db.select().from(payments).where(and(eq(payments.route, 'POST /api/mpp/agent/pay'), eq(payments.payer, fees.payer)));
  expect(feeRows.filter((row) => row.status === 'served')).toHaveLength(before.feeRows + CALLS);
  expect(feeRows).toHaveLength(before.feeRows + CALLS);
  expect(before.fees - (await baseBalance(t, fees.payer))).toBe(FEE * BigInt(CALLS));

  // Nothing left reserved, and the reconcile job finds nothing to settle.
  expect(rows.reserved).toEqual([]);
  expect(await agentPayService(t).reconcileStale()).toEqual({ paid: 0, released: 0 });
  expect((await ledger(authorizationIds)).reserved).toEqual([]);
  return { rows, answeredTotal, onChain, transactions: hashes.size };
}

async function snapshot(employerId: string) {
  const feeRows = await t.database.db.select().from(payments).where(and(eq(payments.route, 'POST /api/mpp/agent/pay'), eq(payments.payer, fees.payer)));
  return {
    treasury: (await treasuryService(t).account(employerId)).available,
    treasuryTokens: await treasuryTokenBalance(),
    fees: await baseBalance(t, fees.payer),
    feeRows: feeRows.length,
  };
}

describe('spend race', () => {
  it(`${CALLS} concurrent agent/pay calls against one per-day cap: the cap is filled exactly, never overshot`, async ({ task }) => {
    const amount = 250_000n; // $0.25
    const cap = 9_300_000n; // $9.30: not a multiple of the amount, so one more call would overshoot by $0.20
    const employer = await fundedEmployer(t, 'Race Co', 1_000_000_000n);
    // Per-tx cap above the amount and velocity at its maximum (600/min, above 200): gate 3 binds.
    const agent = await authorizeAgent(t, employer, { per_tx_cap_usd: '1', per_day_cap_usd: dollars(cap).slice(1), velocity_per_minute: 600 });
    const calls = await signAll([agent], employer.id, dollars(amount).slice(1));
    const before = await snapshot(employer.id);

    const { answers, ms, overlap } = await burst(calls);
    const counts = tally(answers);
    const expectedPaid = Number(cap / amount);
    expect(counts).toEqual({ '200': expectedPaid, '403 PER_DAY_CAP_EXCEEDED': CALLS - expectedPaid });
    const { rows, answeredTotal, onChain, transactions } = await reconcile(employer.id, calls, answers, [agent.authorizationId], before);
    const overshoot = answeredTotal > cap ? answeredTotal - cap : 0n;
    expect(overshoot).toBe(0n);
    expect(answeredTotal).toBe(BigInt(expectedPaid) * amount);
    // Refusals at the gate never reserve anything.
    expect(rows.total).toBe(expectedPaid);
    expect((await spendUsage(t.database.db, agent.authorizationId, posterReservations)).spentLastDay).toBe(answeredTotal);
    // The handler really held many requests at once (one at a time would show 1).
    expect(overlap).toBeGreaterThanOrEqual(50);
    expect(ms).toBeLessThan(BURST_BUDGET_MS);

    reportFigure(task, {
      check: 'spend-race',
      summary:
        `${CALLS} concurrent agent/pay calls (peak ${overlap} in the handler, ${(ms / 1000).toFixed(1)} s), ${dollars(amount)} each against a ${dollars(cap)} daily cap: ` +
        `${expectedPaid} paid, ${counts['403 PER_DAY_CAP_EXCEEDED']} refused PER_DAY_CAP_EXCEEDED; paid ${dollars(answeredTotal)} in ${transactions} Tempo transaction(s), ` +
        `on chain ${dollars(onChain)} = recorded; overshoot ${dollars(overshoot)}; 0 reservations open; ${CALLS} fees charged once`,
    });
  });

  it(`${CALLS} concurrent agent/pay calls from 4 agents against a short treasury: never overdrawn`, async ({ task }) => {
    const amount = 250_000n;
    const funded = 12_100_000n; // $12.10: 48 payments and $0.10 left
    const employer = await fundedEmployer(t, 'Short Treasury Co', funded);
    // Caps far above what the treasury holds: only the balance can refuse.
    const agents = [];
    for (let i = 0; i < 4; i++) agents.push(await authorizeAgent(t, employer, { per_tx_cap_usd: '1', per_day_cap_usd: '100', velocity_per_minute: 600 }));
    const calls = await signAll(agents, employer.id, dollars(amount).slice(1));
    const before = await snapshot(employer.id);
    expect(before.treasury).toBe(funded);

    const { answers, ms, overlap } = await burst(calls);
    const counts = tally(answers);
    const expectedPaid = Number(funded / amount);
    expect(counts).toEqual({ '200': expectedPaid, '422 INSUFFICIENT_TREASURY_BALANCE': CALLS - expectedPaid });
    const { rows, answeredTotal, onChain, transactions } = await reconcile(
      employer.id,
      calls,
      answers,
      agents.map((a) => a.authorizationId),
      before,
    );
    expect(answeredTotal).toBeLessThanOrEqual(funded);
    const left = (await treasuryService(t).account(employer.id)).available;
    expect(left).toBe(funded % amount);
    // Every refused call reserved, then released: none still counts toward its agent's cap.
    expect(rows.released).toHaveLength(CALLS - expectedPaid);
    const perAgent = agents.map((a) => answers.filter((answer, i) => answer.status === 200 && calls[i]!.headers['X-Agent-Identifier'] === a.identifier).length);
    expect(sum(perAgent.map(BigInt))).toBe(BigInt(expectedPaid));
    expect(overlap).toBeGreaterThanOrEqual(50);
    expect(ms).toBeLessThan(BURST_BUDGET_MS);

    reportFigure(task, {
      check: 'spend-race',
      summary:
        `${CALLS} concurrent agent/pay calls from 4 agents of one employer (peak ${overlap} in the handler, ${(ms / 1000).toFixed(1)} s), ${dollars(amount)} each against a ${dollars(funded)} treasury: ` +
        `${expectedPaid} paid (${perAgent.join('/')} per agent), ${counts['422 INSUFFICIENT_TREASURY_BALANCE']} refused INSUFFICIENT_TREASURY_BALANCE; ` +
        `paid ${dollars(answeredTotal)} in ${transactions} Tempo transaction(s), on chain ${dollars(onChain)} = recorded, ${dollars(left)} left; overdraft $0.00; 0 reservations open`,
    });
  });

  it('mixed escrow + agent/pay race against one daily cap: 0 overshoot', async ({ task }) => {
    const requests = 80;
    const amount = 250_000n;
    const cap = 10_100_000n; // $10.10: 40 spends of either kind fit, and one more would overshoot by $0.15
    const employer = await fundedEmployer(t, 'Mixed Race Co', 1_000_000_000n);
    const solana = t.chains!.solana;
    await t.request('POST', '/api/dev/faucet', { body: { network: solana.network, address: solana.serviceAddress, amount: '100' } });
    const agent = await authorizeAgent(t, employer, { per_tx_cap_usd: '1', per_day_cap_usd: dollars(cap).slice(1), velocity_per_minute: 600 });
    const signed: SignedRequest[] = [];
    for (let i = 0; i < requests; i++) {
      signed.push(
        i % 2 === 0
          ? await signCall(agent, employer.id, dollars(amount).slice(1), await fees.sign())
          : await signEscrowPost(agent, employer.id, dollars(amount).slice(1), await escrowFees.sign()),
      );
    }
    const treasuryBefore = (await treasuryService(t).account(employer.id)).available;

    const { answers, ms, overlap } = await burst(signed);
    expect(answers.filter((a) => a.status >= 500), 'no 5xx').toEqual([]);
    const expectedSpends = Number(cap / amount);
    expect(tally(answers)).toEqual({ '200': expectedSpends, '403 PER_DAY_CAP_EXCEEDED': requests - expectedSpends });
    const served = (kind: string) => answers.filter((a, i) => a.status === 200 && (signed[i]!.path ?? PAY) === kind);
    const paid = served(PAY);
    const posted = served(ESCROW_POST);
    const answeredTotal = BigInt(paid.length + posted.length) * amount;

    // The ledger, the treasury, the recipients on Tempo and the vaults on Solana all agree with the answers.
    const calls = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.authorizationId, agent.authorizationId));
    const locked = await t.database.db.select().from(escrows).where(eq(escrows.posterAuthorizationId, agent.authorizationId));
    expect(calls.filter((c) => c.status === 'paid')).toHaveLength(paid.length);
    expect(locked.filter((e) => e.status === 'posted').map((e) => e.id).sort()).toEqual(posted.map((a) => a.escrowId).sort());
    expect((await spendUsage(t.database.db, agent.authorizationId, posterReservations)).spentLastDay).toBe(answeredTotal);
    expect(treasuryBefore - (await treasuryService(t).account(employer.id)).available).toBe(answeredTotal);
    const vaults = await Promise.all(posted.map((a) => solana.escrowBalance(a.escrowId!)));
    expect(vaults.reduce((a, b) => a + b, 0n)).toBe(BigInt(posted.length) * amount);
    for (const answer of paid) expect((await t.chains!.tempo.connection.receipt(answer.txHash as `0x${string}`))?.status).toBe('success');
    const overshoot = answeredTotal > cap ? answeredTotal - cap : 0n;
    expect(overshoot).toBe(0n);
    expect(ms).toBeLessThan(BURST_BUDGET_MS);

    reportFigure(task, {
      check: 'spend-race',
      summary:
        `mixed escrow + agent/pay race against one daily cap: ${requests} concurrent requests (${requests / 2} agent/pay, ${requests / 2} escrow/post; peak ${overlap} in the handler, ${(ms / 1000).toFixed(1)} s), ` +
        `${dollars(amount)} each against a ${dollars(cap)} daily cap: ${paid.length} paid + ${posted.length} escrows locked = ${dollars(answeredTotal)}, ` +
        `${requests - expectedSpends} refused PER_DAY_CAP_EXCEEDED; treasury, Tempo receipts and Solana vaults = recorded; 0 overshoot`,
    });
  });
});
