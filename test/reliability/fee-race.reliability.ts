import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPaidRoute } from '../../src/payments/prices.js';
import { agentProofHeaders } from '../support/agents.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../support/http.js';
import { proofMaker, railBalance } from '../support/pay.js';
import { reportFigure } from './figures.js';
import { authorizeAgent, fundedEmployer, newRecipient, PAY, tally, tempoBalance, type Agent, type Employer } from './support/agent-pay.js';

/**
 * Fee races on a route that acts (issue 24): many payers, each holding exactly one fee, each send
 * two agent/pay calls at once (each paying $1.00 of treasury money to its own recipient), on every
 * rail, all at the same moment. The fee is collected before the handler acts, so every payer gets
 * one payment and one 402, and no money moves for a call whose fee was not collected: counted in
 * the answers, on chain (recipients and payers) and in the ledger.
 */
const PAYERS_PER_RAIL = 15;
const FEE = findPaidRoute('POST', PAY)!.price; // $0.05
const AMOUNT = 1_000_000n;

let t: TestApp;
let server: LoopbackServer;
let employer: Employer;
let agent: Agent;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback((request) => t.app.fetch(request));
  employer = await fundedEmployer(t, 'Fee race', 1_000n * AMOUNT);
  agent = await authorizeAgent(t, employer, { per_tx_cap_usd: '5', per_day_cap_usd: '1000', velocity_per_minute: 600 });
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('two calls on one fee, from many payers at once', () => {
  it('acts once per collected fee: no payment moves without its fee', async ({ task }) => {
    const usd = `0.${FEE.toString().padStart(6, '0')}`;
    const pairs: { rail: 'A' | 'B' | 'C'; payer: string; calls: { recipient: Address; body: string; headers: Record<string, string> }[] }[] = [];
    for (const rail of ['A', 'B', 'C'] as const) {
      for (let i = 0; i < PAYERS_PER_RAIL; i++) {
        const maker = await proofMaker(t, server.url, rail, usd);
        const calls = [];
        for (let j = 0; j < 2; j++) {
          const recipient = newRecipient();
          const body = JSON.stringify({ employer_id: employer.id, recipient_wallet: recipient, amount: '1.00', reference: `fee-race-${randomUUID()}` });
          const identity = await agentProofHeaders(agent.identifier, { hmac: agent.hmac }, { method: 'POST', path: PAY, body });
          calls.push({ recipient, body, headers: { 'content-type': 'application/json', ...identity, ...(await maker.proof(PAY)) } });
        }
        pairs.push({ rail, payer: maker.payer, calls });
      }
    }
    const all = pairs.flatMap((pair) => pair.calls);
    const responses = await Promise.all(all.map((call) => fetch(`${server.url}${PAY}`, { method: 'POST', headers: call.headers, body: call.body })));
    const answers = await Promise.all(responses.map(async (r) => ({ status: r.status, code: ((await r.json()) as { code?: string }).code ?? null, amount: null, recipient: null, txHash: null })));
    expect(tally(answers)).toEqual({ '200': pairs.length, '402 PAYMENT_SETTLEMENT_FAILED': pairs.length });

    // The chain: each payer paid exactly one fee, and exactly one of its two recipients was paid.
    let actions = 0;
    let feesCollected = 0;
    let unpaidActions = 0;
    for (const pair of pairs) {
      const received = await Promise.all(pair.calls.map((call) => tempoBalance(t, call.recipient)));
      const paidCalls = received.filter((amount) => amount === AMOUNT).length;
      const feesPaid = Number((FEE - (await railBalance(t, pair.rail, pair.payer))) / FEE);
      expect(received.filter((amount) => amount !== 0n && amount !== AMOUNT)).toEqual([]);
      actions += paidCalls;
      feesCollected += feesPaid;
      unpaidActions += Math.max(0, paidCalls - feesPaid);
    }
    expect(unpaidActions).toBe(0);
    expect(actions).toBe(pairs.length);
    expect(feesCollected).toBe(pairs.length);
    const { rows } = await t.database.pool.query<{ status: string; count: string }>(
      "SELECT status, count(*)::text AS count FROM payments WHERE route = 'POST /api/mpp/agent/pay' GROUP BY status ORDER BY status",
    );
    expect(Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]))).toEqual({ served: pairs.length, voided: pairs.length });
    reportFigure(task, {
      check: 'fee-race',
      summary:
        `agent/pay, ${pairs.length} payers (${PAYERS_PER_RAIL} per rail A, B, C) each holding one $0.05 fee, 2 calls each at once (${all.length} calls): ` +
        `${actions} payments for ${feesCollected} fees collected on chain, ${pairs.length} refused 402 before acting; 0 actions without a collected fee`,
    });
  });
});
