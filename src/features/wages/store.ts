import { and, asc, eq, inArray, isNull, lt, lte, ne, sql } from 'drizzle-orm';
import { isUniqueViolation, type Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { feedSourceQuery, toFeedRow, type FeedPosition, type FeedRow } from '../../db/keyset.js';
import { advances, streamStops } from './tables.js';

export type AdvanceRow = typeof advances.$inferSelect;
export type StreamStopRow = typeof streamStops.$inferSelect;

/**
 * Opens an advance for the employee by compare-and-set: null when one is already pending (the
 * partial unique index allows one; an interrupted one is settled from the chain first).
 */
export async function openAdvance(db: Db, employeeId: string, feePaymentId: string | null): Promise<AdvanceRow | null> {
  const [row] = await db.insert(advances).values({ employeeId, feePaymentId }).onConflictDoNothing().returning();
  return row ?? null;
}

/** The employee's advances still pending since before `staleBefore`: interrupted by a crash. */
export function staleAdvances(db: Db, employeeId: string, staleBefore: Date): Promise<AdvanceRow[]> {
  return db
    .select()
    .from(advances)
    .where(and(eq(advances.employeeId, employeeId), eq(advances.status, 'pending'), lt(advances.createdAt, staleBefore)));
}

/** Keeps the signed claim's hash on the pending advance before it is sent; false when the advance is no longer pending (do not send). */
export async function recordClaimTx(db: Db, advanceId: string, txHash: string): Promise<boolean> {
  const rows = await db
    .update(advances)
    .set({ txHash })
    .where(and(eq(advances.id, advanceId), eq(advances.status, 'pending')))
    .returning({ id: advances.id });
  return rows.length > 0;
}

/** The advance a fee payment bought, if it got that far. */
export async function advanceForFee(db: Db, feePaymentId: string): Promise<AdvanceRow | null> {
  const [row] = await db.select().from(advances).where(eq(advances.feePaymentId, feePaymentId));
  return row ?? null;
}

/**
 * An interrupted advance (still pending, or failed as interrupted) open again for its claim:
 * null when another advance of the employee is pending now (one at a time).
 */
export async function reopenAdvance(db: Db, advanceId: string): Promise<AdvanceRow | null> {
  const [row] = await db
    .update(advances)
    .set({ status: 'pending', failureReason: null })
    .where(and(eq(advances.id, advanceId), inArray(advances.status, ['pending', 'failed'])))
    .returning()
    .catch((error: unknown) => {
      if (isUniqueViolation(error)) return [];
      throw error;
    });
  return row ?? null;
}

export async function recordClaim(db: Db, advanceId: string, claim: { amount: bigint; txHash: string; claimedAt: Date }): Promise<AdvanceRow | null> {
  const [row] = await db
    .update(advances)
    .set({ status: 'claimed', amount: claim.amount, txHash: claim.txHash, claimedAt: claim.claimedAt })
    .where(and(eq(advances.id, advanceId), eq(advances.status, 'pending')))
    .returning();
  return row ?? null;
}

export async function failAdvance(db: Db, advanceId: string, reason: string): Promise<AdvanceRow | null> {
  const [row] = await db
    .update(advances)
    .set({ status: 'failed', failureReason: reason })
    .where(and(eq(advances.id, advanceId), eq(advances.status, 'pending')))
    .returning();
  return row ?? null;
}

// ---- stream stops ----------------------------------------------------------------------------

/** Queues the stop of a wallet's stream (in the transaction of the change that released it); returns its id. */
export async function queueStreamStop(db: Db, stop: { employeeId: string; employerId: string; wallet: string }): Promise<string> {
  const [row] = await db
    .insert(streamStops)
    .values({ employeeId: stop.employeeId, employerId: stop.employerId, walletAddress: stop.wallet.toLowerCase() })
    .returning({ id: streamStops.id });
  return row!.id;
}

/** Ids of the stops still pending for a wallet. */
export async function pendingStopIds(db: Db, wallet: string): Promise<string[]> {
  const rows = await db
    .select({ id: streamStops.id })
    .from(streamStops)
    .where(and(eq(streamStops.walletAddress, wallet.toLowerCase()), eq(streamStops.status, 'pending')));
  return rows.map((row) => row.id);
}

/**
 * Claims up to `limit` due stops (only `ids`, when given) in one statement: locked with SKIP
 * LOCKED, counted an attempt and pushed `leaseSeconds` ahead, so a worker that dies mid-stop leaves
 * them to a later round. The returned `attempts` fences every later update of the claim.
 */
export async function claimDueStops(db: Db, options: { limit: number; leaseSeconds: number; ids?: string[] | undefined }): Promise<StreamStopRow[]> {
  const due = and(
    eq(streamStops.status, 'pending'),
    lte(streamStops.nextAttemptAt, clockNow),
    ...(options.ids ? [inArray(streamStops.id, options.ids)] : []),
  );
  const picked = db
    .select({ id: streamStops.id })
    .from(streamStops)
    .where(due)
    .orderBy(asc(streamStops.nextAttemptAt))
    .limit(options.limit)
    .for('update', { skipLocked: true });
  return db
    .update(streamStops)
    .set({ attempts: sql`${streamStops.attempts} + 1`, nextAttemptAt: sql`${clockNow} + ${`${options.leaseSeconds} seconds`}::interval` })
    .where(and(inArray(streamStops.id, picked), due))
    .returning();
}

const stopHeldBy = (id: string, attempts: number) => and(eq(streamStops.id, id), eq(streamStops.status, 'pending'), eq(streamStops.attempts, attempts));

/** Adds a signed stopStream to the stop before it is sent; false when the claim lost the row (do not send). */
export async function addStopTx(db: Db, id: string, attempts: number, txHash: string): Promise<boolean> {
  const rows = await db
    .update(streamStops)
    .set({ txHashes: sql`array_append(${streamStops.txHashes}, ${txHash})` })
    .where(stopHeldBy(id, attempts))
    .returning({ id: streamStops.id });
  return rows.length > 0;
}

/**
 * -> stopped, whatever claim holds the row (a stop that landed counts even if its lease ran out),
 * and what the stop paid the wallet recorded as a claimed advance of the employee, once: payroll
 * nets it like any advance. Call inside a transaction.
 */
export async function recordStop(db: Db, stop: StreamStopRow, paid: { amount: bigint; txHash: string } | null): Promise<boolean> {
  const now = clockNow;
  const rows = await db
    .update(streamStops)
    .set({ status: 'stopped', txHash: paid?.txHash ?? null, amount: paid?.amount ?? null, stoppedAt: now, lastError: null })
    .where(and(eq(streamStops.id, stop.id), ne(streamStops.status, 'stopped')))
    .returning({ id: streamStops.id });
  if (rows.length === 0) return false;
  if (paid && paid.amount > 0n) {
    await db.insert(advances).values({ employeeId: stop.employeeId, amount: paid.amount, status: 'claimed', txHash: paid.txHash, claimedAt: now });
  }
  return true;
}

/** A failed attempt: try again after `delaySeconds`, or give up (`failed`, left for an operator). */
export async function failStopAttempt(db: Db, id: string, attempts: number, error: string, next: { giveUp: boolean; delaySeconds: number }): Promise<void> {
  await db
    .update(streamStops)
    .set(next.giveUp ? { status: 'failed', lastError: error } : { lastError: error, nextAttemptAt: sql`${clockNow} + ${`${next.delaySeconds} seconds`}::interval` })
    .where(stopHeldBy(id, attempts));
}

// ---- advances netted by payroll runs (the payroll feature, through index.ts, in its transaction) ----

/** Claimed advances of these employees that no run has netted yet. */
export async function advancesToNet(db: Db, employeeIds: string[]): Promise<{ id: string; employeeId: string; amount: bigint }[]> {
  if (employeeIds.length === 0) return [];
  const rows = await db
    .select({ id: advances.id, employeeId: advances.employeeId, amount: advances.amount })
    .from(advances)
    .where(and(inArray(advances.employeeId, employeeIds), eq(advances.status, 'claimed'), isNull(advances.nettedRunId)));
  return rows.map((row) => ({ ...row, amount: row.amount ?? 0n }));
}

/** Marks these advances netted by the run, compare-and-set: returns how many it took (fewer when a concurrent run took some). */
export async function netAdvances(db: Db, runId: string, advanceIds: string[]): Promise<number> {
  if (advanceIds.length === 0) return 0;
  const rows = await db
    .update(advances)
    .set({ nettedRunId: runId })
    .where(and(inArray(advances.id, advanceIds), isNull(advances.nettedRunId)))
    .returning({ id: advances.id });
  return rows.length;
}

/** The advances a failed run netted (or, given `employeeIds`, its unpaid items netted) wait for the next run. */
export async function releaseNettedAdvances(db: Db, runId: string, employeeIds?: string[]): Promise<void> {
  const netted = eq(advances.nettedRunId, runId);
  await db.update(advances).set({ nettedRunId: null }).where(employeeIds ? and(netted, inArray(advances.employeeId, employeeIds)) : netted);
}

// ---- read model of another feature: the portal's activity feed ----

/** Claimed wage advances (the ones that moved money), as activity cards: at the claim. */
export async function claimedAdvanceFeed(db: Db, employeeIds: string[], before: FeedPosition | null, limit: number): Promise<FeedRow<'advance'>[]> {
  const q = feedSourceQuery('advance', sql`coalesce(${advances.claimedAt}, ${advances.createdAt})`, sql`${advances.id}::text`, before);
  const rows = await db
    .select({ id: sql<string>`${advances.id}::text`, at: q.at, amount: advances.amount, advance: advances })
    .from(advances)
    .where(and(inArray(advances.employeeId, employeeIds), eq(advances.status, 'claimed'), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ advance, ...row }) =>
    toFeedRow('advance')({ ...row, details: { direction: 'in', employee_id: advance.employeeId, status: advance.status, tx_hash: advance.txHash } }),
  );
}
