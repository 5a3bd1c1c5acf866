import { generateKeyPairSigner } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { Mppx as MppxClient, tempo } from 'mppx/client';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../test/support/http.js';
import { card, loseAnswer, proofMaker, railBalance } from '../../test/support/pay.js';
import { auditLog } from '../audit/tables.js';
import { paymentReceipts, payments } from './tables.js';
import { createLogger } from '../log.js';
import { paymentGate, type PaymentRailAdapter, type SettlementOutcome } from './gate.js';
import type { PaidRoute } from './prices.js';
import { PaymentReconciler } from './reconcile.js';
import { PaymentRefunds } from './refunds.js';

/**
 * Issue 24 on the real app and the embedded chains: a route that acts settles its fee before the
 * handler (two calls on one fee's worth: one action), a 5xx after settlement refunds the fee on
 * every rail, a settled but unserved payment is served once when its proof comes back, and the
 * reconciler resolves what a crash left behind.
 */
let t: TestApp;
let server: LoopbackServer;
const actions: string[] = [];

const route = (path: string, options: Partial<PaidRoute> = {}): PaidRoute => ({
  method: 'POST',
  path,
  price: 10_000n,
  rails: ['A', 'B', 'C'],
  unit: 'charge',
  card: false,
  effect: 'acts',
  summary: 'A test route that acts',
  ...options,
});
const ACTS = route('/test/acts/{outcome}');
const CARD_ACTS = route('/test/card-acts/{outcome}', { price: 1_000_000n, rails: ['A'], card: true });
// Below the card processor's minimum: the card buys a card credit.
const CREDIT_ACTS = route('/test/credit-acts/{outcome}', { price: 250_000n, rails: ['A'], card: true });
const READS = route('/test/reads/{outcome}', { effect: 'reads' });

/**
 * The real rails behind a gate whose settlement the test steers: `lose` settles for real and
 * then loses the answer (a timeout, a crash), `skip` never settles.
 */
function steeredGate(mode: 'lose' | 'skip') {
  const db = t.database.db;
  const { adapters } = t.payments!;
  const steered = adapters.map(
    (adapter): PaymentRailAdapter => ({
      ...adapter,
      async verify(paid, proof, request) {
        const verification = await adapter.verify(paid, proof, request);
        if (!verification.ok) return verification;
        const real = verification.payment.settle;
        const settle = async (): Promise<SettlementOutcome> => {
          if (mode === 'skip') return { state: 'unknown', reason: 'the facilitator timed out', reference: null };
          const outcome = await real();
          return { state: 'unknown', reason: 'the answer was lost', reference: outcome.state === 'settled' ? outcome.reference : null };
        };
        return { ok: true, payment: { ...verification.payment, settle } };
      },
    }),
  );
  const refunds = new PaymentRefunds(db, { ...t.chains!, refundCard: (id) => t.payments!.cardSandbox!.refund(id) }, 1);
  return {
    gate: paymentGate({ db, adapters: steered, refunds, leaseSeconds: 1 }),
    reconciler: (unservedSeconds = 3600) => new PaymentReconciler({ db, clock: t.database.clock, adapters: steered, refunds, unservedSeconds, log: createLogger('silent') }),
  };
}

let steered: ReturnType<typeof steeredGate>;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  for (const paid of [ACTS, CARD_ACTS, CREDIT_ACTS, READS]) {
    t.app.post(paid.path.replace('{outcome}', ':outcome'), t.payments!.gate(paid), async (c) => {
      const outcome = c.req.param('outcome');
      if (outcome === 'throw') throw new Error('handler blew up');
      if (outcome === 'fail') return c.json({ error: 'Broken.', code: 'INTERNAL_ERROR' }, 500);
      actions.push(`${c.var.payment.id}:${await c.req.text()}`);
      return c.json({ acted: true, redeemed: c.var.payment.redeemed }, 200);
    });
  }
  // Behind gates whose settlement the reconciler tests steer.
  steered = steeredGate('lose');
  const skipping = steeredGate('skip');
  t.app.post('/test/steered/lose', steered.gate(route('/test/steered/lose')), (c) => c.json({ acted: true, redeemed: c.var.payment.redeemed }));
  t.app.post('/test/steered/skip', skipping.gate(route('/test/steered/skip')), (c) => c.json({ acted: true }));
  server = await serveOnLoopback(t.app.fetch);
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

const USD = 1_000_000n;
const post = (path: string, headers: Record<string, string>, body = '{"n":1}') =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
const paymentOf = async (payer: string) => {
  const rows = await t.database.db.select().from(payments);
  return rows.filter((row) => row.payer?.toLowerCase() === payer.toLowerCase());
};

const balance = (rail: 'A' | 'B' | 'C', payer: string) => railBalance(t, rail, payer);

