import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { generateKeyPairSigner, type Address as SolanaAddress } from '@solana/kit';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { Network, PaymentRequirements, PaymentRequirementsV1 } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/v1';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { eq } from 'drizzle-orm';
import { Hono, type MiddlewareHandler } from 'hono';
import { Challenge, Credential } from 'mppx';
import { Mppx as MppxClient, stripe as stripeClient, tempo } from 'mppx/client';
import { createClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../test/support/http.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { card } from '../../test/support/pay.js';
import { paymentReceipts, payments } from './tables.js';
import type { AppEnv } from '../http/context.js';
import { HttpMetrics } from '../http/metrics.js';
import { requestContext } from '../http/request-context.js';
import { createLogger } from '../log.js';
import { formatUsd } from '../money.js';
import { paymentGate, type PaymentRailAdapter } from './gate.js';
import { CARD_MINIMUM, PRICE_TABLE, type PaidRoute } from './prices.js';
import { PaymentRefunds } from './refunds.js';

/**
 * The gate on the real app, paid by unmodified clients over HTTP: mppx (rail A, private-key and
 * JSON-RPC accounts, the card), @x402/fetch (rails B and C), a v1 X-PAYMENT payment and the legacy
 * `mpp` scheme. Test routes behind the same gate answer 403, 500 or throw, to show what is charged.
 */
let t: TestApp;
let server: LoopbackServer;
let base: string;
let handlerRuns = 0;

const testRoute = (path: string, price: bigint, options: Partial<PaidRoute> = {}): PaidRoute => ({
  method: 'GET',
  path,
  price,
  rails: ['A', 'B', 'C'],
  unit: 'charge',
  card: false,
  effect: 'reads',
  summary: 'A test route',
  ...options,
});
const PAID = testRoute('/test/paid/{outcome}', 10_000n);
const CARD = testRoute('/test/card/{outcome}', 1_000_000n, { rails: ['A'], card: true });
const YIELD_RATES = '/api/mpp/treasury/yield-rates';

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  const gate = t.payments!.gate;
  // Routes behind the real gate whose handler answers as told.
  for (const route of [PAID, CARD]) {
    t.app.get(route.path.replace('{outcome}', ':outcome'), gate(route), (c) => {
      handlerRuns += 1;
      const outcome = c.req.param('outcome');
      if (outcome === 'forbidden') return c.json({ error: 'Not authorised.', code: 'AGENT_NOT_AUTHORIZED' }, 403);
      if (outcome === 'fail') return c.json({ error: 'Broken.', code: 'INTERNAL_ERROR' }, 500);
      if (outcome === 'throw') throw new Error('handler blew up');
      return c.json({ served: true }, 200);
    });
  }
  server = await serveOnLoopback(t.app.fetch);
  base = server.url;
});

afterAll(async () => {
  await server.close();
  await t.close();
});

// ---- helpers -----------------------------------------------------------------------------------

const faucet = async (network: string, address: string, amount = '5') => {
  const response = await t.request('POST', '/api/dev/faucet', { body: { network, address, amount } });
  expect(response.status).toBe(200);
};
const tempoBalance = (owner: Address) =>
  t.embeddedChains!.tempo.connection.publicClient.readContract({ address: t.embeddedChains!.tempo.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
const baseBalance = (owner: Address) =>
  t.embeddedChains!.base.connection.publicClient.readContract({ address: t.embeddedChains!.base.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

async function tempoPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await faucet('eip155:4217', payer.address);
  return payer;
}
async function basePayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await faucet('eip155:8453', payer.address);
  return payer;
}

/** The unmodified mppx Tempo client, signing against the dev RPC. */
function tempoMethod(account: PrivateKeyAccount | Address) {
  const client = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account });
  return tempo.charge({ account, getClient: () => client });
}
const mppxFetch = (account: PrivateKeyAccount | Address) => MppxClient.create({ methods: [tempoMethod(account)], polyfill: false }).fetch;

