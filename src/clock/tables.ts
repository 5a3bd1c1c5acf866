/** The service clock's offset (src/clock/clock.ts). Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, pgTable } from 'drizzle-orm/pg-core';
import { updatedAt } from '../db/columns.js';

/**
 * One row at most: the seconds local mode's dev clock has been advanced by (`POST /api/dev/clock/advance`).
 * No row means zero, as in every live database. SQL reads the service time as `clock_now()`.
 */
export const serviceClock = pgTable(
  'service_clock',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    offsetSeconds: bigint('offset_seconds', { mode: 'number' }).notNull(),
    updatedAt: updatedAt(),
  },
  (table) => [
    check('service_clock_singleton', sql`${table.singleton}`),
    check('service_clock_never_backwards', sql`${table.offsetSeconds} >= 0`),
  ],
);
