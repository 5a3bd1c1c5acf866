/** Agents: authorizations and their spend gates, agent/pay calls, signature replays. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, tstz, oneOf } from '../../db/columns.js';
import { employers } from '../employers/tables.js';

export const IDENTITY_SCHEMES = ['none', 'hmac', 'erc8004', 'ed25519', 'evm'] as const;

/** An employer-registered agent identity and its spend limits (spec 2.11, 8.2). */
export const agentAuthorizations = pgTable(
  'agent_authorizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    label: text('label').notNull(),
    /** Matched exactly against X-Agent-Identifier; no wildcards. */
    agentIdentifier: text('agent_identifier').notNull(),
    identityScheme: text('identity_scheme', { enum: IDENTITY_SCHEMES }).notNull().default('none'),
    /** Tier 1 HMAC secret, encrypted at rest. */
    hmacSecretCiphertext: text('hmac_secret_ciphertext'),
    perTxCap: money('per_tx_cap').notNull(),
    perDayCap: money('per_day_cap').notNull(),
    /** Higher caps that apply only while the agent's reputation tier allows (8.2, "Also"). */
    elevatedPerTxCap: money('elevated_per_tx_cap'),
    elevatedPerDayCap: money('elevated_per_day_cap'),
    velocityPerMinute: integer('velocity_per_minute').notNull().default(5),
    /** null = no allowlist; otherwise lower-cased recipient addresses. */
    allowedRecipients: jsonb('allowed_recipients').$type<string[] | null>(),
    pausedAt: tstz('paused_at'),
    pauseReason: text('pause_reason'),
    perTxCapOriginal: money('per_tx_cap_original'),
    capHalvedAt: tstz('cap_halved_at'),
    revokedAt: tstz('revoked_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('agent_authorizations_active_identifier_key')
      .on(t.employerId, t.agentIdentifier)
      .where(sql`revoked_at IS NULL`),
    index('agent_authorizations_identifier_idx').on(t.agentIdentifier),
    check('agent_authorizations_identity_scheme', oneOf('identity_scheme', IDENTITY_SCHEMES)),
    check('agent_authorizations_caps_positive', sql`${t.perTxCap} > 0 AND ${t.perDayCap} > 0`),
    check('agent_authorizations_velocity_positive', sql`${t.velocityPerMinute} > 0`),
  ],
);

/**
 * One agent/pay call against an authorization. Rows in `reserved` or `paid` count toward the
 * rolling caps; a failed transfer moves its row to `released` (spec 8.2).
 */
export const AGENT_PAY_STATUSES = ['reserved', 'paid', 'released'] as const;
export const agentPayCalls = pgTable(
  'agent_pay_calls',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    authorizationId: uuid('authorization_id')
      .notNull()
      .references(() => agentAuthorizations.id),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    recipientWallet: text('recipient_wallet').notNull(),
    amount: money('amount').notNull(),
    reference: text('reference'),
    memo: text('memo'),
    status: text('status', { enum: AGENT_PAY_STATUSES }).notNull().default('reserved'),
    txHash: text('tx_hash'),
    /** The fee payment that bought this call. */
    feePaymentId: uuid('fee_payment_id'),
    failureReason: text('failure_reason'),
    /** The caller's Idempotency-Key: a retry returns this call's result instead of paying again. */
    idempotencyKey: text('idempotency_key'),
    /** SHA-256 of what the call asked (employer, recipient, amount, reference): the same key with another request is refused. */
    requestHash: text('request_hash'),
    createdAt: createdAt(),
    settledAt: tstz('settled_at'),
  },
  (t) => [
    index('agent_pay_calls_authorization_idx').on(t.authorizationId, t.createdAt),
    uniqueIndex('agent_pay_calls_idempotency_key')
      .on(t.authorizationId, t.idempotencyKey)
      .where(sql`idempotency_key IS NOT NULL AND status <> 'released'`),
    index('agent_pay_calls_reserved_idx').on(t.createdAt).where(sql`status = 'reserved'`),
    // One fee, one payment: a redeemed fee payment finds its call instead of paying again.
    uniqueIndex('agent_pay_calls_fee_payment_id_key').on(t.feePaymentId).where(sql`fee_payment_id IS NOT NULL`),
    check('agent_pay_calls_status', oneOf('status', AGENT_PAY_STATUSES)),
    check('agent_pay_calls_amount_positive', sql`${t.amount} > 0`),
  ],
);

/** Replay store for agent identity signatures: a signature is accepted once (spec 5.2). */
export const agentSignatureReplays = pgTable(
  'agent_signature_replays',
  {
    signatureHash: text('signature_hash').primaryKey(),
    agentIdentifier: text('agent_identifier').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    /** The fee of the paid call that spent it: that call, served again after its answer was lost, may present it again. */
    feePaymentId: uuid('fee_payment_id'),
  },
  (t) => [index('agent_signature_replays_expires_idx').on(t.expiresAt)],
);