/** An `Authorization: Payment` credential for the route's current challenge. */
async function mppCredential(payer: PrivateKeyAccount, path: string): Promise<string> {
  const challenge = Challenge.fromResponse(await fetch(`${base}${path}`));
  return tempoMethod(payer).createCredential({ challenge, context: {} } as never);
}

/** x402Client opts in to local mode's tokens (they live at other addresses than real USDC). */
function localX402Client(): x402Client {
  const chains = t.embeddedChains!;
  const cap = '1000000';
  return new x402Client().setSpendControls({
    allowedAssets: [
      { network: 'eip155:8453', asset: chains.base.contracts.stablecoin!, maxAmountPerPayment: cap },
      { network: chains.solana.network as Network, asset: chains.solana.mint, maxAmountPerPayment: cap },
    ],
  });
}

/** The route's x402 requirement on Base, as its 402 offers it. */
async function baseRequirement(path: string): Promise<PaymentRequirements> {
  const required = decodePaymentRequiredHeader((await fetch(`${base}${path}`)).headers.get('PAYMENT-REQUIRED')!);
  return required.accepts.find((r) => r.network === 'eip155:8453')!;
}
/** A PAYMENT-SIGNATURE for a (possibly altered) requirement, signed by the library's client scheme. */
async function x402Signature(payer: PrivateKeyAccount, requirement: PaymentRequirements, accepted = requirement): Promise<string> {
  const { payload } = await new ExactEvmScheme(payer).createPaymentPayload(2, requirement);
  return Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload })).toString('base64');
}

async function expectPaymentRequired(response: Response, code: string, reason?: RegExp) {
  expect(response.status).toBe(402);
  const body = (await response.json()) as { code: string; error: string };
  expect(body.code).toBe(code);
  if (reason) expect(body.error).toMatch(reason);
  return body;
}

/** A small app with the request context the gate reads, and one route behind the given gate. */
function behindGate(gate: MiddlewareHandler<AppEnv>, path: string, onServe: () => void = () => {}) {
  const app = new Hono<AppEnv>();
  app.use('*', requestContext(createLogger('silent'), new HttpMetrics({ processMetrics: false })));
  app.get(path, gate, (c) => {
    onServe();
    return c.json({ served: true });
  });
  return app;
}

const b64urlJson = (value: string) => JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Record<string, unknown>;

// ---- the 402 contract --------------------------------------------------------------------------