describe('a route that acts', () => {
  for (const rail of ['A', 'B', 'C'] as const) {
    it(`rail ${rail}: two calls at once on one fee's worth act once; the other answers 402 before acting`, async () => {
      const maker = await proofMaker(t, server.url, rail, '0.01');
      const path = '/test/acts/ok';
      const proofs = [await maker.proof(path), await maker.proof(path)];
      const before = actions.length;
      const responses = await Promise.all(proofs.map((proof, i) => post(path, proof, `{"call":${i}}`)));
      expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
      expect((await json<{ code: string }>(responses.find((r) => r.status === 402)!)).code).toBe('PAYMENT_SETTLEMENT_FAILED');
      expect(actions.length - before).toBe(1);
      expect(await balance(rail, maker.payer)).toBe(0n);
      expect((await paymentOf(maker.payer)).map((p) => p.status).sort()).toEqual(['served', 'voided']);
    });

    it(`rail ${rail}: a 500 after settlement gives the fee back on chain`, async () => {
      const maker = await proofMaker(t, server.url, rail, '1');
      const response = await post('/test/acts/fail', await maker.proof('/test/acts/fail'));
      expect(response.status).toBe(500);
      expect(await balance(rail, maker.payer)).toBe(USD);
      const [row] = await paymentOf(maker.payer);
      expect(row).toMatchObject({ status: 'refunded', httpStatus: 500 });
      expect(row!.refundReference).toBeTruthy();
      expect(response.headers.get('payment-refund')).toBe(row!.refundReference);
      const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.targetId, row!.id));
      expect(audit.map((a) => a.action)).toEqual(['payment.refunded']);
      // No receipt: the fee was not kept.
      expect(await t.database.db.select().from(paymentReceipts).where(eq(paymentReceipts.paymentId, row!.id))).toEqual([]);
    });
  }

  it('a handler that throws after settlement is refunded too', async () => {
    const maker = await proofMaker(t, server.url, 'B', '1');
    expect((await post('/test/acts/throw', await maker.proof('/test/acts/throw'))).status).toBe(500);
    expect(await balance('B', maker.payer)).toBe(USD);
    expect((await paymentOf(maker.payer))[0]?.status).toBe('refunded');
  });

  it('the card: a 500 after the charge refunds it at the processor', async () => {
    let token: string | undefined;
    const pay = card(server.url, 'pm_card_visa', (spt) => (token = spt));
    const response = await pay('/test/card-acts/fail', { method: 'POST', body: {} });
    expect(response.status).toBe(500);
    const { rows } = await t.database.pool.query<{ id: string; status: string }>('SELECT id, status FROM card_sandbox_payment_intents WHERE token_id = $1', [token]);
    expect(rows[0]?.status).toBe('refunded');
    const [row] = await t.database.db.select().from(payments).where(eq(payments.reference, rows[0]!.id));
    expect(row).toMatchObject({ rail: 'card', status: 'refunded', refundReference: rows[0]!.id });
  });
});

describe('a card credit behind the gate', () => {
  it("a 500 gives the call's draw back to the credit (not to the card), and the next call draws it again", async () => {
    const identity = { 'X-Identity-Token': await t.token('credit-holder', 'holder@credit.example') };
    const failed = await card(server.url)('/test/credit-acts/fail', { method: 'POST', body: {}, headers: identity });
    expect(failed.status).toBe(500);
    const creditId = failed.headers.get('Payment-Refund')!.replace(/^credit:/, '');
    const credit = () => t.payments!.cardCredits!.find(creditId);
    expect(await credit()).toMatchObject({ status: 'open', funded: 500_000n, remaining: 500_000n });
    const [feeRow] = await t.database.db.select().from(payments).where(eq(payments.refundReference, `credit:${creditId}`));
    expect(feeRow).toMatchObject({ rail: 'card', status: 'refunded', amount: 250_000n });

    const paid = await post('/test/credit-acts/ok', { ...identity, 'Payment-Credit': creditId });
    expect(paid.status).toBe(200);
    expect(paid.headers.get('Payment-Credit-Remaining')).toBe('0.250000');
    expect((await credit())!.remaining).toBe(250_000n);
  });
});

describe('a pushed rail A payment (the payer sent the transaction itself)', () => {
  it('is refunded when the handler answers 500, even on a route that only reads', async () => {
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const rpc = (method: string, params: unknown[]) =>
      fetch(`${server.url}/api/dev/rpc/tempo`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    await rpc('hardhat_impersonateAccount', [payer]);
    await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: payer, amount: '1' } });
    const client = createClient({ chain: tempoChain, transport: http(`${server.url}/api/dev/rpc/tempo`), account: payer });
    const pay = MppxClient.create({ methods: [tempo.charge({ account: payer, getClient: () => client })], polyfill: false }).fetch;
    const response = await pay(`${server.url}/test/reads/fail`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(500);
    expect(await balance('A', payer)).toBe(USD);
    expect((await paymentOf(payer))[0]).toMatchObject({ status: 'refunded', rail: 'A' });
  });
});

