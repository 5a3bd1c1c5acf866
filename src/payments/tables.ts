/** Payments through the gate (spec 4.1, 4.2), MPP sessions and the local card sandbox. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, tstz, oneOf, employerReference, clockNow } from '../db/columns.js';

export const RAILS = ['A', 'B', 'C', 'card'] as const;
/**
 * claimed: the proof is held by a request (until `lease_until`). settled: the fee moved, the
 * answer is not given yet (an `acts` route settles before its handler). served: the fee is kept
 * and the call answered. voided: the settlement was refused; the proof can never pay. unknown: a
 * settlement whose outcome is not known (the reconciler decides). refunding -> refunded: the fee
 * moved but the call failed (5xx) or was never served; it goes back to the payer.
 */
export const PAYMENT_STATUSES = ['claimed', 'settled', 'served', 'voided', 'unknown', 'refunding', 'refunded'] as const;

/**
 * A fee payment presented to a paid route. `proof_key` (nonce, tx hash or credential id) is
 * unique: a proof is claimed once before the handler runs, so a replay can never be served.
 */
export const payments = pgTable(
  'payments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    proofKey: text('proof_key').notNull(),
    rail: text('rail', { enum: RAILS }).notNull(),
    network: text('network').notNull(),
    route: text('route').notNull(),
    payer: text('payer'),
    amount: money('amount').notNull(),
    asset: text('asset'),
    status: text('status', { enum: PAYMENT_STATUSES }).notNull().default('claimed'),
    /** Settlement reference: a tx hash, signature or processor id. */
    reference: text('reference'),
    httpStatus: integer('http_status'),
    requestId: text('request_id'),
    employerId: employerReference(),
    /** SHA-256 of the proof as presented and of the request it paid for: a redemption must match both. */
    proofHash: text('proof_hash'),
    requestHash: text('request_hash'),
    /** What the reconciler needs to find this payment on chain or at the processor (`PaymentTrace`). */
    trace: jsonb('trace').$type<Record<string, unknown>>(),
    /** The settlement's receipt and the headers that carry it to the payer (kept for a redemption). */
    settlement: jsonb('settlement').$type<{ headers: Record<string, string>; receipt: Record<string, unknown> }>(),
    /** The request holding the claim keeps this in the future; after it lapses the claim is stale. */
    leaseUntil: tstz('lease_until'),
    /** The refund under way: its reference and what resends it (`RefundAttempt`). */
    refundReference: text('refund_reference'),
    refundAttempt: jsonb('refund_attempt').$type<Record<string, unknown>>(),
    createdAt: createdAt(),
    settledAt: tstz('settled_at'),
    servedAt: tstz('served_at'),
    refundedAt: tstz('refunded_at'),
  },
  (t) => [
    uniqueIndex('payments_proof_key_key').on(t.proofKey),
    index('payments_employer_idx').on(t.employerId, t.createdAt),
    index('payments_payer_idx').on(t.payer, t.createdAt),
    index('payments_proof_hash_idx').on(t.proofHash),
    // The reconciler's work list: payments not yet in a final state.
    index('payments_open_idx')
      .on(t.leaseUntil)
      .where(sql`status IN ('claimed', 'settled', 'unknown', 'refunding')`),
    check('payments_rail', oneOf('rail', RAILS)),
    check('payments_status', oneOf('status', PAYMENT_STATUSES)),
    check('payments_amount_nonnegative', sql`${t.amount} >= 0`),
  ],
);

/** The receipt returned to the payer (Payment-Receipt / PAYMENT-RESPONSE), kept for history. */
export const paymentReceipts = pgTable(
  'payment_receipts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    paymentId: uuid('payment_id').references(() => payments.id),
    sessionId: text('session_id').references(() => mppSessions.id),
    route: text('route').notNull(),
    rail: text('rail', { enum: RAILS }).notNull(),
    payer: text('payer'),
    amount: money('amount').notNull(),
    reference: text('reference'),
    status: text('status').notNull(),
    receipt: jsonb('receipt').notNull(),
    employerId: employerReference(),
    createdAt: createdAt(),
  },
  (t) => [
    index('payment_receipts_employer_idx').on(t.employerId, t.createdAt),
    index('payment_receipts_payment_idx').on(t.paymentId),
    check('payment_receipts_rail', oneOf('rail', RAILS)),
  ],
);

export const MPP_SESSION_STATUSES = ['open', 'closing', 'closed'] as const;
/** An MPP payment channel (session-style routes): deposit, cumulative voucher, spend. */
export const mppSessions = pgTable(
  'mpp_sessions',
  {
    /** The channel id. */
    id: text('id').primaryKey(),
    payer: text('payer').notNull(),
    route: text('route').notNull(),
    employerId: employerReference(),
    deposit: money('deposit').notNull(),
    /** Highest cumulative voucher amount accepted. */
    acceptedCumulative: money('accepted_cumulative').notNull().default(sql`0`),
    /** What the service has actually charged against it. */
    spent: money('spent').notNull().default(sql`0`),
    settled: money('settled').notNull().default(sql`0`),
    lastVoucher: jsonb('last_voucher'),
    status: text('status', { enum: MPP_SESSION_STATUSES }).notNull().default('open'),
    openedAt: tstz('opened_at').notNull().default(clockNow),
    updatedAt: updatedAt(),
    closedAt: tstz('closed_at'),
  },
  (t) => [
    index('mpp_sessions_employer_idx').on(t.employerId, t.openedAt),
    index('mpp_sessions_payer_idx').on(t.payer, t.openedAt),
    check('mpp_sessions_status', oneOf('status', MPP_SESSION_STATUSES)),
    check('mpp_sessions_spent_within_voucher', sql`${t.spent} <= ${t.acceptedCumulative}`),
  ],
);