describe('every paid route of the price table', () => {
  it('answers 402 with its exact price and rails, before any validation', async () => {
    expect(PRICE_TABLE).toHaveLength(19);
    for (const route of PRICE_TABLE) {
      // No body, no parameters, not even JSON: the price comes first.
      const path = route.path.replaceAll(/\{\w+\}/g, 'not-a-uuid');
      const response = await fetch(`${base}${path}`, { method: route.method, ...(route.method === 'POST' ? { body: '{broken' } : {}) });
      const where = `${route.method} ${route.path}`;
      expect(response.status, where).toBe(402);
      expect(response.headers.get('cache-control'), where).toBe('no-store');
      const body = (await response.json()) as Record<string, unknown>;
      expect(body, where).toMatchObject({ code: 'PAYMENT_REQUIRED', price: formatUsd(route.price), currency: 'USD', unit: route.unit, rails: route.rails });

      const wwwAuthenticate = response.headers.get('www-authenticate');
      if (route.rails.includes('A')) {
        const challenges = Challenge.deserializeList(wwwAuthenticate!);
        // Per-tick routes are paid through a session only; per-session routes take either.
        const intents = { charge: ['charge'], tick: ['session'], session: ['session', 'charge'] }[route.unit];
        expect(challenges.filter((c) => c.method === 'tempo').map((c) => c.intent), where).toEqual(intents);
        for (const tempoChallenge of challenges.filter((c) => c.method === 'tempo')) {
          expect(tempoChallenge, where).toMatchObject({ request: { amount: route.price.toString(), methodDetails: { chainId: 4217 } } });
          expect((tempoChallenge.request as { recipient: string }).recipient).toBe(t.payments!.payTo.tempo);
        }
        const card = challenges.find((c) => c.method === 'stripe');
        // Below the processor's minimum the card buys a card credit of the minimum.
        const cardCharge = route.price >= CARD_MINIMUM ? route.price : CARD_MINIMUM;
        if (route.card) expect(card?.request, where).toMatchObject({ amount: (cardCharge / 10_000n).toString(), currency: 'usd' });
        else expect(card, where).toBeUndefined();
      } else {
        expect(wwwAuthenticate, where).toBeNull();
      }

      const paymentRequired = response.headers.get('payment-required');
      const x402Rails = route.rails.filter((r) => r !== 'A');
      if (x402Rails.length > 0) {
        const required = decodePaymentRequiredHeader(paymentRequired!);
        expect(required.accepts.map((a) => a.network), where).toEqual(['eip155:8453', t.embeddedChains!.solana.network]);
        for (const accept of required.accepts) expect(accept.amount, where).toBe(route.price.toString());
        expect(body.x402Version, where).toBe(1);
        expect((body.accepts as PaymentRequirementsV1[]).map((a) => [a.network, a.maxAmountRequired]), where).toEqual([
          ['base', route.price.toString()],
          ['solana-devnet', route.price.toString()],
        ]);
      } else {
        expect(paymentRequired, where).toBeNull();
        expect(body.accepts, where).toBeUndefined();
      }
    }
  });

  it('are described in a valid OpenAPI document with price and rails', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { 'x-payment'?: { price: string; rails: string[] }; responses: Record<string, unknown> }>>;
    };
    const validation = await new Validator().validate(document as never);
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);
    for (const route of PRICE_TABLE) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation?.['x-payment'], route.path).toMatchObject({ price: formatUsd(route.price), rails: route.rails, effect: route.effect });
      expect(operation?.responses['402'], route.path).toBeDefined();
    }
  });

  it('declares whether each route acts (its fee is collected before the handler) or reads (issue 24)', () => {
    const of = (effect: 'acts' | 'reads') => PRICE_TABLE.filter((r) => r.effect === effect).map((r) => `${r.method} ${r.path}`);
    expect(of('acts').sort()).toEqual(
      [
        'POST /api/mpp/payroll/execute',
        'POST /api/mpp/employee/advance',
        'POST /api/mpp/bridge/offramp',
        'POST /api/mpp/escrow/post',
        'POST /api/mpp/escrow/deliver',
        'POST /api/mpp/escrow/deliver-signed',
        'POST /api/mpp/agent/pay',
        'POST /api/mpp/agents/register',
        'POST /api/x402/streams',
      ].sort(),
    );
    // The session treasury reads, except its rebalance action.
    expect(PRICE_TABLE.filter((r) => r.actingActions).map((r) => [r.path, r.effect, r.actingActions])).toEqual([
      ['/api/mpp/agent/session/treasury', 'reads', ['rebalance']],
    ]);
    expect(of('reads')).toHaveLength(PRICE_TABLE.length - 9);
  });

  it('issues a distinct challenge on every 402, even at once (one payer pays each of them)', async () => {
    const responses = await Promise.all(Array.from({ length: 50 }, () => fetch(`${base}${YIELD_RATES}`)));
    const ids = responses.map((r) => Challenge.fromResponse(r).id);
    expect(new Set(ids).size).toBe(50);

    const payer = await tempoPayer();
    const paid = await Promise.all(
      responses.slice(0, 3).map(async (response) => {
        const credential = await tempoMethod(payer).createCredential({ challenge: Challenge.fromResponse(response), context: {} } as never);
        return (await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: credential } })).status;
      }),
    );
    expect(paid).toEqual([200, 200, 200]);
    expect(await tempoBalance(payer.address)).toBe(5_000_000n - 3n * 10_000n);
  });

  it('below $0.50 (the processor minimum) offers a card credit of $0.50, not a charge of the price', async () => {
    const cheap = testRoute('/test/cheap-card', 490_000n, { rails: ['A'], card: true });
    const response = await behindGate(t.payments!.gate(cheap), cheap.path).request(cheap.path);
    expect(response.status).toBe(402);
    const challenges = Challenge.deserializeList(response.headers.get('www-authenticate')!);
    expect(challenges.map((c) => c.method)).toEqual(['tempo', 'stripe']);
    expect(challenges[1]!.request).toMatchObject({ amount: '50', currency: 'usd' });
    expect(challenges[1]!.description).toContain('card credit');
  });
});

