/** Treasury: observed balances over time (the balance itself is the contract's). Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, date, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { money, tstz } from '../../db/columns.js';
import { employers } from '../employers/tables.js';

/**
 * The employer's treasury balance as the service last observed it on each UTC day, read from the
 * treasury contract by the hourly snapshot job (history reads add today's live balance, unstored). One row per (employer, day):
 * every instance writes the same row, and a later observation replaces an earlier one (never the
 * reverse), so the row holds the day's last known balance. Days the service did not observe have no row.
 */
export const treasuryBalanceSnapshots = pgTable(
  'treasury_balance_snapshots',
  {
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    day: date('day', { mode: 'string' }).notNull(),
    available: money('available').notNull(),
    locked: money('locked').notNull(),
    /** When the chain was read (the service's clock, just before the read). */
    observedAt: tstz('observed_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.employerId, t.day] }),
    check('treasury_balance_snapshots_available_nonnegative', sql`${t.available} >= 0`),
    check('treasury_balance_snapshots_locked_nonnegative', sql`${t.locked} >= 0`),
  ],
);