export const CARD_SANDBOX_INTENT_STATUSES = ['succeeded', 'refunded'] as const;

/**
 * Local mode's card processor (the stand-in for Stripe behind mppx's stripe method): test shared
 * payment tokens issued by `POST /api/dev/card/token`, each usable for one PaymentIntent.
 */
export const cardSandboxTokens = pgTable(
  'card_sandbox_tokens',
  {
    /** `spt_test_...` */
    id: text('id').primaryKey(),
    /** A Stripe test payment method: `pm_card_visa` succeeds, `pm_card_chargeDeclined` is declined. */
    paymentMethod: text('payment_method').notNull(),
    currency: text('currency').notNull(),
    /** In the currency's minor unit (cents). */
    maxAmount: money('max_amount').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [check('card_sandbox_tokens_max_amount_positive', sql`${t.maxAmount} > 0`)],
);

/** A confirmed PaymentIntent of the card sandbox; the idempotency key makes a retry a replay. */
export const cardSandboxPaymentIntents = pgTable(
  'card_sandbox_payment_intents',
  {
    /** `pi_sandbox_...` */
    id: text('id').primaryKey(),
    idempotencyKey: text('idempotency_key').notNull(),
    tokenId: text('token_id')
      .notNull()
      .references(() => cardSandboxTokens.id),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    status: text('status', { enum: CARD_SANDBOX_INTENT_STATUSES }).notNull(),
    /** Cents given back so far; the status is `refunded` once it is all of `amount`. */
    amountRefunded: money('amount_refunded').notNull().default(sql`0`),
    createdAt: createdAt(),
    refundedAt: tstz('refunded_at'),
  },
  (t) => [
    uniqueIndex('card_sandbox_payment_intents_idempotency_key').on(t.idempotencyKey),
    check('card_sandbox_payment_intents_refund_within_amount', sql`${t.amountRefunded} <= ${t.amount}`),
    // A token pays once.
    uniqueIndex('card_sandbox_payment_intents_token_key').on(t.tokenId),
    check('card_sandbox_payment_intents_status', oneOf('status', CARD_SANDBOX_INTENT_STATUSES)),
  ],
);

export const CARD_CREDIT_STATUSES = ['open', 'refunding', 'refunded'] as const;

/**
 * Card credit: where a route's price is below the card processor's minimum charge (the $0.25
 * off-ramp), a card pays the minimum once and the call draws its fee from what it bought; later
 * calls draw the rest (`Payment-Credit: <id>`), and the remainder goes back to the card on request.
 * open -> refunding (the remainder is taken, the processor not yet answered) -> refunded.
 */
export const cardCredits = pgTable(
  'card_credits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The top-up charge at the card processor. */
    paymentIntent: text('payment_intent').notNull(),
    /** `stripe:<network id>`, as the payments it funds record it. */
    network: text('network').notNull(),
    /** `METHOD /path` of the route it was bought on, the only one it pays for. */
    route: text('route').notNull(),
    /** Who may draw on it and refund it: `user:<id>` (X-Identity-Token) or `employer:<id>` (X-Agent-Key). */
    holder: text('holder').notNull(),
    funded: money('funded').notNull(),
    remaining: money('remaining').notNull(),
    status: text('status', { enum: CARD_CREDIT_STATUSES }).notNull().default('open'),
    /** What went (or is going) back to the card: the remainder when the refund was asked for. */
    refunded: money('refunded').notNull().default(sql`0`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    refundedAt: tstz('refunded_at'),
  },
  (t) => [
    uniqueIndex('card_credits_payment_intent_key').on(t.paymentIntent),
    index('card_credits_holder_idx').on(t.holder, t.createdAt),
    check('card_credits_status', oneOf('status', CARD_CREDIT_STATUSES)),
    check('card_credits_remaining_within_funded', sql`${t.remaining} >= 0 AND ${t.remaining} + ${t.refunded} <= ${t.funded}`),
  ],
);

/**
 * One fee drawn from a card credit, keyed by the payment it paid (`payments.proof_key`): a draw
 * happens once per payment, and a failed call's draw is returned once (`returned_at`).
 */
export const cardCreditDraws = pgTable(
  'card_credit_draws',
  {
    proofKey: text('proof_key').primaryKey(),
    creditId: uuid('credit_id')
      .notNull()
      .references(() => cardCredits.id),
    amount: money('amount').notNull(),
    createdAt: createdAt(),
    returnedAt: tstz('returned_at'),
  },
  (t) => [index('card_credit_draws_credit_idx').on(t.creditId, t.createdAt), check('card_credit_draws_amount_positive', sql`${t.amount} > 0`)],
);

/** The sandbox's refunds, partial ones included: a retried idempotency key is the same refund. */
export const cardSandboxRefunds = pgTable('card_sandbox_refunds', {
  idempotencyKey: text('idempotency_key').primaryKey(),
  paymentIntentId: text('payment_intent_id')
    .notNull()
    .references(() => cardSandboxPaymentIntents.id),
  /** Cents. */
  amount: money('amount').notNull(),
  createdAt: createdAt(),
});

/** Key-value channel store for mppx sessions (get/put/delete/update under a row lock). */
export const mppChannelStore = pgTable('mpp_channel_store', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: updatedAt(),
});
