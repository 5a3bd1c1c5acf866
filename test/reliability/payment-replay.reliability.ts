import { randomUUID } from 'node:crypto';
import { generateKeyPairSigner, type Address as SolanaAddress } from '@solana/kit';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { Network, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { and, eq, sql } from 'drizzle-orm';
import { Challenge } from 'mppx';
import { stripe, tempo } from 'mppx/client';
import { createClient, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { complianceEvents } from '../../src/features/compliance/tables.js';
import { payrollRuns } from '../../src/features/payroll/tables.js';
import { cardSandboxPaymentIntents, payments } from '../../src/payments/tables.js';
import { findPaidRoute } from '../../src/payments/prices.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { serveCountingOverlap } from '../support/http.js';
import { reportFigure } from './figures.js';
import { baseBalance, fundedEmployer, newRecipient, tempoBalance, type Employer } from './support/agent-pay.js';

/**
 * Payment replay (issue 12): for each rail, ONE valid payment proof made by the libraries' own
 * clients without sending it, then sent 100 times at once to a paid route over loopback HTTP.
 * Exactly one request is served; the other 99 get 402 (ARCHITECTURE.md: "A replayed proof gets
 * 402, never a second service"), and the payer is charged once on chain. Then the same proof is
 * replayed after the fact: the same request, the same route with another body, another route.
 */
const COPIES = 100;
const CHECK = '/api/mpp/compliance/check'; // $0.05 on A, B, C; writes one ledger row per check served
const OTHER = '/api/mpp/agent/pay'; // also $0.05 on A, B, C: an x402 proof for CHECK matches its offer
const EXECUTE = '/api/mpp/payroll/execute'; // $1.00 on A with the card fallback (the only card offer)
const OFFRAMP = '/api/mpp/bridge/offramp'; // A only, below the card minimum: no card offer
const CHECK_PRICE = findPaidRoute('POST', CHECK)!.price;
const FUND_USD = '5';

let t: TestApp;
let server: Awaited<ReturnType<typeof serveCountingOverlap>>;

type RailName = 'A' | 'B' | 'C' | 'card';
interface RailResult {
  served: number;
  refused: number;
  codes: Record<string, number>;
  later: { name: string; status: number }[];
  peak: number;
}
const results = new Map<RailName, RailResult>();

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveCountingOverlap((request) => t.app.fetch(request));
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function faucet(network: string, address: string, amount: string): Promise<void> {
  const response = await t.request('POST', '/api/dev/faucet', { body: { network, address, amount } });
  expect(response.status, await response.clone().text()).toBe(200);
}

type Send = { path: string; body: string; headers?: Record<string, string> };
const post = (send: Send, proof: Record<string, string>) =>
  fetch(`${server.url}${send.path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...send.headers, ...proof }, body: send.body });
const checkBody = (wallet: Address) => JSON.stringify({ walletAddress: wallet });
const agentPayBody = () => JSON.stringify({ employer_id: randomUUID(), recipient_wallet: newRecipient(), amount: '1.00' });

/** The route's 402, unpaid. */
async function challenge(send: Send): Promise<Response> {
  const response = await post(send, {});
  expect(response.status).toBe(402);
  return response;
}

/** Compliance ledger rows written for a wallet: one per check the route served. */
async function ledgerRows(wallet: Address): Promise<number> {
  const rows = await t.database.db.select().from(complianceEvents).where(sql`lower(${complianceEvents.walletAddress}) = ${wallet.toLowerCase()}`);
  return rows.length;
}

/**
 * Sends one proof `COPIES` times at once, then three later replays; asserts exactly one served,
 * every other answer 402, and returns the counts.
 */
async function replay(proof: Record<string, string>, first: Send, later: { name: string; send: Send }[]): Promise<RailResult> {
  server.resetPeak();
  const responses = await Promise.all(Array.from({ length: COPIES }, () => post(first, proof)));
  const overlap = server.peak();
  const answers = await Promise.all(
    responses.map(async (r) => {
      const body = (await r.json()) as { code?: string; error?: string };
      return { status: r.status, code: body.code ?? '', error: body.error ?? '', receipt: r.headers.get('payment-receipt') ?? r.headers.get('payment-response') };
    }),
  );
  const served = answers.filter((a) => a.status >= 200 && a.status < 300);
  const refused = answers.filter((a) => a.status === 402);
  expect(served, JSON.stringify(answers.filter((a) => a.status !== 402))).toHaveLength(1);
  expect(refused).toHaveLength(COPIES - 1);
  // The one served answer carries the payment's receipt.
  expect(served[0]!.receipt).toBeTruthy();
  // Refused as a proof already used, not for some other fault of the proof (it did pay once).
  expect(refused.filter((a) => !/already/i.test(a.error)).map((a) => a.error)).toEqual([]);
  const codes: Record<string, number> = {};
  for (const answer of refused) codes[answer.code] = (codes[answer.code] ?? 0) + 1;

  const laterAnswers: { name: string; status: number }[] = [];
  for (const { name, send } of later) {
    const response = await post(send, proof);
    laterAnswers.push({ name, status: response.status });
  }
  expect(laterAnswers, 'later replays').toEqual(later.map(({ name }) => ({ name, status: 402 })));
  // The 100 overlapped in the server (one at a time would show 1).
  expect(overlap).toBeGreaterThanOrEqual(10);
  return { served: served.length, refused: refused.length, codes, later: laterAnswers, peak: overlap };
}

/** Payments rows a payer has for a route, by status. */
async function charges(payer: string, route: string) {
  const rows = await t.database.db.select().from(payments).where(and(eq(payments.route, route), sql`lower(${payments.payer}) = ${payer.toLowerCase()}`));
  return rows.map((row) => row.status);
}

/** The three later replays of a CHECK proof: same request, same route with another body, another route. */
function laterReplays(wallet: Address) {
  return [
    { name: 'same request', send: { path: CHECK, body: checkBody(wallet) } },
    { name: 'same route, other body', send: { path: CHECK, body: checkBody(newRecipient()) } },
    { name: 'other route', send: { path: OTHER, body: agentPayBody() } },
  ];
}

/** A funded x402 payer for rail B or C, signing with the library's client from a 402's PAYMENT-REQUIRED. */
async function x402Payer(rail: 'B' | 'C') {
  const chains = t.embeddedChains!;
  const client = new x402Client().setSpendControls({
    allowedAssets: [
      { network: 'eip155:8453', asset: chains.base.contracts.stablecoin!, maxAmountPerPayment: '1000000' },
      { network: chains.solana.network as Network, asset: chains.solana.mint, maxAmountPerPayment: '1000000' },
    ],
  });
  if (rail === 'B') {
    const account = privateKeyToAccount(generatePrivateKey());
    await faucet('eip155:8453', account.address, FUND_USD);
    client.register('eip155:8453', new ExactEvmScheme(account));
    return { client, payer: account.address as string, balance: () => baseBalance(t, account.address) };
  }
  const signer = await generateKeyPairSigner();
  await faucet(chains.solana.network, signer.address, FUND_USD);
  client.register(chains.solana.network as Network, new ExactSvmScheme(signer, { rpcUrl: `${server.url}/api/dev/rpc/solana` }));
  return { client, payer: signer.address as string, balance: () => chains.solana.tokenBalance(signer.address as SolanaAddress) };
}

const FUNDED = 5_000_000n;

describe('payment replay: one proof sent 100 times at once is served once', () => {
  it('rail A (MPP Tempo charge)', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await faucet('eip155:4217', account.address, FUND_USD);
    const client = createClient({ chain: tempoChain, transport: http(`${server.url}/api/dev/rpc/tempo`), account });
    const method = tempo.charge({ account, getClient: () => client });
    const wallet = newRecipient();
    const first = { path: CHECK, body: checkBody(wallet) };
    const offered = Challenge.fromResponseList(await challenge(first)).find((c) => c.method === 'tempo' && c.intent === 'charge');
    expect(offered).toBeDefined();
    // mppx's client signs the Tempo transfer into a credential; nothing is sent until the server settles it.
    const credential = await method.createCredential({ challenge: offered!, context: {} } as never);
    expect(await tempoBalance(t, account.address)).toBe(FUNDED);

    const result = await replay({ authorization: credential }, first, laterReplays(wallet));
    expect(await ledgerRows(wallet)).toBe(1);
    expect(await tempoBalance(t, account.address)).toBe(FUNDED - CHECK_PRICE);
    expect(await charges(account.address, `POST ${CHECK}`)).toEqual(['served']);
    results.set('A', result);
  });

  for (const rail of ['B', 'C'] as const) {
    it(`rail ${rail} (x402 exact on ${rail === 'B' ? 'Base' : 'Solana'})`, async () => {
      const { client, payer, balance } = await x402Payer(rail);
      const wallet = newRecipient();
      const first = { path: CHECK, body: checkBody(wallet) };
      const required: PaymentRequired = decodePaymentRequiredHeader((await challenge(first)).headers.get('PAYMENT-REQUIRED')!);
      // @x402's client picks its rail's offer and signs it; the header is what @x402/fetch would send.
      const payload = await client.createPaymentPayload(required);
      expect(payload.accepted.network).toBe(rail === 'B' ? 'eip155:8453' : t.embeddedChains!.solana.network);
      expect(await balance()).toBe(FUNDED);

      const result = await replay({ 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) }, first, laterReplays(wallet));
      expect(await ledgerRows(wallet)).toBe(1);
      expect(await balance()).toBe(FUNDED - CHECK_PRICE);
      expect(await charges(payer, `POST ${CHECK}`)).toEqual(['served']);
      results.set(rail, result);
    });
  }

  it('card fallback (MPP stripe charge through the local card sandbox)', async () => {
    // A prepared payroll run: the one route with a card offer ($1.00); serving it pays the employee.
    const employer: Employer = await fundedEmployer(t, 'Replay Payroll Co', 10_000_000n);
    const employeeWallet = newRecipient();
    const added = await t.request('POST', `/api/employers/${employer.id}/team`, {
      token: employer.token,
      body: { email: `ada-${randomUUID().slice(0, 8)}@replay.example`, full_name: 'Ada', wallet_address: employeeWallet, cost_centre: 'ENG' },
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const employeeId = ((await added.json()) as { id: string }).id;
    const prepare = async () => {
      const response = await t.request('POST', `/api/employers/${employer.id}/payroll`, { token: employer.token, body: { items: [{ employee_id: employeeId, amount_usd: '1.25' }] } });
      expect(response.status, await response.clone().text()).toBe(201);
      return ((await response.json()) as { payroll_run_id: string }).payroll_run_id;
    };
    const [runId, otherRunId] = [await prepare(), await prepare()];
    const asOwner = { 'X-Identity-Token': employer.token };
    const first = { path: EXECUTE, body: JSON.stringify({ payrollRunId: runId }), headers: asOwner };

    const offered = Challenge.fromResponseList(await challenge(first)).find((c) => c.method === 'stripe');
    expect(offered).toBeDefined();
    let spt: string | undefined;
    const method = stripe.charge({
      paymentMethod: 'pm_card_visa',
      createToken: async ({ amount, currency, expiresAt, paymentMethod }) => {
        const response = await fetch(`${server.url}/api/dev/card/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ payment_method: paymentMethod, amount, currency, expires_at: expiresAt }),
        });
        return (spt = ((await response.json()) as { spt: string }).spt);
      },
    });
    const credential = await method.createCredential({ challenge: offered!, context: {} } as never);
    expect(spt).toMatch(/^spt_/);

    const result = await replay({ authorization: credential }, first, [
      { name: 'same request', send: first },
      { name: 'same route, another run', send: { ...first, body: JSON.stringify({ payrollRunId: otherRunId }) } },
      // No other route offers a card (bridge/offramp is below the card minimum): refused as a card proof there.
      { name: 'other route', send: { path: OFFRAMP, body: JSON.stringify({ employeeId, amount: '1', destinationType: 'ach', bankAccountId: 'ba_1' }), headers: asOwner } },
    ]);
    // Served once: the run executed once, the employee paid once, the other run untouched.
    expect(await tempoBalance(t, employeeWallet)).toBe(1_250_000n);
    const runs = await t.database.db.select({ id: payrollRuns.id, status: payrollRuns.status }).from(payrollRuns).where(eq(payrollRuns.employerId, employer.id));
    expect(Object.fromEntries(runs.map((r) => [r.id, r.status]))).toEqual({ [runId]: 'confirmed', [otherRunId]: 'draft' });
    // Charged once: one PaymentIntent for the token, not refunded, and one settled card payment.
    const intents = await t.database.db.select().from(cardSandboxPaymentIntents).where(eq(cardSandboxPaymentIntents.tokenId, spt!));
    expect(intents.map((i) => ({ amount: i.amount, status: i.status }))).toEqual([{ amount: 100n, status: 'succeeded' }]);
    const cardPayments = await t.database.db.select().from(payments).where(and(eq(payments.rail, 'card'), eq(payments.reference, intents[0]!.id)));
    expect(cardPayments.map((p) => p.status)).toEqual(['served']);
    results.set('card', result);
  });

  it('every rail: served once, refused 402 otherwise, charged once', ({ task }) => {
    const rails: RailName[] = ['A', 'B', 'C', 'card'];
    // Each rail's own test asserted its counts; this one fails if any of them did not finish.
    expect(rails.filter((rail) => !results.has(rail))).toEqual([]);
    const per = rails.map((rail) => `${rail} ${results.get(rail)!.served}/${results.get(rail)!.refused}`).join(', ');
    const later = rails.flatMap((rail) => results.get(rail)!.later);
    const codes: Record<string, number> = {};
    for (const rail of rails) for (const [code, n] of Object.entries(results.get(rail)!.codes)) codes[code] = (codes[code] ?? 0) + n;
    const minPeak = Math.min(...rails.map((rail) => results.get(rail)!.peak));
    reportFigure(task, {
      check: 'payment-replay',
      summary:
        `one proof x ${COPIES} concurrent (at least ${minPeak} in the server at once), served/refused 402 per rail: ${per} ` +
        `(${Object.entries(codes).map(([code, n]) => `${n} ${code}`).join(', ')}); charged once each on chain or card; ` +
        `later replays (same request, same route with another body, another route) refused ${later.filter((l) => l.status === 402).length} of ${later.length}`,
    });
  });
});
