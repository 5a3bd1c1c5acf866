/** Escrow (spec 2.1, 3.1). Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, tstz, bytea, oneOf } from '../../db/columns.js';
import { agentAuthorizations } from '../agents/tables.js';
import { employers } from '../employers/tables.js';

export const ESCROW_STATUSES = [
  // Internal, before `posted`: the row reserves the amount while the treasury debit and the vault
  // funding go out; a failure ends in `funding_failed`. The status route shows neither.
  'funding',
  'funding_failed',
  'posted',
  'delivered',
  'validating',
  'settled',
  'rejected_refunded',
  'expired_refunded',
] as const;
export const REPUTATION_TIERS = ['unknown', 'new', 'established', 'trusted'] as const;

export const escrows = pgTable(
  'escrows',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    posterAuthorizationId: uuid('poster_authorization_id').references(() => agentAuthorizations.id),
    posterAgentIdentifier: text('poster_agent_identifier').notNull(),
    workerWalletAddress: text('worker_wallet_address').notNull(),
    workerAgentIdentifier: text('worker_agent_identifier').notNull(),
    amount: money('amount').notNull(),
    rubricPrompt: text('rubric_prompt').notNull(),
    status: text('status', { enum: ESCROW_STATUSES }).notNull().default('funding'),
    escrowPda: text('escrow_pda'),
    requestedExpiryHours: integer('requested_expiry_hours').notNull(),
    appliedExpiryHours: integer('applied_expiry_hours').notNull(),
    workerReputationTier: text('worker_reputation_tier', { enum: REPUTATION_TIERS }).notNull(),
    workerAttestationCount: integer('worker_attestation_count').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    deliverableUri: text('deliverable_uri'),
    deliverableSha256: text('deliverable_sha256'),
    /** Exactly the bytes that were hashed, so the judge sees what was recorded (<= 100 KB). */
    deliverableContent: bytea('deliverable_content'),
    validatorVerdict: text('validator_verdict', { enum: ['approved', 'rejected'] }),
    validatorConfidence: integer('validator_confidence'),
    validatorReasoning: text('validator_reasoning'),
    validatorModel: text('validator_model'),
    sanitizerFlagged: boolean('sanitizer_flagged').notNull().default(false),
    escalatedAt: tstz('escalated_at'),
    escalationReason: text('escalation_reason'),
    signatures: jsonb('signatures').notNull().default({}),
    /** The fees that bought the post and the delivery: a redeemed fee payment finds its escrow by them. */
    feePaymentId: uuid('fee_payment_id'),
    deliveryFeePaymentId: uuid('delivery_fee_payment_id'),
    /** One worker moves an escrow's money at a time: a lease taken by compare-and-set, lapsing after a crash. */
    leaseUntil: tstz('lease_until'),
    /** Who holds the lease (a token each holder draws): only it may record a send or release the lease. */
    leaseOwner: uuid('lease_owner'),
    deliveredAt: tstz('delivered_at'),
    verdictAt: tstz('verdict_at'),
    finalizedAt: tstz('finalized_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('escrows_employer_id_idx').on(t.employerId, t.createdAt),
    index('escrows_poster_recent_idx').on(t.posterAuthorizationId, t.createdAt),
    uniqueIndex('escrows_fee_payment_id_key').on(t.feePaymentId).where(sql`fee_payment_id IS NOT NULL`),
    uniqueIndex('escrows_delivery_fee_payment_id_key').on(t.deliveryFeePaymentId).where(sql`delivery_fee_payment_id IS NOT NULL`),
    index('escrows_open_expiry_idx')
      .on(t.expiresAt)
      .where(sql`status IN ('posted', 'delivered', 'validating')`),
    check('escrows_status', oneOf('status', ESCROW_STATUSES)),
    check('escrows_tier', oneOf('worker_reputation_tier', REPUTATION_TIERS)),
    check('escrows_amount_range', sql`${t.amount} > 0 AND ${t.amount} <= 100000000`),
    check('escrows_rubric_length', sql`char_length(${t.rubricPrompt}) <= 2000`),
    check('escrows_expiry_range', sql`${t.requestedExpiryHours} BETWEEN 1 AND 168`),
  ],
);
