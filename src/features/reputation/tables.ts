/** Reputation writes (attestations and ERC-8004 feedback). Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, tstz, oneOf, clockNow } from '../../db/columns.js';

export const REPUTATION_WRITE_STATUSES = ['pending', 'written', 'failed'] as const;
/** Attestations (Solana) and ERC-8004 feedback (Tempo), written asynchronously by a job (6). */
export const reputationWrites = pgTable(
  'reputation_writes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind', { enum: ['attestation', 'erc8004_feedback'] }).notNull(),
    /** Without the service slug (`payment`, `agent-pay`, `payroll`, `escrow-settled`); written and shown as `<slug>-<type>`. */
    writeType: text('write_type').notNull(),
    subject: text('subject').notNull(),
    /** What produced it, for idempotency: one write per (source, subject, type). */
    sourceType: text('source_type').notNull(),
    sourceId: text('source_id').notNull(),
    amount: money('amount'),
    score: integer('score'),
    /** Who paid the subject for the source event (`employer:<uuid>`) when another party did; tiers count distinct payers. Null: nobody else paid (its own fees and payments, refunds). */
    payer: text('payer'),
    status: text('status', { enum: REPUTATION_WRITE_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    chainReference: text('chain_reference'),
    /** The signed transaction's hash or signature, recorded before it is sent: a retry after a crash looks it up instead of writing twice. */
    pendingReference: text('pending_reference'),
    /** When the job may (re)try it; a claimed write holds it a few minutes ahead (its lease). */
    nextAttemptAt: tstz('next_attempt_at').notNull().default(clockNow),
    createdAt: createdAt(),
    writtenAt: tstz('written_at'),
  },
  (t) => [
    uniqueIndex('reputation_writes_source_key').on(t.sourceType, t.sourceId, t.subject, t.writeType),
    index('reputation_writes_subject_idx').on(t.subject),
    index('reputation_writes_status_idx').on(t.status),
    index('reputation_writes_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    check('reputation_writes_status', oneOf('status', REPUTATION_WRITE_STATUSES)),
    check('reputation_writes_kind', oneOf('kind', ['attestation', 'erc8004_feedback'])),
  ],
);
