import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { clockNow } from '../db/columns.js';
import { auditLog } from '../audit/tables.js';
import { paymentReceipts, payments } from './tables.js';

export type PaymentRail = (typeof payments.$inferInsert)['rail'];
export type PaymentRow = typeof payments.$inferSelect;

/**
 * Runs in the transaction that makes a payment final and kept (`served`): what the rest of the
 * service does with a collected fee (e.g. a payer's attestation for a rail C payment) registers
 * here, so this module depends on no feature (`openPayments({ onSettled })`).
 */
export type SettledHook = (db: Db, payment: PaymentRow) => Promise<void>;

export interface NewClaim {
  proofKey: string;
  rail: PaymentRail;
  network: string;
  route: string;
  payer: string | null;
  amount: bigint;
  asset: string | null;
  requestId: string;
  proofHash: string;
  requestHash: string;
  trace: Record<string, unknown>;
}

export interface Settlement {
  reference: string | null;
  payer: string | null;
  headers: Record<string, string>;
  receipt: Record<string, unknown>;
}

const leaseFor = (seconds: number) => sql`${clockNow} + make_interval(secs => ${seconds})`;
const leaseLapsed = or(isNull(payments.leaseUntil), lt(payments.leaseUntil, clockNow));

/**
 * Claims a proof before its handler runs: the unique `proof_key` lets exactly one request through.
 * The claim is held until `leaseSeconds` from now (the request renews it while it runs).
 * Returns the payment id, or null when the proof was already claimed (a replay).
 */
export async function claimProof(db: Db, claim: NewClaim, leaseSeconds: number): Promise<string | null> {
  const rows = await db
    .insert(payments)
    .values({ ...claim, status: 'claimed', leaseUntil: leaseFor(leaseSeconds) })
    .onConflictDoNothing({ target: payments.proofKey })
    .returning({ id: payments.id });
  return rows[0]?.id ?? null;
}

export type ClaimRow = Pick<PaymentRow, 'id' | 'status' | 'proofHash' | 'requestHash' | 'settlement'>;
const claimColumns = {
  id: payments.id,
  status: payments.status,
  proofHash: payments.proofHash,
  requestHash: payments.requestHash,
  settlement: payments.settlement,
};

/** The claim already holding a proof, by its key or by the exact bytes presented. */
export async function findClaim(db: Db, by: { proofKey: string } | { proofHash: string }): Promise<ClaimRow | null> {
  const where = 'proofKey' in by ? eq(payments.proofKey, by.proofKey) : eq(payments.proofHash, by.proofHash);
  const [row] = await db.select(claimColumns).from(payments).where(where).limit(1);
  return row ?? null;
}

/**
 * Runs `work` while renewing the payment's lease (a third of it at a time), so it never looks
 * abandoned while this process lives; after a crash the lease lapses and another takes over.
 */
export async function holdingLease<T>(db: Db, paymentId: string, leaseSeconds: number, work: () => Promise<T>): Promise<T> {
  const renew = setInterval(() => {
    db.update(payments)
      .set({ leaseUntil: leaseFor(leaseSeconds) })
      .where(and(eq(payments.id, paymentId), inArray(payments.status, ['claimed', 'settled', 'refunding'])))
      .catch(() => {});
  }, (leaseSeconds * 1000) / 3);
  renew.unref();
  try {
    return await work();
  } finally {
    clearInterval(renew);
  }
}

/**
 * Takes over a settled payment whose request died before answering (its lease lapsed): the one
 * caller that wins serves it. Null when it is served, refunded or still held.
 */
export async function takeOverSettled(db: Db, paymentId: string, leaseSeconds: number): Promise<ClaimRow | null> {
  const [row] = await db
    .update(payments)
    .set({ leaseUntil: leaseFor(leaseSeconds) })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'settled'), leaseLapsed))
    .returning(claimColumns);
  return row ?? null;
}