// ---- paying with each rail ---------------------------------------------------------------------

describe('paying a paid route on the local server', () => {
  it('rail A: the unmodified mppx client with a private-key account', async () => {
    const payer = await tempoPayer();
    const serviceBefore = await tempoBalance(t.payments!.payTo.tempo as Address);
    const response = await mppxFetch(payer)(`${base}${YIELD_RATES}`);
    expect(response.status).toBe(200);
    const rates = (await response.json()) as { apy_bps: number; sources: string[]; allocation: number[] };
    expect(rates.sources.length).toBeGreaterThan(0);
    expect(rates.allocation.reduce((a, b) => a + b, 0)).toBe(10_000);
    const receipt = b64urlJson(response.headers.get('payment-receipt')!);
    expect(receipt).toMatchObject({ method: 'tempo', status: 'success' });
    expect(await tempoBalance(payer.address)).toBe(5_000_000n - 10_000n);
    expect(await tempoBalance(t.payments!.payTo.tempo as Address)).toBe(serviceBefore + 10_000n);

    const [stored] = await t.database.db.select().from(payments).where(eq(payments.reference, receipt.reference as string));
    expect(stored).toMatchObject({ rail: 'A', status: 'served', route: `GET ${YIELD_RATES}`, amount: 10_000n, httpStatus: 200 });
    expect(stored!.payer?.toLowerCase()).toBe(payer.address.toLowerCase());
    const [kept] = await t.database.db.select().from(paymentReceipts).where(eq(paymentReceipts.paymentId, stored!.id));
    expect(kept).toMatchObject({ rail: 'A', amount: 10_000n, status: 'settled' });
  });

  it('rail A: the unmodified mppx client with a JSON-RPC account (it pays, then presents the hash)', async () => {
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const rpc = (method: string, params: unknown[]) =>
      fetch(`${base}/api/dev/rpc/tempo`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    await rpc('hardhat_impersonateAccount', [payer]);
    await faucet('eip155:4217', payer);
    const response = await mppxFetch(payer)(`${base}${YIELD_RATES}`);
    expect(response.status).toBe(200);
    expect(await tempoBalance(payer)).toBe(5_000_000n - 10_000n);
  });

  it('rail A: the legacy `mpp` scheme', async () => {
    const payer = await tempoPayer();
    const credential = await mppCredential(payer, YIELD_RATES);
    const response = await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: credential.replace(/^Payment /, 'mpp ') } });
    expect(response.status).toBe(200);
    expect(await tempoBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });

  it('rail B: @x402/fetch with the exact EVM scheme', async () => {
    const payer = await basePayer();
    const pay = wrapFetchWithPayment(fetch, localX402Client().register('eip155:8453', new ExactEvmScheme(payer)));
    const response = await pay(`${base}${YIELD_RATES}`);
    expect(response.status).toBe(200);
    const settled = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453' });
    expect(await baseBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });

  it('rail C: @x402/fetch with the exact SVM scheme', async () => {
    const payer = await generateKeyPairSigner();
    const solana = t.embeddedChains!.solana;
    await faucet(solana.network, payer.address);
    const client = localX402Client().register(solana.network as Network, new ExactSvmScheme(payer, { rpcUrl: `${base}/api/dev/rpc/solana` }));
    const response = await wrapFetchWithPayment(fetch, client)(`${base}${YIELD_RATES}`);
    expect(response.status).toBe(200);
    expect(decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({ success: true, network: solana.network });
    expect(await solana.tokenBalance(payer.address as SolanaAddress)).toBe(5_000_000n - 10_000n);
  });

  it('rail B: a v1 client sending X-PAYMENT gets X-PAYMENT-RESPONSE', async () => {
    const payer = await basePayer();
    const body = (await (await fetch(`${base}${YIELD_RATES}`)).json()) as { accepts: PaymentRequirementsV1[] };
    const requirement = body.accepts.find((a) => (a.network as string) === 'base')!;
    const { payload } = await new ExactEvmSchemeV1(payer).createPaymentPayload(1, requirement as never);
    const header = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload })).toString('base64');
    const response = await fetch(`${base}${YIELD_RATES}`, { headers: { 'X-PAYMENT': header } });
    expect(response.status).toBe(200);
    expect(decodePaymentResponseHeader(response.headers.get('X-PAYMENT-RESPONSE')!)).toMatchObject({ success: true });
    expect(await baseBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });

  it('refuses a rail the route does not take', async () => {
    const payer = await basePayer();
    const signature = await x402Signature(payer, await baseRequirement(YIELD_RATES));
    // Payroll execute is rail A only.
    const response = await fetch(`${base}/api/mpp/payroll/execute`, { method: 'POST', headers: { 'PAYMENT-SIGNATURE': signature } });
    await expectPaymentRequired(response, 'PAYMENT_RAIL_NOT_ACCEPTED', /rail A only/);
  });
});