describe('a settled payment whose answer was lost', () => {
  for (const rail of ['A', 'B', 'C'] as const) {
    it(`rail ${rail}: is served once when the same proof and request come back, never charged twice`, async () => {
      const maker = await proofMaker(t, server.url, rail, '1');
      const proof = await maker.proof('/test/acts/ok');
      expect((await post('/test/acts/ok', proof, '{"order":1}')).status).toBe(200);
      const [row] = await paymentOf(maker.payer);
      await loseAnswer(t, { id: row!.id });
      // Another body with the same proof is not the call it paid for.
      expect((await json<{ code: string }>(await post('/test/acts/ok', proof, '{"order":2}'))).code).toBe('PAYMENT_ALREADY_USED');
      const before = actions.length;
      const again = await post('/test/acts/ok', proof, '{"order":1}');
      expect(again.status).toBe(200);
      expect(await json(again)).toEqual({ acted: true, redeemed: true });
      expect(actions.slice(before)).toEqual([`${row!.id}:{"order":1}`]);
      // Served now: a third time is a replay.
      expect((await json<{ code: string }>(await post('/test/acts/ok', proof, '{"order":1}'))).code).toBe('PAYMENT_ALREADY_USED');
      expect(await balance(rail, maker.payer)).toBe(USD - 10_000n);
      expect((await paymentOf(maker.payer)).map((p) => p.status)).toEqual(['served']);
    });
  }

  it('is served by exactly one of 20 identical retries at once', async () => {
    const maker = await proofMaker(t, server.url, 'B', '1');
    const proof = await maker.proof('/test/acts/ok');
    expect((await post('/test/acts/ok', proof)).status).toBe(200);
    const [row] = await paymentOf(maker.payer);
    await loseAnswer(t, { id: row!.id });
    const before = actions.length;
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => post('/test/acts/ok', proof)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(19);
    expect(actions.length - before).toBe(1);
  });
});

describe('the payments reconciler', () => {
  const lapse = () => new Promise((resolve) => setTimeout(resolve, 1_100));

  it('an unknown outcome whose money moved: settled, then served once to its proof; a never-served one is refunded', async () => {
    const { reconciler } = steered;
    const served = await proofMaker(t, server.url, 'B', '1');
    const abandoned = await proofMaker(t, server.url, 'B', '1');
    const proofs = [await served.proof('/test/steered/lose'), await abandoned.proof('/test/steered/lose')];
    for (const proof of proofs) expect((await post('/test/steered/lose', proof)).status).toBe(502);
    await lapse();
    expect(await reconciler().run()).toMatchObject({ settled: 2 });
    const again = await post('/test/steered/lose', proofs[0]!);
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual({ acted: true, redeemed: true });
    expect(await balance('B', served.payer)).toBe(USD - 10_000n);
    // The other payer never came back: refunded once unserved too long, exactly once.
    await lapse();
    expect(await reconciler(0).run()).toMatchObject({ refunded: 1 });
    expect(await reconciler(0).run()).toMatchObject({ refunded: 0, settled: 0 });
    expect(await balance('B', abandoned.payer)).toBe(USD);
    const [row] = await paymentOf(abandoned.payer);
    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.targetId, row!.id));
    expect(audit.map((a) => a.action).sort()).toEqual(['payment.refunded', 'payment.settled']);
  });

  it('a settlement never sent stays open while it could land, and is voided once it never can', async () => {
    const { reconciler } = steered;
    const maker = await proofMaker(t, server.url, 'B', '1');
    expect((await post('/test/steered/skip', await maker.proof('/test/steered/skip'))).status).toBe(502);
    await lapse();
    expect(await reconciler().run()).toMatchObject({ pending: 1, voided: 0 });
    // The authorization's validBefore has passed: it can never be executed.
    const [row] = await paymentOf(maker.payer);
    await t.database.pool.query(`UPDATE payments SET trace = jsonb_set(trace, '{validBefore}', '"1"') WHERE id = $1`, [row!.id]);
    expect(await reconciler().run()).toMatchObject({ voided: 1 });
    expect(await balance('B', maker.payer)).toBe(USD);
  });

  it('a claim whose request died after its money moved: settled by the reconciler, and its retry is served once', async () => {
    const { reconciler } = steered;
    const maker = await proofMaker(t, server.url, 'A', '1');
    const proof = await maker.proof('/test/steered/lose');
    expect((await post('/test/steered/lose', proof)).status).toBe(502);
    // What a kill -9 between the transfer and its record leaves: the claim, nothing else.
    const [row] = await paymentOf(maker.payer);
    await t.database.pool.query("UPDATE payments SET status = 'claimed', reference = NULL WHERE id = $1", [row!.id]);
    await lapse();
    expect(await reconciler().run()).toMatchObject({ settled: 1 });
    const again = await post('/test/steered/lose', proof);
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual({ acted: true, redeemed: true });
    expect(await balance('A', maker.payer)).toBe(USD - 10_000n);
    expect((await paymentOf(maker.payer))[0]).toMatchObject({ status: 'served' });
  });
});