/** Gives a claimed proof back (nothing moved: the handler failed first): the payer may present it again. */
export async function releaseClaim(db: Db, paymentId: string): Promise<void> {
  await db.delete(payments).where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

/** claimed -> settled: the fee moved; the answer is still to come (`markServed`). */
export async function recordSettlement(db: Db, paymentId: string, settlement: Settlement): Promise<void> {
  await db
    .update(payments)
    .set({
      status: 'settled',
      reference: settlement.reference,
      payer: settlement.payer,
      settlement: { headers: settlement.headers, receipt: settlement.receipt },
      settledAt: clockNow,
    })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

/**
 * claimed or settled -> served: the call was answered below 500, so the fee is kept. Writes the
 * receipt for the payer's and the employer's history and runs the settled hook, in one transaction.
 * `settlement` is given when the payment settles only now (a `reads` route, after its handler).
 */
export async function markServed(
  db: Db,
  paymentId: string,
  served: { httpStatus: number; employerId: string | null; settlement?: Settlement },
  onSettled?: SettledHook,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { settlement } = served;
    const [row] = await tx
      .update(payments)
      .set({
        status: 'served',
        httpStatus: served.httpStatus,
        employerId: served.employerId,
        servedAt: clockNow,
        ...(settlement && {
          reference: settlement.reference,
          payer: settlement.payer,
          settlement: { headers: settlement.headers, receipt: settlement.receipt },
          settledAt: clockNow,
        }),
      })
      .where(and(eq(payments.id, paymentId), eq(payments.status, settlement ? 'claimed' : 'settled')))
      .returning();
    if (!row) return false;
    await tx.insert(paymentReceipts).values({
      paymentId,
      route: row.route,
      rail: row.rail,
      payer: row.payer,
      amount: row.amount,
      reference: row.reference,
      status: 'settled',
      receipt: row.settlement?.receipt ?? {},
      employerId: row.employerId,
    });
    await onSettled?.(tx, row);
    return true;
  });
}

/** claimed -> unknown: settlement was attempted and its outcome is not known (the reconciler decides). */
export async function markOutcomeUnknown(db: Db, paymentId: string, httpStatus: number | null, reference: string | null): Promise<void> {
  await db
    .update(payments)
    .set({ status: 'unknown', httpStatus, reference })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

/** claimed -> voided: the settlement was refused; the proof can never pay. */
export async function voidClaim(db: Db, paymentId: string, httpStatus: number | null): Promise<void> {
  await db
    .update(payments)
    .set({ status: 'voided', httpStatus })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'claimed')));
}

/** Records the settlement reference as soon as it is known (before a send whose answer may be lost). */
export async function recordReference(db: Db, proofKey: string, reference: string): Promise<void> {
  await db
    .update(payments)
    .set({ reference })
    .where(and(eq(payments.proofKey, proofKey), inArray(payments.status, ['claimed', 'unknown'])));
}

// ---- refunds -----------------------------------------------------------------------------------

/**
 * settled -> refunding, held by the caller for `leaseSeconds`: by the request whose call failed
 * (5xx; it holds the lease), or by the reconciler for a payment never served (`abandoned`: only
 * while nobody holds it, so a retry that just took it over to serve it is never refunded under it).
 * Null when someone else resolved or holds the payment.
 */
export async function startRefund(
  db: Db,
  paymentId: string,
  httpStatus: number | null,
  leaseSeconds: number,
  holder: 'request' | 'abandoned',
): Promise<PaymentRow | null> {
  const [row] = await db
    .update(payments)
    .set({ status: 'refunding', httpStatus, leaseUntil: leaseFor(leaseSeconds) })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'settled'), holder === 'abandoned' ? leaseLapsed : undefined))
    .returning();
  return row ?? null;
}

/** A refund whose worker died (lease lapsed), taken by this one; null when someone else holds it. */
export async function takeOverRefund(db: Db, paymentId: string, leaseSeconds: number): Promise<PaymentRow | null> {
  const [row] = await db
    .update(payments)
    .set({ leaseUntil: leaseFor(leaseSeconds) })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'refunding'), leaseLapsed))
    .returning();
  return row ?? null;
}