// ---- exactly once --------------------------------------------------------------------------------

describe('exactly-once charging', () => {
  it('serves 100 concurrent requests carrying one x402 proof exactly once', async () => {
    const payer = await basePayer();
    const signature = await x402Signature(payer, await baseRequirement('/test/paid/ok'));
    const runsBefore = handlerRuns;
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => fetch(`${base}/test/paid/ok`, { headers: { 'PAYMENT-SIGNATURE': signature } })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(99);
    for (const response of responses.filter((r) => r.status === 402)) {
      expect(((await response.json()) as { code: string }).code).toBe('PAYMENT_ALREADY_USED');
    }
    expect(handlerRuns - runsBefore).toBe(1);
    expect(await baseBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });

  it('serves 20 concurrent requests carrying one MPP credential exactly once', async () => {
    const payer = await tempoPayer();
    const credential = await mppCredential(payer, '/test/paid/ok');
    const runsBefore = handlerRuns;
    const responses = await Promise.all(Array.from({ length: 20 }, () => fetch(`${base}/test/paid/ok`, { headers: { authorization: credential } })));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(handlerRuns - runsBefore).toBe(1);
    expect(await tempoBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });

  it('refuses a replayed proof with PAYMENT_ALREADY_USED', async () => {
    const payer = await tempoPayer();
    const credential = await mppCredential(payer, YIELD_RATES);
    expect((await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: credential } })).status).toBe(200);
    await expectPaymentRequired(await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: credential } }), 'PAYMENT_ALREADY_USED');
    // The legacy scheme is the same proof.
    await expectPaymentRequired(
      await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: credential.replace(/^Payment /, 'mpp ') } }),
      'PAYMENT_ALREADY_USED',
    );
    expect(await tempoBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });

  it('does not charge when the handler answers 500, and the proof can be presented again', async () => {
    const payer = await basePayer();
    const signature = await x402Signature(payer, await baseRequirement('/test/paid/fail'));
    const first = await fetch(`${base}/test/paid/fail`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(first.status).toBe(500);
    expect(first.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(await baseBalance(payer.address)).toBe(5_000_000n);
    // Released, not used up: the same proof reaches the handler again (and is again not charged).
    expect((await fetch(`${base}/test/paid/fail`, { headers: { 'PAYMENT-SIGNATURE': signature } })).status).toBe(500);
    expect(await baseBalance(payer.address)).toBe(5_000_000n);

    const tempoPaying = await tempoPayer();
    const credential = await mppCredential(tempoPaying, '/test/paid/throw');
    expect((await fetch(`${base}/test/paid/throw`, { headers: { authorization: credential } })).status).toBe(500);
    expect(await tempoBalance(tempoPaying.address)).toBe(5_000_000n);
  });

  it('keeps the fee when the handler refuses with 403 after payment (spec 4.1.7)', async () => {
    const payer = await tempoPayer();
    const response = await mppxFetch(payer)(`${base}/test/paid/forbidden`);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { code: string }).code).toBe('AGENT_NOT_AUTHORIZED');
    expect(response.headers.get('payment-receipt')).not.toBeNull();
    expect(await tempoBalance(payer.address)).toBe(5_000_000n - 10_000n);
  });
});

