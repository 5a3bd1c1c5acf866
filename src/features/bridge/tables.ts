/** Employees' money movements through the fiat bridge: bank accounts, cards, off-ramp transfers. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, oneOf } from '../../db/columns.js';
import { employees, employers } from '../employers/tables.js';

/** Bank accounts an employee registered with the fiat-bridge provider (off-ramp targets). */
export const DESTINATION_TYPES = ['ach', 'sepa', 'spei', 'pix'] as const;
export const bankAccounts = pgTable(
  'bank_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employeeId: uuid('employee_id')
      .notNull()
      .references(() => employees.id),
    /** The id the bridge provider knows it by; what callers send as `bankAccountId`. */
    bridgeAccountId: text('bridge_account_id').notNull(),
    destinationType: text('destination_type', { enum: DESTINATION_TYPES }).notNull(),
    label: text('label'),
    /** Last four digits of the account number (or key), for display; the provider keeps the rest. */
    last4: text('last4'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('bank_accounts_employee_bridge_key').on(t.employeeId, t.bridgeAccountId),
    check('bank_accounts_destination_type', oneOf('destination_type', DESTINATION_TYPES)),
  ],
);

export const cards = pgTable(
  'cards',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employeeId: uuid('employee_id')
      .notNull()
      .references(() => employees.id),
    bridgeCardId: text('bridge_card_id'),
    status: text('status').notNull().default('requested'),
    last4: text('last4'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('cards_employee_id_idx').on(t.employeeId),
    // One live card per employee: a second issue request returns the first.
    uniqueIndex('cards_one_live_per_employee').on(t.employeeId).where(sql`status NOT IN ('canceled', 'failed')`),
  ],
);

export const offrampTransfers = pgTable(
  'offramp_transfers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employeeId: uuid('employee_id')
      .notNull()
      .references(() => employees.id),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    bankAccountId: uuid('bank_account_id')
      .notNull()
      .references(() => bankAccounts.id),
    amount: money('amount').notNull(),
    destinationType: text('destination_type', { enum: DESTINATION_TYPES }).notNull(),
    status: text('status').notNull().default('pending'),
    bridgeTransferId: text('bridge_transfer_id'),
    /** The employee wallet the funds come from, and where the provider asked them to be sent. */
    sourceAddress: text('source_address'),
    depositAddress: text('deposit_address'),
    failureReason: text('failure_reason'),
    /** The fee that bought this off-ramp: one fee, one off-ramp (a redeemed payment finds it again). */
    feePaymentId: uuid('fee_payment_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('offramp_transfers_employee_id_idx').on(t.employeeId, t.createdAt),
    uniqueIndex('offramp_transfers_bridge_transfer_id_key').on(t.bridgeTransferId),
    uniqueIndex('offramp_transfers_fee_payment_id_key').on(t.feePaymentId).where(sql`fee_payment_id IS NOT NULL`),
    check('offramp_transfers_amount_positive', sql`${t.amount} > 0`),
  ],
);
