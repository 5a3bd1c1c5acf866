import { and, asc, eq, gte, min, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { treasuryBalanceSnapshots } from './tables.js';
import { utcDay } from '../employers/index.js';

export type SnapshotRow = typeof treasuryBalanceSnapshots.$inferSelect;

export interface Observation {
  employerId: string;
  available: bigint;
  locked: bigint;
  observedAt: Date;
}


/**
 * Records an observed balance as its UTC day's snapshot. The (employer, day) key makes every
 * instance write one row; a later observation replaces an earlier one and never the reverse, so
 * two instances racing (or a slow read committing last) leave the day's latest known balance.
 * True when this observation is now the day's snapshot.
 */
export async function recordSnapshot(db: Db, seen: Observation): Promise<boolean> {
  const rows = await db
    .insert(treasuryBalanceSnapshots)
    .values({ employerId: seen.employerId, day: utcDay(seen.observedAt), available: seen.available, locked: seen.locked, observedAt: seen.observedAt })
    .onConflictDoUpdate({
      target: [treasuryBalanceSnapshots.employerId, treasuryBalanceSnapshots.day],
      set: { available: sql`excluded.available`, locked: sql`excluded.locked`, observedAt: sql`excluded.observed_at` },
      setWhere: sql`${treasuryBalanceSnapshots.observedAt} < excluded.observed_at`,
    })
    .returning({ day: treasuryBalanceSnapshots.day });
  return rows.length > 0;
}

/** The employer's snapshots from `fromDay` (YYYY-MM-DD, inclusive), oldest first. */
export function snapshotsSince(db: Db, employerId: string, fromDay: string): Promise<SnapshotRow[]> {
  return db
    .select()
    .from(treasuryBalanceSnapshots)
    .where(and(eq(treasuryBalanceSnapshots.employerId, employerId), gte(treasuryBalanceSnapshots.day, fromDay)))
    .orderBy(asc(treasuryBalanceSnapshots.day));
}

/** The first day the service observed the employer's treasury, or null if it never has. */
export async function firstObservedDay(db: Db, employerId: string): Promise<string | null> {
  const [row] = await db
    .select({ day: min(treasuryBalanceSnapshots.day) })
    .from(treasuryBalanceSnapshots)
    .where(eq(treasuryBalanceSnapshots.employerId, employerId));
  return row?.day ?? null;
}
