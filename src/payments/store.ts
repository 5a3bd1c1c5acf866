import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { paymentReceipts, payments } from '../db/schema.js';
import { enqueueReputationWrite, parseReputationAddress } from '../features/reputation/service.js';

export type PaymentRail = (typeof payments.$inferInsert)['rail'];

export interface NewClaim {
  proofKey: string;
  rail: PaymentRail;
  network: string;
  route: string;
  payer: string | null;
  amount: bigint;
  asset: string | null;
  requestId: string;
}

/**
 * Claims a proof before its handler runs: the unique `proof_key` lets exactly one request through.
 * Returns the payment id, or null when the proof was already claimed (a replay).
 */
export async function claimProof(db: Db, claim: NewClaim): Promise<string | null> {
  const rows = await db
    .insert(payments)
    .values({ ...claim, status: 'claimed' })
    .onConflictDoNothing({ target: payments.proofKey })
    .returning({ id: payments.id });
  return rows[0]?.id ?? null;
}

/** The claim already holding a proof key, if any (to tell a replay from a pending outcome). */
export async function findClaim(db: Db, proofKey: string): Promise<{ id: string; status: (typeof payments.$inferSelect)['status'] } | null> {
  const [row] = await db.select({ id: payments.id, status: payments.status }).from(payments).where(eq(payments.proofKey, proofKey));
  return row ?? null;
}

/** Gives a claimed proof back (it was refused, or the handler failed): the payer may present it again. */
export async function releaseClaim(db: Db, paymentId: string): Promise<void> {
  await db.delete(payments).where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

/** claimed -> settled, with the receipt kept for the payer's and the employer's history. */
export async function recordSettlement(
  db: Db,
  paymentId: string,
  settlement: { reference: string | null; payer: string | null; httpStatus: number; receipt: Record<string, unknown>; employerId?: string | null },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [settled] = await tx
      .update(payments)
      .set({
        status: 'settled',
        reference: settlement.reference,
        payer: settlement.payer,
        httpStatus: settlement.httpStatus,
        employerId: settlement.employerId ?? null,
        settledAt: new Date(),
      })
      .where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')))
      .returning();
    if (!settled) return false;
    await tx.insert(paymentReceipts).values({
      paymentId,
      route: settled.route,
      rail: settled.rail,
      payer: settled.payer,
      amount: settled.amount,
      reference: settled.reference,
      status: 'settled',
      receipt: settlement.receipt,
      employerId: settlement.employerId ?? null,
    });
    // Spec 6: a payment settled on Solana (x402 rail C) earns its payer an attestation, queued in
    // this transaction so it exists exactly when the payment is settled. A payer that is not a
    // Solana key (never expected on rail C) gets none rather than failing the settlement.
    if (settled.rail === 'C' && settled.payer && parseReputationAddress(settled.payer)?.kind === 'solana') {
      await enqueueReputationWrite(tx, {
        kind: 'attestation',
        writeType: 'payment',
        subject: settled.payer,
        sourceType: 'payment',
        sourceId: paymentId,
        amount: settled.amount,
      });
    }
    return true;
  });
}

/** claimed -> unknown: settlement was attempted and its outcome is not known (a reconciler decides). */
export async function markOutcomeUnknown(db: Db, paymentId: string, httpStatus: number, reference: string | null): Promise<void> {
  await db
    .update(payments)
    .set({ status: 'unknown', httpStatus, reference })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

/** claimed -> voided: the chain refused the settlement; the proof can never pay. */
export async function voidClaim(db: Db, paymentId: string, httpStatus: number): Promise<void> {
  await db
    .update(payments)
    .set({ status: 'voided', httpStatus })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

// ---- receipt history ---------------------------------------------------------------------------

export type ReceiptRow = typeof paymentReceipts.$inferSelect;

/** An employer's receipts, newest first, with the total count. */
export async function listEmployerReceipts(db: Db, employerId: string, page: { offset: number; limit: number }) {
  const where = eq(paymentReceipts.employerId, employerId);
  const [rows, [total]] = await Promise.all([
    db.select().from(paymentReceipts).where(where).orderBy(desc(paymentReceipts.createdAt), desc(paymentReceipts.id)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(paymentReceipts).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

/** Count and amount per rail over all of an employer's settled receipts. */
export async function employerReceiptTotals(db: Db, employerId: string): Promise<{ rail: ReceiptRow['rail']; count: number; amount: bigint }[]> {
  const rows = await db
    .select({ rail: paymentReceipts.rail, count: count(), amount: sql<string>`coalesce(sum(${paymentReceipts.amount}), 0)::text` })
    .from(paymentReceipts)
    .where(and(eq(paymentReceipts.employerId, employerId), eq(paymentReceipts.status, 'settled')))
    .groupBy(paymentReceipts.rail)
    .orderBy(paymentReceipts.rail);
  return rows.map((r) => ({ rail: r.rail, count: r.count, amount: BigInt(r.amount) }));
}