describe('a refund, exactly once through a crash', () => {
  /** A fee row being refunded to a fresh payer (as the gate leaves it after a 5xx). */
  const refunding = async (rail: 'A' | 'B' | 'C', payer: string) => {
    const [row] = await t.database.db
      .insert(payments)
      .values({ proofKey: `test:${crypto.randomUUID()}`, rail, network: 'test', route: 'POST /test', payer, amount: 10_000n, status: 'refunding', requestId: 'test' })
      .returning();
    return row!;
  };
  const refunds = () => new PaymentRefunds(t.database.db, { ...t.chains! }, 60);
  beforeAll(async () => {
    // The service wallets hold the fees they give back.
    const { payTo } = t.payments!;
    for (const [network, address] of [['eip155:4217', payTo.tempo], ['eip155:8453', payTo.base], [t.embeddedChains!.solana.network, payTo.solana]]) {
      await t.request('POST', '/api/dev/faucet', { body: { network, address, amount: '1' } });
    }
  });
  /**
   * Signs and records the refund, then stops before sending it: `killed` (a kill -9 there: nothing
   * more runs) or `failed` (the hook throws after recording; on an EVM chain its nonce is filled, so
   * the recorded bytes can never mine).
   */
  const crashBeforeSending = (
    signed: { hash?: string; signature?: string },
    row: { id: string },
    attempt: Record<string, unknown>,
    how: 'killed' | 'failed' = 'failed',
  ) =>
    t.database.pool
      .query('UPDATE payments SET refund_reference = $2, refund_attempt = $3 WHERE id = $1', [row.id, signed.hash ?? signed.signature, attempt])
      .then(() => (how === 'killed' ? new Promise<never>(() => {}) : Promise.reject(new Error('failed after recording'))));

  it('rails A and B: the recorded bytes are sent again, not a second refund; bytes whose nonce was filled get a new refund', async () => {
    for (const rail of ['A', 'B'] as const) {
      const chain = rail === 'A' ? t.chains!.tempo : t.chains!.base;
      for (const how of ['killed', 'failed'] as const) {
        const payer = privateKeyToAccount(generatePrivateKey()).address;
        const row = await refunding(rail, payer);
        const sending = chain.transfer(payer, row.amount, undefined, { beforeBroadcast: (signed) => crashBeforeSending(signed, row, { ...signed }, how) });
        if (how === 'failed') await sending.catch(() => {});
        const stored = await vi.waitFor(async () => {
          const [found] = await t.database.db.select().from(payments).where(eq(payments.id, row.id));
          expect(found?.refundReference).toBeTruthy();
          return found!;
        });
        const outcome = await refunds().refund(stored, 'test');
        expect(outcome.state, `${rail}, ${how}`).toBe('refunded');
        expect(outcome.reference === stored.refundReference, `${rail}, ${how}`).toBe(how === 'killed');
        // Once: a second worker holding the old row finds it done and sends nothing.
        await refunds().refund(stored, 'test').catch(() => {});
        expect(await balance(rail, payer)).toBe(row.amount);
        expect((await t.database.db.select().from(payments).where(eq(payments.id, row.id)))[0]).toMatchObject({ status: 'refunded' });
      }
    }
  });

  it('rail C: the recorded transaction is sent again while its blockhash lives', async () => {
    const payer = (await generateKeyPairSigner()).address;
    const row = await refunding('C', payer);
    await t.chains!.solana
      .transfer(payer, row.amount, `refund ${row.id}`, {
        beforeSend: (signed) => crashBeforeSending(signed, row, { signature: signed.signature, wire: signed.wire, lastValidBlockHeight: signed.lastValidBlockHeight.toString() }),
      })
      .catch(() => {});
    const [stored] = await t.database.db.select().from(payments).where(eq(payments.id, row.id));
    const outcome = await refunds().refund(stored!, 'test');
    // Resent: it lands with the same signature (the next round sees it landed).
    const settledOutcome = outcome.state === 'refunded' ? outcome : await refunds().refund((await t.database.db.select().from(payments).where(eq(payments.id, row.id)))[0]!, 'test');
    expect(settledOutcome).toEqual({ state: 'refunded', reference: stored!.refundReference });
    expect(await balance('C', payer)).toBe(row.amount);
  });
});