// ---- refusals with reasons ---------------------------------------------------------------------

describe('an invalid proof gets 402 with a reason', () => {
  it('underpaid, wrong recipient, wrong network, expired (x402)', async () => {
    const payer = await basePayer();
    const offered = await baseRequirement(YIELD_RATES);
    const send = (signature: string) => fetch(`${base}${YIELD_RATES}`, { headers: { 'PAYMENT-SIGNATURE': signature } });

    // Each payment signs for an altered requirement and claims it is the offered one.
    const underpaid = await send(await x402Signature(payer, { ...offered, amount: '9999' }, offered));
    await expectPaymentRequired(underpaid, 'PAYMENT_INVALID', /amount|value|insufficient/i);
    const wrongRecipient = await send(await x402Signature(payer, { ...offered, payTo: privateKeyToAccount(generatePrivateKey()).address }, offered));
    await expectPaymentRequired(wrongRecipient, 'PAYMENT_INVALID', /recipient|payTo|to/i);
    const wrongNetwork = await send(await x402Signature(payer, { ...offered, network: 'eip155:1' }));
    await expectPaymentRequired(wrongNetwork, 'PAYMENT_INVALID', /offers|network/i);
    const expired = await send(await x402Signature(payer, { ...offered, maxTimeoutSeconds: -60 }, offered));
    await expectPaymentRequired(expired, 'PAYMENT_INVALID', /valid|expired|before/i);
    expect(await baseBalance(payer.address)).toBe(5_000_000n);
  });

  it('underpaid and expired (MPP)', async () => {
    const payer = await tempoPayer();
    const real = Challenge.fromResponse(await fetch(`${base}${YIELD_RATES}`));
    const lower = structuredClone(real);
    (lower.request as { amount: string }).amount = '9999';
    const signed = Credential.deserialize(await tempoMethod(payer).createCredential({ challenge: lower, context: {} } as never));
    const underpaid = await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: Credential.serialize({ ...signed, challenge: real }) } });
    await expectPaymentRequired(underpaid, 'PAYMENT_INVALID', /9999 base units, the price is 10000/);

    const stale = { ...real, expires: new Date(Date.now() - 1000).toISOString() };
    const expired = await fetch(`${base}${YIELD_RATES}`, {
      headers: { authorization: await tempoMethod(payer).createCredential({ challenge: stale, context: {} } as never) },
    });
    await expectPaymentRequired(expired, 'PAYMENT_INVALID', /challenge|expired/i);
    expect(await tempoBalance(payer.address)).toBe(5_000_000n);
  });

  it('a credential made for another route at the same price (MPP): refused, and still good for its own route', async () => {
    const payer = await tempoPayer();
    const challenge = Challenge.fromResponse(await fetch(`${base}${YIELD_RATES}`));
    const credential = await tempoMethod(payer).createCredential({ challenge, context: {} } as never);
    const before = handlerRuns;
    const elsewhere = await fetch(`${base}/test/paid/ok`, { headers: { authorization: credential } });
    await expectPaymentRequired(elsewhere, 'PAYMENT_INVALID', /scope|route/i);
    expect(handlerRuns).toBe(before);
    expect(await tempoBalance(payer.address)).toBe(5_000_000n);
    expect((await fetch(`${base}${YIELD_RATES}`, { headers: { authorization: credential } })).status).toBe(200);
  });

  it('a malformed proof', async () => {
    const response = await fetch(`${base}${YIELD_RATES}`, { headers: { 'X-PAYMENT': 'not base64 json!' } });
    await expectPaymentRequired(response, 'PAYMENT_INVALID', /X-PAYMENT/);
    expect(response.headers.get('www-authenticate')).toMatch(/^Payment /);
  });

  it('a genuine challenge with a payload that does not fit its method (Tempo and card), found by the fuzz suite', async () => {
    // mppx throws its schema error for these (was a 500): a forged payload is the payer's mistake.
    const card = `${base}${CARD.path.replace('{outcome}', 'ok')}`;
    const runsBefore = handlerRuns;
    let tried = 0;
    for (const url of [`${base}${YIELD_RATES}`, card]) {
      const challenges = Challenge.fromResponseList(await fetch(url));
      expect(challenges.map((c) => c.method)).toEqual(url === card ? ['tempo', 'stripe'] : ['tempo']);
      for (const challenge of challenges) {
        for (const payload of [{ type: 'hash', hash: 'not-hex' }, { type: 'transaction', signature: 7 }, { type: 'session' }, {}, null, 'x']) {
          const response = await fetch(url, { headers: { authorization: Credential.serialize({ challenge, payload }) } });
          await expectPaymentRequired(response, 'PAYMENT_INVALID');
          tried++;
        }
      }
    }
    expect(tried).toBe(18);
    expect(handlerRuns).toBe(runsBefore);
  });
});

