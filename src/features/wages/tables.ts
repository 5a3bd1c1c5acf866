/** Streamed wages: advances and salary streams to stop. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, tstz, oneOf, clockNow } from '../../db/columns.js';
import { employees, employers } from '../employers/tables.js';
import { payrollRuns } from '../payroll/tables.js';

/** pending -> claimed | failed. */
export const ADVANCE_STATUSES = ['pending', 'claimed', 'failed'] as const;

/** Claims of streamed wages (spec 4.3 employee/advance): at most one in flight per employee. */
export const advances = pgTable(
  'advances',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employeeId: uuid('employee_id')
      .notNull()
      .references(() => employees.id),
    amount: money('amount'),
    status: text('status', { enum: ADVANCE_STATUSES }).notNull().default('pending'),
    txHash: text('tx_hash'),
    claimedAt: tstz('claimed_at'),
    failureReason: text('failure_reason'),
    /** The fee that bought this advance: one fee, one advance (a redeemed payment finds it again). */
    feePaymentId: uuid('fee_payment_id'),
    /** The payroll run that deducted it (set once at prepare; cleared if that run fails). */
    nettedRunId: uuid('netted_run_id').references(() => payrollRuns.id),
    createdAt: createdAt(),
  },
  (t) => [
    index('advances_employee_id_idx').on(t.employeeId, t.createdAt),
    index('advances_to_net_idx').on(t.employeeId).where(sql`status = 'claimed' AND netted_run_id IS NULL`),
    uniqueIndex('advances_fee_payment_id_key').on(t.feePaymentId).where(sql`fee_payment_id IS NOT NULL`),
    uniqueIndex('advances_one_pending_per_employee').on(t.employeeId).where(sql`status = 'pending'`),
    check('advances_status', oneOf('status', ADVANCE_STATUSES)),
  ],
);

/** pending -> stopped | failed (given up after its attempts; visible to admins). */
export const STREAM_STOP_STATUSES = ['pending', 'stopped', 'failed'] as const;

/**
 * Salary streams to stop on chain: written in the transaction that moved salary away from the
 * wallet (a changed wallet, a wallet under review, a removed employee), then stopped by the wages
 * feature at once and, after a crash, by its job. What the stop paid is recorded as an advance.
 */
export const streamStops = pgTable(
  'stream_stops',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employeeId: uuid('employee_id')
      .notNull()
      .references(() => employees.id),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    walletAddress: text('wallet_address').notNull(),
    status: text('status', { enum: STREAM_STOP_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** Every stopStream signed for it, recorded before it is sent: a retry looks them up, so a stop that landed is never missed. */
    txHashes: text('tx_hashes').array().notNull().default(sql`'{}'`),
    txHash: text('tx_hash'),
    /** What the stop paid the wallet (null: there was no stream of this employer to stop). */
    amount: money('amount'),
    lastError: text('last_error'),
    nextAttemptAt: tstz('next_attempt_at').notNull().default(clockNow),
    createdAt: createdAt(),
    stoppedAt: tstz('stopped_at'),
  },
  (t) => [
    index('stream_stops_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    index('stream_stops_wallet_idx').on(t.walletAddress).where(sql`status = 'pending'`),
    check('stream_stops_status', oneOf('status', STREAM_STOP_STATUSES)),
  ],
);
