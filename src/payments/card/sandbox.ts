import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { stripe } from 'mppx/server';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { cardSandboxPaymentIntents, cardSandboxRefunds, cardSandboxTokens } from '../tables.js';
import type { CardRefundPart } from './credit.js';
import type { CardRail } from '../mpp/rail.js';

/**
 * Local mode's card processor: what mppx's stripe method calls (`paymentIntents.create` with a
 * shared payment token and an idempotency key), kept in the database. It behaves like Stripe's test
 * mode for the cases a payer meets: a test token pays once, up to its amount, before it expires;
 * `pm_card_chargeDeclined` is declined; a retried idempotency key is a replay.
 */

/** Stripe's test payment methods the sandbox knows. */
export const SANDBOX_PAYMENT_METHODS = ['pm_card_visa', 'pm_card_mastercard', 'pm_card_chargeDeclined'] as const;
export const SANDBOX_NETWORK_ID = 'local-card-sandbox';

export interface SandboxTokenRequest {
  paymentMethod: (typeof SANDBOX_PAYMENT_METHODS)[number];
  currency: string;
  /** Minor units (cents). */
  maxAmount: bigint;
  expiresAt: Date;
}

interface PaymentIntentParams {
  amount: number;
  currency: string;
  confirm: boolean;
  shared_payment_granted_token: string;
}

/** A Stripe API error, as the stripe method reports it in the 402. */
class CardError extends Error {}

export class CardSandbox {
  constructor(private readonly db: Db) {}

  /** A test shared payment token (what Stripe issues for a payment method and a spending limit). */
  async issueToken(request: SandboxTokenRequest): Promise<string> {
    const id = `spt_test_${randomBytes(12).toString('hex')}`;
    await this.db.insert(cardSandboxTokens).values({
      id,
      paymentMethod: request.paymentMethod,
      currency: request.currency.toLowerCase(),
      maxAmount: request.maxAmount,
      expiresAt: request.expiresAt,
    });
    return id;
  }

  /** The duck-typed Stripe client mppx's stripe method takes. */
  readonly client = {
    paymentIntents: {
      create: (params: PaymentIntentParams, options: { idempotencyKey?: string } = {}) => this.createPaymentIntent(params, options),
    },
  };

  private async createPaymentIntent(params: PaymentIntentParams, options: { idempotencyKey?: string }) {
    const idempotencyKey = options.idempotencyKey ?? `pi_key_${randomBytes(12).toString('hex')}`;
    return this.db.transaction(async (tx) => {
      const [earlier] = await tx.select().from(cardSandboxPaymentIntents).where(eq(cardSandboxPaymentIntents.idempotencyKey, idempotencyKey));
      if (earlier) return { id: earlier.id, status: earlier.status, lastResponse: { headers: { 'idempotent-replayed': 'true' } } };

      const [token] = await tx
        .select()
        .from(cardSandboxTokens)
        .where(eq(cardSandboxTokens.id, params.shared_payment_granted_token))
        .for('update');
      if (!token) throw new CardError(`No such shared payment token: '${params.shared_payment_granted_token}'`);
      // Real time, like Stripe's: the token's expiry comes from the payer's clock (the dev card-token route), not the service clock.
      if (token.expiresAt.getTime() <= Date.now()) throw new CardError('The shared payment token has expired');
      if (token.currency !== params.currency.toLowerCase()) throw new CardError(`The shared payment token is for ${token.currency}, not ${params.currency}`);
      if (!Number.isSafeInteger(params.amount) || params.amount <= 0) throw new CardError('Invalid amount');
      if (BigInt(params.amount) > token.maxAmount) throw new CardError('The amount exceeds the shared payment token limit');
      if (!params.confirm) throw new CardError('The sandbox confirms every PaymentIntent at creation');
      if (token.paymentMethod === 'pm_card_chargeDeclined') throw new CardError('Your card was declined.');

      const id = `pi_sandbox_${randomBytes(12).toString('hex')}`;
      const inserted = await tx
        .insert(cardSandboxPaymentIntents)
        .values({ id, idempotencyKey, tokenId: token.id, amount: BigInt(params.amount), currency: token.currency, status: 'succeeded' })
        .onConflictDoNothing({ target: cardSandboxPaymentIntents.tokenId })
        .returning({ id: cardSandboxPaymentIntents.id });
      if (inserted.length === 0) throw new CardError('The shared payment token has already been used');
      return { id, status: 'succeeded', lastResponse: { headers: {} as Record<string, string> } };
    });
  }

  /**
   * Gives a charge back, all that is left of it or `part`, like Stripe's refunds: a retried key is
   * the same refund, more than is left is refused, and refunding a refunded charge in full is a no-op.
   */
  async refund(paymentIntentId: string, part?: CardRefundPart): Promise<void> {
    await this.db.transaction(async (tx) => {
      const [intent] = await tx.select().from(cardSandboxPaymentIntents).where(eq(cardSandboxPaymentIntents.id, paymentIntentId)).for('update');
      if (!intent) throw new CardError(`No such payment_intent: '${paymentIntentId}'`);
      const left = intent.amount - intent.amountRefunded;
      if (!part && left === 0n) return;
      const amount = part?.cents ?? left;
      const key = part?.key ?? `refund_${paymentIntentId}`;
      const [refund] = await tx.insert(cardSandboxRefunds).values({ idempotencyKey: key, paymentIntentId, amount }).onConflictDoNothing().returning();
      if (!refund) return; // this key's refund, again
      if (amount <= 0n || amount > left) throw new CardError(`Refund amount (${amount}) is greater than unrefunded amount on payment_intent (${left})`);
      const refunded = intent.amountRefunded + amount;
      await tx
        .update(cardSandboxPaymentIntents)
        .set({ amountRefunded: refunded, ...(refunded === intent.amount && { status: 'refunded' as const, refundedAt: clockNow }) })
        .where(eq(cardSandboxPaymentIntents.id, paymentIntentId));
    });
  }

  async paymentIntent(id: string) {
    const [row] = await this.db.select().from(cardSandboxPaymentIntents).where(eq(cardSandboxPaymentIntents.id, id));
    return row ?? null;
  }
}

/** The card fallback over the sandbox, through mppx's own stripe method. */
export function sandboxCardRail(sandbox: CardSandbox): CardRail {
  return {
    method: stripe.charge({ client: sandbox.client, networkId: SANDBOX_NETWORK_ID, paymentMethodTypes: ['card'] }) as never,
    networkId: SANDBOX_NETWORK_ID,
    refund: (id, part) => sandbox.refund(id, part),
  };
}