// ---- the card fallback ---------------------------------------------------------------------------

describe('card fallback', () => {
  const cardFetch = (paymentMethod: string) =>
    MppxClient.create({
      polyfill: false,
      methods: [
        stripeClient.charge({
          paymentMethod,
          createToken: async ({ amount, currency, expiresAt, paymentMethod: method }) => {
            const response = await t.request('POST', '/api/dev/card/token', {
              body: { payment_method: method, amount, currency, expires_at: expiresAt },
            });
            return ((await response.json()) as { spt: string }).spt;
          },
        }),
      ],
    }).fetch;

  it('pays with a test card through the sandbox, once', async () => {
    const response = await cardFetch('pm_card_visa')(`${base}/test/card/ok`);
    expect(response.status).toBe(200);
    const receipt = b64urlJson(response.headers.get('payment-receipt')!);
    expect(receipt).toMatchObject({ method: 'stripe', status: 'success' });
    expect(await t.payments!.cardSandbox!.paymentIntent(receipt.reference as string)).toMatchObject({ amount: 100n, status: 'succeeded' });
    const [stored] = await t.database.db.select().from(payments).where(eq(payments.reference, receipt.reference as string));
    expect(stored).toMatchObject({ rail: 'card', status: 'served', amount: 1_000_000n });
  });

  it('refunds the card when the handler fails', async () => {
    let charged: string | undefined;
    const response = await card(base, 'pm_card_visa', (spt) => (charged = spt))('/test/card/fail');
    expect(response.status).toBe(500);
    expect(charged).toBeDefined();
    const [intent] = await t.database.pool.query<{ status: string }>('SELECT status FROM card_sandbox_payment_intents WHERE token_id = $1', [charged]).then((r) => r.rows);
    expect(intent?.status).toBe('refunded');
  });

  it('a card refund that fails leaves the payment for the reconciler, which refunds it once', async () => {
    const sandbox = t.payments!.cardSandbox!;
    const refund = vi.spyOn(sandbox, 'refund').mockRejectedValueOnce(new Error('the processor is unavailable'));
    let token: string | undefined;
    const response = await card(base, 'pm_card_visa', (spt) => (token = spt))('/test/card/fail');
    expect(response.status).toBe(500);
    expect(response.headers.get('payment-refund')).toBe('pending');
    const intentOf = async () =>
      (await t.database.pool.query<{ id: string; status: string }>('SELECT id, status FROM card_sandbox_payment_intents WHERE token_id = $1', [token])).rows[0]!;
    const charged = await intentOf();
    expect(charged.status).toBe('succeeded');
    const rowOf = async () => (await t.database.db.select().from(payments).where(eq(payments.reference, charged.id)))[0];
    expect(await rowOf()).toMatchObject({ rail: 'card', status: 'refunding', httpStatus: 500 });

    // A minute later the request's lease has lapsed: the reconciler takes the refund over.
    await t.database.db.update(payments).set({ leaseUntil: new Date(Date.now() - 1000) }).where(eq(payments.reference, charged.id));
    await t.payments!.reconciler.run();
    await t.payments!.reconciler.run();
    expect((await intentOf()).status).toBe('refunded');
    expect(await rowOf()).toMatchObject({ status: 'refunded', refundReference: charged.id });
    expect(refund.mock.calls.filter(([id]) => id === charged.id)).toHaveLength(2); // the failed attempt and the one that landed
    refund.mockRestore();
  });

  it('refuses a declined card with a reason', async () => {
    const response = await cardFetch('pm_card_chargeDeclined')(`${base}/test/card/ok`);
    expect(response.status).toBe(402);
    expect(((await response.json()) as { error: string }).error).toMatch(/declined/);
  });
});