/**
 * Records the refund transaction before it is sent (so a crash afterwards finds it and never sends
 * a second one). False when the payment is no longer refunding: do not send then.
 */
export async function recordRefundAttempt(db: Db, paymentId: string, reference: string, attempt: Record<string, unknown>): Promise<boolean> {
  const rows = await db
    .update(payments)
    .set({ refundReference: reference, refundAttempt: attempt })
    .where(and(eq(payments.id, paymentId), eq(payments.status, 'refunding')))
    .returning({ id: payments.id });
  return rows.length > 0;
}

/** refunding -> refunded, with the refund's reference and an audit entry in the same transaction. */
export async function markRefunded(db: Db, row: PaymentRow, reference: string, reason: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const changed = await tx
      .update(payments)
      .set({ status: 'refunded', refundReference: reference, refundedAt: clockNow, leaseUntil: null })
      .where(and(eq(payments.id, row.id), eq(payments.status, 'refunding')))
      .returning({ id: payments.id });
    if (changed.length === 0) return false;
    await auditPayment(tx, row, 'payment.refunded', { amount: row.amount.toString(), payer: row.payer, refund_reference: reference, reason });
    return true;
  });
}

/** A fee a session can no longer give back through its channel (docs/decisions.md, "MPP sessions"): a rail A refund owed to the payer. */
export interface OwedRefund {
  network: string;
  route: string;
  payer: string;
  amount: bigint;
  asset: string;
  /** The channel id. */
  reference: string;
  httpStatus: number | null;
  requestId: string;
  employerId: string | null;
}

/** Records an owed refund as a payment being refunded that nobody holds: the reconciler sends it, once. */
export async function recordOwedRefund(db: Db, owed: OwedRefund): Promise<void> {
  await db.insert(payments).values({ ...owed, proofKey: `mpp:session-refund:${randomUUID()}`, rail: 'A', status: 'refunding' });
}

// ---- the reconciler's work list ----------------------------------------------------------------

/**
 * Payments no request is answering any more: claims and unknown outcomes whose lease lapsed,
 * settlements never served within `unservedSeconds`, and refunds whose worker died.
 */
export async function stalePayments(db: Db, options: { unservedSeconds: number; limit: number }): Promise<PaymentRow[]> {
  return db
    .select()
    .from(payments)
    .where(
      and(
        leaseLapsed,
        or(
          inArray(payments.status, ['claimed', 'unknown', 'refunding']),
          and(eq(payments.status, 'settled'), lt(payments.settledAt, sql`${clockNow} - make_interval(secs => ${options.unservedSeconds})`)),
        ),
      ),
    )
    .orderBy(payments.createdAt)
    .limit(options.limit);
}

/** A reconciler decision: `from` -> `to` by compare-and-set, with an audit entry in the same transaction. */
export async function resolvePayment(db: Db, row: PaymentRow, to: 'settled' | 'voided', details: { reference?: string | null; reason: string }): Promise<boolean> {
  return db.transaction(async (tx) => {
    const reference = details.reference ?? row.reference;
    const changed = await tx
      .update(payments)
      .set({ status: to, reference, ...(to === 'settled' && { settledAt: clockNow }) })
      .where(and(eq(payments.id, row.id), eq(payments.status, row.status), leaseLapsed))
      .returning({ id: payments.id });
    if (changed.length === 0) return false;
    await auditPayment(tx, row, `payment.${to}`, { from: row.status, proof_key: row.proofKey, reference, reason: details.reason });
    return true;
  });
}

/** The audit entry of a decision about a payment, made by the service itself. */
function auditPayment(db: Db, row: PaymentRow, action: string, details: Record<string, unknown>) {
  return db.insert(auditLog).values({
    actorKind: 'system',
    action,
    employerId: row.employerId,
    targetType: 'payment',
    targetId: row.id,
    details: { route: row.route, rail: row.rail, ...details },
  });
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
