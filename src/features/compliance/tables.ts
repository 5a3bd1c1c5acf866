/** Compliance: blocklists and the compliance ledger. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz, oneOf, clockNow } from '../../db/columns.js';
import { employees, employers } from '../employers/tables.js';

/** Sanctions (employer_id null: global list) and an employer's own blocklist entries. */
export const walletBlocklist = pgTable(
  'wallet_blocklist',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id').references(() => employers.id),
    /** Lower-cased address. */
    walletAddress: text('wallet_address').notNull(),
    source: text('source').notNull(),
    reason: text('reason'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('wallet_blocklist_scope_wallet_key').on(sql`coalesce(${t.employerId}::text, '')`, t.walletAddress),
    index('wallet_blocklist_wallet_idx').on(t.walletAddress),
  ],
);

/** The compliance ledger: one row per check, written even when the result is BLOCKED (4.3). */
export const complianceEvents = pgTable(
  'compliance_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id').references(() => employers.id),
    employeeId: uuid('employee_id').references(() => employees.id),
    walletAddress: text('wallet_address').notNull(),
    policyId: bigint('policy_id', { mode: 'bigint' }).notNull(),
    authorized: boolean('authorized').notNull(),
    riskScore: integer('risk_score').notNull(),
    result: text('result', { enum: ['CLEAR', 'BLOCKED'] }).notNull(),
    eventType: text('event_type').notNull(),
    reasons: jsonb('reasons').notNull().default([]),
    checkedAt: tstz('checked_at').notNull().default(clockNow),
  },
  (t) => [
    index('compliance_events_employer_idx').on(t.employerId, t.checkedAt),
    index('compliance_events_wallet_idx').on(t.walletAddress, t.checkedAt),
    check('compliance_events_result', oneOf('result', ['CLEAR', 'BLOCKED'])),
  ],
);

/**
 * The sanctions list in force (one row, id `ofac-sdn`): where it came from, its date and size, the
 * last sync that replaced it and the last attempt (its error when it failed; the list stays).
 */
export const sanctionsListState = pgTable('sanctions_list_state', {
  id: text('id').primaryKey(),
  source: text('source').notNull(),
  listDate: text('list_date'),
  entries: integer('entries').notNull(),
  syncedAt: tstz('synced_at').notNull(),
  lastAttemptAt: tstz('last_attempt_at').notNull(),
  lastError: text('last_error'),
});
