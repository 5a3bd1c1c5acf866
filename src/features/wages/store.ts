import { and, eq, inArray, lt, or, sql } from 'drizzle-orm';
import { isUniqueViolation, type Db } from '../../db/client.js';
import { advances, employees } from '../../db/schema.js';

export type AdvanceRow = typeof advances.$inferSelect;
export type EmployeeRow = typeof employees.$inferSelect;

/**
 * Active employees paid to `wallet` that the caller may see: those of `employerId` (an owner or
 * agent) or with one of `employeeIds` (the employee themselves). Wallets compare case-insensitively.
 */
export async function employeesByWallet(db: Db, wallet: string, scope: { employerId: string | null; employeeIds: string[] }): Promise<EmployeeRow[]> {
  const visible = [
    ...(scope.employerId ? [eq(employees.employerId, scope.employerId)] : []),
    ...(scope.employeeIds.length > 0 ? [inArray(employees.id, scope.employeeIds)] : []),
  ];
  if (visible.length === 0) return [];
  return db
    .select()
    .from(employees)
    .where(and(sql`lower(${employees.walletAddress}) = ${wallet.toLowerCase()}`, eq(employees.status, 'active'), or(...visible)))
    .orderBy(employees.createdAt);
}

/**
 * Opens an advance for the employee by compare-and-set: null when one is already pending (the
 * partial unique index allows one). A pending row older than `staleBefore` was interrupted (a
 * crash between claim and record); it is closed first, since the vesting contract itself never
 * pays the same seconds twice.
 */
export async function openAdvance(db: Db, employeeId: string, staleBefore: Date, feePaymentId: string | null): Promise<AdvanceRow | null> {
  await db
    .update(advances)
    .set({ status: 'failed', failureReason: 'interrupted before its outcome was recorded; see the chain for what was paid' })
    .where(and(eq(advances.employeeId, employeeId), eq(advances.status, 'pending'), lt(advances.createdAt, staleBefore)));
  const [row] = await db.insert(advances).values({ employeeId, feePaymentId }).onConflictDoNothing().returning();
  return row ?? null;
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

export async function recordClaim(db: Db, advanceId: string, claim: { amount: bigint; txHash: string; claimedAt: Date }): Promise<void> {
  await db
    .update(advances)
    .set({ status: 'claimed', amount: claim.amount, txHash: claim.txHash, claimedAt: claim.claimedAt })
    .where(and(eq(advances.id, advanceId), eq(advances.status, 'pending')));
}

export async function failAdvance(db: Db, advanceId: string, reason: string): Promise<void> {
  await db
    .update(advances)
    .set({ status: 'failed', failureReason: reason })
    .where(and(eq(advances.id, advanceId), eq(advances.status, 'pending')));
}
