import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import type { PaidCallerResolver } from '../../http/paid-caller.js';
import { PAID } from '../prices.js';
import { CardCredits, type CardCreditRow } from './credit.js';
import { CardSandbox } from './sandbox.js';

/**
 * The card credit's money rules under concurrency, over the database and the card sandbox: draws
 * never take more than the credit holds, a payment draws once, a failed call's draw comes back
 * once (to the credit, or to the card once the remainder went back), and the remainder is refunded
 * once even when the processor fails the first time.
 */
let t: TestApp;
let sandbox: CardSandbox;
let failRefunds = 0;
let credits: CardCredits;

const OFFRAMP = PAID.bridgeOfframp; // $0.25
// Agent keys stand in for identity here: the resolver is what the gate hands the credits.
const holders: PaidCallerResolver = {
  resolve: async (headers) => {
    const employerId = headers.get('x-test-holder');
    return employerId ? { kind: 'agent_key', employerId } : { kind: 'anonymous' };
  },
};

beforeAll(async () => {
  t = await startTestApp();
  sandbox = new CardSandbox(t.database.db);
  credits = new CardCredits(t.database.db, holders, async (id, part) => {
    if (failRefunds > 0) {
      failRefunds -= 1;
      throw new Error('the processor timed out');
    }
    await sandbox.refund(id, part);
  });
});

afterAll(async () => {
  await t?.close();
});

/** A $0.50 top-up charged in the sandbox, as a credit held by a fresh holder. */
async function topUp(): Promise<CardCreditRow> {
  const spt = await sandbox.issueToken({ paymentMethod: 'pm_card_visa', currency: 'usd', maxAmount: 50n, expiresAt: new Date(Date.now() + 60_000) });
  const intent = await sandbox.client.paymentIntents.create({ amount: 50, currency: 'usd', confirm: true, shared_payment_granted_token: spt }, { idempotencyKey: randomUUID() });
  return credits.fund({ paymentIntent: intent.id, network: 'stripe:test', route: OFFRAMP, holder: `employer:${randomUUID()}`, amount: 500_000n });
}

const draw = (credit: CardCreditRow, proofKey = `draw:${randomUUID()}`) => credits.drawPayment(credit, OFFRAMP, proofKey, {}).settle();
const current = async (credit: CardCreditRow) => (await credits.find(credit.id))!;
const refundedAtProcessor = async (credit: CardCreditRow) => (await sandbox.paymentIntent(credit.paymentIntent))!.amountRefunded;

describe('card credit', () => {
  it('five calls at once on a credit that holds two fees: two draw, three are refused, nothing goes below zero', async () => {
    const credit = await topUp();
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => draw(credit)));
    expect(outcomes.map((o) => o.state).sort()).toEqual(['refused', 'refused', 'refused', 'settled', 'settled']);
    expect((await current(credit)).remaining).toBe(0n);
  });

  it('a settlement retried for the same payment draws once', async () => {
    const credit = await topUp();
    const [first, again] = await Promise.all([draw(credit, 'draw:same'), draw(credit, 'draw:same')]);
    expect([first.state, again.state]).toEqual(['settled', 'settled']);
    expect((await current(credit)).remaining).toBe(250_000n);
  });

  it("a failed call's draw comes back to the credit once, however often it is returned", async () => {
    const credit = await topUp();
    await draw(credit, `draw:${credit.id}`);
    const references = await Promise.all([credits.returnDraw(`draw:${credit.id}`), credits.returnDraw(`draw:${credit.id}`)]);
    expect(references).toEqual([`credit:${credit.id}`, `credit:${credit.id}`]);
    expect((await current(credit)).remaining).toBe(500_000n);
  });

  it('a draw returned after the remainder went back to the card goes to the card, once', async () => {
    const credit = await topUp();
    await draw(credit, `draw:${credit.id}`);
    expect(await credits.refundRemainder(credit)).toMatchObject({ status: 'refunded', refunded: 250_000n, remaining: 0n });
    expect(await credits.returnDraw(`draw:${credit.id}`)).toBe(credit.paymentIntent);
    expect(await credits.returnDraw(`draw:${credit.id}`)).toBe(`credit:${credit.id}`);
    expect(await refundedAtProcessor(credit)).toBe(50n);
    expect((await current(credit)).remaining).toBe(0n);
  });

  it('a refund racing draws: every cent is drawn, refunded or left, and the processor gave back what the credit says', async () => {
    const credit = await topUp();
    const [refund, ...outcomes] = await Promise.all([credits.refundRemainder(credit), draw(credit), draw(credit)]);
    const drawn = BigInt(outcomes.filter((o) => o.state === 'settled').length) * OFFRAMP.price;
    const after = await current(credit);
    expect(refund?.status).toBe('refunded');
    expect(after.remaining).toBe(0n);
    expect(after.refunded + drawn).toBe(after.funded);
    expect(await refundedAtProcessor(credit)).toBe(after.refunded / 10_000n);
  });

  it('a refund the processor failed stays refunding, and the next round finishes it with the same key', async () => {
    const credit = await topUp();
    failRefunds = 1;
    await expect(credits.refundRemainder(credit)).rejects.toThrow('timed out');
    expect(await current(credit)).toMatchObject({ status: 'refunding', remaining: 0n, refunded: 500_000n });
    // A draw cannot spend what is on its way back.
    expect((await draw(credit)).state).toBe('refused');
    // Not yet stale: left to the worker that may still be running.
    expect(await credits.resumeRefunds()).toBe(0);
    await t.database.pool.query("UPDATE card_credits SET updated_at = now() - interval '2 minutes' WHERE id = $1", [credit.id]);
    expect(await credits.resumeRefunds()).toBe(1);
    expect(await current(credit)).toMatchObject({ status: 'refunded' });
    expect(await refundedAtProcessor(credit)).toBe(50n);
    // Asked again: the same refunded credit, nothing more at the processor.
    expect(await credits.refundRemainder(credit)).toMatchObject({ status: 'refunded' });
    expect(await refundedAtProcessor(credit)).toBe(50n);
  });

  it("a draw on another holder's credit, or on a route it was not bought for, is refused", async () => {
    const credit = await topUp();
    const request = (holder: string) => new Request('http://test/', { headers: { 'x-test-holder': holder } });
    const owner = credit.holder.slice('employer:'.length);
    expect(await credits.verifyDraw(OFFRAMP, credit.id, request(randomUUID()), 'k1')).toMatchObject({ ok: false, reason: expect.stringContaining('no card credit') });
    expect(await credits.verifyDraw(PAID.payrollExecute, credit.id, request(owner), 'k2')).toMatchObject({ ok: false, reason: expect.stringContaining('pays for POST /api/mpp/bridge/offramp only') });
    expect(await credits.verifyDraw(OFFRAMP, credit.id, request(owner), 'k3')).toMatchObject({ ok: true });
  });
});
