/** Employers and their employees. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, date, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, tstz, oneOf } from '../../db/columns.js';
import { users } from '../users/tables.js';
import { PAY_FREQUENCIES } from './pay-schedule.js';

export const employers = pgTable(
  'employers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** One employer per owner (spec 4.8: create, or return the one the user already owns). */
    ownerUserId: text('owner_user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    /** EVM address that administers the on-chain treasury account. */
    adminWallet: text('admin_wallet'),
    /** The employer's account id in the on-chain payroll treasury contract. */
    employerAccountId: text('employer_account_id'),
    /** TIP-403 policy id checked against every payroll recipient when set. */
    tip403PolicyId: bigint('tip403_policy_id', { mode: 'bigint' }),
    /** One-time agent key: only a hash and a display prefix are kept. */
    agentKeyHash: text('agent_key_hash'),
    agentKeyPrefix: text('agent_key_prefix'),
    agentKeyRotatedAt: tstz('agent_key_rotated_at'),
    // Virtual deposit addresses (spec 2.13).
    virtualMasterId: text('virtual_master_id'),
    virtualMasterAddress: text('virtual_master_address'),
    virtualMasterSalt: text('virtual_master_salt'),
    virtualMasterTxHash: text('virtual_master_tx_hash'),
    /** Where salt mining resumes when a request ran out of its iteration budget. */
    virtualMasterNextNonce: money('virtual_master_next_nonce'),
    // The pay schedule (pay-schedule.ts); null: none set yet.
    paySchedule: text('pay_schedule', { enum: PAY_FREQUENCIES }),
    /** monthly: the day of the month (1-31, clamped to shorter months). */
    payDay: integer('pay_day'),
    /** weekly and biweekly: the first pay date, from which pay dates repeat. */
    payAnchorDate: date('pay_anchor_date', { mode: 'string' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('employers_owner_user_id_key').on(t.ownerUserId),
    uniqueIndex('employers_virtual_master_id_key').on(t.virtualMasterId),
    uniqueIndex('employers_agent_key_hash_key').on(t.agentKeyHash),
    check('employers_name_length', sql`char_length(${t.name}) BETWEEN 1 AND 200`),
    check('employers_virtual_master_id_format', sql`${t.virtualMasterId} ~ '^0x[0-9a-f]{8}$'`),
    check('employers_pay_schedule', oneOf('pay_schedule', PAY_FREQUENCIES)),
    // Each frequency has exactly its own anchor: a pay day for monthly, a date for (bi)weekly, none for semi-monthly.
    check(
      'employers_pay_schedule_anchor',
      sql`(${t.payDay} IS NOT NULL) = (${t.paySchedule} IS NOT DISTINCT FROM 'monthly')
        AND (${t.payAnchorDate} IS NOT NULL) = (${t.paySchedule} IS NOT DISTINCT FROM 'weekly' OR ${t.paySchedule} IS NOT DISTINCT FROM 'biweekly')`,
    ),
    check('employers_pay_day_range', sql`${t.payDay} BETWEEN 1 AND 31`),
  ],
);

export const EMPLOYEE_STATUSES = ['active', 'removed'] as const;
export const MANUAL_REVIEW_STATUSES = ['none', 'pending', 'approved', 'rejected'] as const;

export const employees = pgTable(
  'employees',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    /** Linked when a signed-in user with the same verified email appears. */
    userId: text('user_id').references(() => users.id),
    /** Stored lower-cased; unique per employer (create-or-return, spec 4.8). */
    email: text('email').notNull(),
    fullName: text('full_name').notNull(),
    /** EVM wallet paid by payroll on the Tempo chain. */
    walletAddress: text('wallet_address'),
    /** Solana wallet for non-EVM payroll items. */
    solanaWalletAddress: text('solana_wallet_address'),
    /** Annual salary in base units; the vesting contract streams it per second. */
    annualSalary: money('annual_salary').notNull().default(sql`0`),
    department: text('department'),
    costCentre: text('cost_centre'),
    status: text('status', { enum: EMPLOYEE_STATUSES }).notNull().default('active'),
    payrollPaused: boolean('payroll_paused').notNull().default(false),
    manualReviewStatus: text('manual_review_status', { enum: MANUAL_REVIEW_STATUSES }).notNull().default('none'),
    manualReviewNote: text('manual_review_note'),
    manualReviewedAt: tstz('manual_reviewed_at'),
    manualReviewedBy: text('manual_reviewed_by').references(() => users.id),
    bridgeCustomerId: text('bridge_customer_id'),
    kycStatus: text('kyc_status').notNull().default('not_started'),
    invitedAt: tstz('invited_at'),
    removedAt: tstz('removed_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('employees_employer_email_key').on(t.employerId, t.email),
    index('employees_user_id_idx').on(t.userId),
    index('employees_wallet_address_idx').on(t.walletAddress),
    check('employees_status', oneOf('status', EMPLOYEE_STATUSES)),
    check('employees_manual_review_status', oneOf('manual_review_status', MANUAL_REVIEW_STATUSES)),
    check('employees_annual_salary_nonnegative', sql`${t.annualSalary} >= 0`),
    check('employees_email_lower', sql`${t.email} = lower(${t.email})`),
    check('employees_wallet_format', sql`${t.walletAddress} ~ '^0x[0-9a-fA-F]{40}$'`),
  ],
);