// ---- a settlement whose outcome is unknown ---------------------------------------------------------

describe('unknown settlement outcome', () => {
  it('answers 502, never 402, also to a retry with the same proof', async () => {
    const route = testRoute('/test/unknown', 10_000n, { rails: ['B'] });
    const proofKey = `test:unknown:${randomUUID()}`;
    let runs = 0;
    const adapter: PaymentRailAdapter = {
      rails: ['B'],
      accepts: (proof) => proof.kind === 'x402',
      offer: async () => ({ headers: [] }),
      verify: async () => ({
        ok: true,
        payment: {
          rail: 'B',
          network: 'eip155:8453',
          proofKey,
          payer: null,
          asset: null,
          trace: { kind: 'card', paymentIntent: 'unused' },
          settle: async () => ({ state: 'unknown', reason: 'the facilitator timed out', reference: null }),
        },
      }),
      lookup: async () => ({ state: 'pending' }),
    };
    const refunds = new PaymentRefunds(t.database.db, { ...t.chains! }, 60);
    const app = behindGate(paymentGate({ db: t.database.db, adapters: [adapter], refunds, leaseSeconds: 60 })(route), route.path, () => (runs += 1));
    const proof = Buffer.from(JSON.stringify({ x402Version: 2, accepted: {}, payload: {} })).toString('base64');
    const first = await app.request('/test/unknown', { headers: { 'PAYMENT-SIGNATURE': proof } });
    expect(first.status).toBe(502);
    expect(((await first.json()) as { code: string }).code).toBe('PAYMENT_OUTCOME_UNKNOWN');
    const retry = await app.request('/test/unknown', { headers: { 'PAYMENT-SIGNATURE': proof } });
    expect(retry.status).toBe(502);
    expect(((await retry.json()) as { code: string }).code).toBe('PAYMENT_OUTCOME_UNKNOWN');
    expect(runs).toBe(1);
  });
});
