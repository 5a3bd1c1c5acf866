/** Payroll: agent decisions, runs and their payment items. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { bigint, check, date, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, tstz, oneOf } from '../../db/columns.js';
import { employees, employers } from '../employers/tables.js';
import { users } from '../users/tables.js';

/**
 * draft -> submitted -> confirmed | failed | partially_paid (spec 3.4 leaves the machine to us;
 * docs/api.md). `partially_paid`: a batch after the first was refused on chain, so the batches
 * before it paid and the rest did not (each item says which).
 */
export const PAYROLL_RUN_STATUSES = ['draft', 'submitted', 'confirmed', 'failed', 'partially_paid'] as const;
/** pending (nothing signed) -> submitted (signed bytes recorded, maybe broadcast) -> confirmed | failed. */
export const PAYROLL_BATCH_STATUSES = ['pending', 'submitted', 'confirmed', 'failed'] as const;
export const PAYMENT_ITEM_STATUSES = ['pending', 'submitted', 'paid', 'failed', 'policy_rejected'] as const;

/** A plan an agent proposed (e.g. a payroll decision) that `x402/payroll/execute` carries out. */
export const agentDecisions = pgTable(
  'agent_decisions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    agentIdentifier: text('agent_identifier'),
    kind: text('kind').notNull(),
    plan: jsonb('plan').notNull(),
    status: text('status').notNull().default('proposed'),
    executedAt: tstz('executed_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('agent_decisions_employer_id_idx').on(t.employerId, t.createdAt),
    check('agent_decisions_status', oneOf('status', ['proposed', 'executing', 'executed', 'rejected'])),
  ],
);

export const payrollRuns = pgTable(
  'payroll_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    status: text('status', { enum: PAYROLL_RUN_STATUSES }).notNull().default('draft'),
    totalAmount: money('total_amount').notNull(),
    recipientCount: integer('recipient_count').notNull(),
    payPeriodStart: tstz('pay_period_start'),
    payPeriodEnd: tstz('pay_period_end'),
    /** The day the run pays (YYYY-MM-DD), e.g. the scheduled pay date; its payslips show it (payslipPayDate). */
    payDate: date('pay_date', { mode: 'string' }),
    decisionId: uuid('decision_id').references(() => agentDecisions.id),
    createdBy: text('created_by').references(() => users.id),
    /** The first batch's transaction (every batch's is in payroll_batches). */
    txHash: text('tx_hash'),
    /** Who submitted it: `owner` (signed by the employer, hash recorded) or `agent` (the service's agent wallet). */
    submittedBy: text('submitted_by', { enum: ['owner', 'agent'] }),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    failureReason: text('failure_reason'),
    /** The fee that paid for executing it (paid payroll execute): a redeemed payment finds its run by it. */
    feePaymentId: uuid('fee_payment_id'),
    submittedAt: tstz('submitted_at'),
    finalizedAt: tstz('finalized_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('payroll_runs_employer_id_idx').on(t.employerId, t.createdAt),
    uniqueIndex('payroll_runs_fee_payment_id_key').on(t.feePaymentId).where(sql`fee_payment_id IS NOT NULL`),
    uniqueIndex('payroll_runs_tx_hash_key').on(t.txHash),
    uniqueIndex('payroll_runs_decision_id_key').on(t.decisionId),
    check('payroll_runs_status', oneOf('status', PAYROLL_RUN_STATUSES)),
    check('payroll_runs_submitted_by', oneOf('submitted_by', ['owner', 'agent'])),
    check('payroll_runs_total_nonnegative', sql`${t.totalAmount} >= 0`),
  ],
);

export const paymentItems = pgTable(
  'payment_items',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    runId: uuid('run_id')
      .notNull()
      .references(() => payrollRuns.id),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    employeeId: uuid('employee_id')
      .notNull()
      .references(() => employees.id),
    chain: text('chain', { enum: ['tempo', 'solana'] }).notNull().default('tempo'),
    walletAddress: text('wallet_address').notNull(),
    amount: money('amount').notNull(),
    /** 32-byte memo, 0x-prefixed (spec 2.14). */
    memo: text('memo'),
    /** Advances netted by this payment: `amount` is what it pays, `amount + advance_deduction` the gross. */
    advanceDeduction: money('advance_deduction').notNull().default(sql`0`),
    status: text('status', { enum: PAYMENT_ITEM_STATUSES }).notNull().default('pending'),
    /** The Tempo batch (payroll_batches.seq) that pays it; null for a Solana item or before execution. */
    batchSeq: integer('batch_seq'),
    reason: text('reason'),
    txHash: text('tx_hash'),
    logIndex: integer('log_index'),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    finalizedAt: tstz('finalized_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('payment_items_run_employee_key').on(t.runId, t.employeeId),
    index('payment_items_employee_id_idx').on(t.employeeId, t.createdAt),
    index('payment_items_employer_id_idx').on(t.employerId, t.createdAt),
    check('payment_items_status', oneOf('status', PAYMENT_ITEM_STATUSES)),
    check('payment_items_chain', oneOf('chain', ['tempo', 'solana'])),
    check('payment_items_amount_positive', sql`${t.amount} > 0`),
    check('payment_items_advance_deduction_nonnegative', sql`${t.advanceDeduction} >= 0`),
    check('payment_items_memo_format', sql`${t.memo} ~ '^0x[0-9a-fA-F]{64}$'`),
  ],
);

/**
 * One Tempo transaction of a run: a run pays its Tempo items in as many batches as the block gas
 * limit needs (TempoChain.payrollBatchCapacity), in `seq` order, each with its own state. The
 * signed bytes are kept before broadcast, so a crash rebroadcasts them instead of signing again;
 * `claimToken` is the executor that may record them (a compare-and-set, so one batch is signed once).
 */
export const payrollBatches = pgTable(
  'payroll_batches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    runId: uuid('run_id')
      .notNull()
      .references(() => payrollRuns.id),
    seq: integer('seq').notNull(),
    status: text('status', { enum: PAYROLL_BATCH_STATUSES }).notNull().default('pending'),
    recipientCount: integer('recipient_count').notNull(),
    totalAmount: money('total_amount').notNull(),
    claimToken: uuid('claim_token'),
    claimedAt: tstz('claimed_at'),
    txHash: text('tx_hash'),
    rawTransaction: text('raw_transaction'),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    failureReason: text('failure_reason'),
    finalizedAt: tstz('finalized_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('payroll_batches_run_seq_key').on(t.runId, t.seq),
    uniqueIndex('payroll_batches_tx_hash_key').on(t.txHash),
    check('payroll_batches_status', oneOf('status', PAYROLL_BATCH_STATUSES)),
    check('payroll_batches_recipient_count_positive', sql`${t.recipientCount} > 0`),
  ],
);
