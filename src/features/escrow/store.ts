import { and, count, desc, eq, gt, inArray, isNull, lt, lte, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import type { Counted, OffsetPage } from '../../db/paging.js';
import { escrows, type ESCROW_STATUSES } from './tables.js';

export type EscrowRow = typeof escrows.$inferSelect;
export type NewEscrow = typeof escrows.$inferInsert;
export type EscrowStatus = (typeof ESCROW_STATUSES)[number];

/** Not yet settled or refunded: the money is (or is about to be) in the vault. */
export const OPEN_STATUSES = ['posted', 'delivered', 'validating'] as const satisfies readonly EscrowStatus[];
/** Statuses that exist for callers (the status route shows no other). */
export const PUBLIC_STATUSES = [...OPEN_STATUSES, 'settled', 'rejected_refunded', 'expired_refunded'] as const satisfies readonly EscrowStatus[];

// ---- reservations against the poster's spend caps (agents' gates, given this as a port) --------

/**
 * The authorization's escrow posts made after `since`, as rows (amount, created_at, counts) the
 * agents feature's cap sum unions into its one statement: a post counts while funding, open or
 * paid out; a failed funding or a refund gave the money back.
 */
export const posterReservations = (authorizationId: string, since: SQL): SQL => sql`
  select ${escrows.amount} as amount, ${escrows.createdAt} as created_at,
         ${notInArray(escrows.status, ['funding_failed', 'rejected_refunded', 'expired_refunded'])} as counts
    from ${escrows}
   where ${escrows.posterAuthorizationId} = ${authorizationId} and ${escrows.createdAt} > ${since}`;

export async function insertEscrow(db: Db, values: NewEscrow): Promise<EscrowRow> {
  const [row] = await db.insert(escrows).values(values).returning();
  return row!;
}

export async function findEscrow(db: Db, id: string): Promise<EscrowRow | null> {
  const [row] = await db.select().from(escrows).where(eq(escrows.id, id));
  return row ?? null;
}

/** The escrow a post fee bought, if any (one at most: fee_payment_id is unique). */
export async function findByFeePayment(db: Db, feePaymentId: string): Promise<EscrowRow | null> {
  const [row] = await db.select().from(escrows).where(eq(escrows.feePaymentId, feePaymentId));
  return row ?? null;
}

/** The escrow a delivery fee delivered, if any (one at most: delivery_fee_payment_id is unique). */
export async function findByDeliveryFeePayment(db: Db, feePaymentId: string): Promise<EscrowRow | null> {
  const [row] = await db.select().from(escrows).where(eq(escrows.deliveryFeePaymentId, feePaymentId));
  return row ?? null;
}

export async function findEmployerEscrow(db: Db, employerId: string, id: string): Promise<EscrowRow | null> {
  const [row] = await db.select().from(escrows).where(and(eq(escrows.employerId, employerId), eq(escrows.id, id)));
  return row ?? null;
}

export function listEmployerEscrows(db: Db, employerId: string, limit: number): Promise<EscrowRow[]> {
  return db
    .select()
    .from(escrows)
    .where(and(eq(escrows.employerId, employerId), inArray(escrows.status, [...PUBLIC_STATUSES])))
    .orderBy(desc(escrows.createdAt), desc(escrows.id))
    .limit(limit);
}

/** Compare-and-set: moves the escrow only from one of `from`; null when it was elsewhere. */
export async function transition(db: Db, id: string, from: readonly EscrowStatus[], patch: Partial<NewEscrow>): Promise<EscrowRow | null> {
  const [row] = await db
    .update(escrows)
    .set({ ...patch, updatedAt: clockNow })
    .where(and(eq(escrows.id, id), inArray(escrows.status, [...from])))
    .returning();
  return row ?? null;
}

/** Records the judge's answer once: only while validating without a verdict or an escalation. */
export async function recordJudgement(db: Db, id: string, patch: Partial<NewEscrow>): Promise<EscrowRow | null> {
  const [row] = await db
    .update(escrows)
    .set({ ...patch, updatedAt: clockNow })
    .where(and(eq(escrows.id, id), eq(escrows.status, 'validating'), isNull(escrows.validatorVerdict), isNull(escrows.escalatedAt)))
    .returning();
  return row ?? null;
}

/** The employer's decision on an escalated escrow: only while it awaits one. */
export async function decideEscalated(db: Db, id: string, patch: Partial<NewEscrow>): Promise<EscrowRow | null> {
  const [row] = await db
    .update(escrows)
    .set({ ...patch, updatedAt: clockNow })
    .where(and(eq(escrows.id, id), eq(escrows.status, 'validating'), isNull(escrows.validatorVerdict), sql`${escrows.escalatedAt} IS NOT NULL`))
    .returning();
  return row ?? null;
}

/** Merges keys into `signatures` (a null value removes the key). */
export async function mergeSignatures(db: Db, id: string, entries: Record<string, unknown>): Promise<void> {
  const set = Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== null));
  const removed = Object.keys(entries).filter((k) => entries[k] === null);
  let value = sql`${escrows.signatures} || ${JSON.stringify(set)}::jsonb`;
  for (const key of removed) value = sql`(${value}) - ${key}::text`;
  await db.update(escrows).set({ signatures: value, updatedAt: clockNow }).where(eq(escrows.id, id));
}

/**
 * Takes the escrow's lease for `owner` (a token the taker drew): the one worker allowed to move its
 * money until the lease lapses. Null when another holds it.
 */
export async function takeLease(db: Db, id: string, seconds: number, owner: string): Promise<EscrowRow | null> {
  const [row] = await db
    .update(escrows)
    .set({ leaseUntil: sql`${clockNow} + make_interval(secs => ${seconds})`, leaseOwner: owner })
    .where(and(eq(escrows.id, id), or(isNull(escrows.leaseUntil), lte(escrows.leaseUntil, clockNow))))
    .returning();
  return row ?? null;
}

/** Ends the lease, only if `owner` still holds it (a lapsed holder never ends its successor's). */
export async function releaseLease(db: Db, id: string, owner: string): Promise<void> {
  await db.update(escrows).set({ leaseUntil: null, leaseOwner: null }).where(and(eq(escrows.id, id), eq(escrows.leaseOwner, owner)));
}

/**
 * Records a transaction about to be sent (`mergeSignatures`), only while `owner` holds a live
 * lease: false when it lapsed and another may be acting, and then the transaction must not be sent.
 */
export async function recordUnderLease(db: Db, id: string, owner: string, entries: Record<string, unknown>): Promise<boolean> {
  const rows = await db
    .update(escrows)
    .set({ signatures: sql`${escrows.signatures} || ${JSON.stringify(entries)}::jsonb`, updatedAt: clockNow })
    .where(and(eq(escrows.id, id), eq(escrows.leaseOwner, owner), gt(escrows.leaseUntil, clockNow)))
    .returning({ id: escrows.id });
  return rows.length > 0;
}

/**
 * Escrows with work to do and no live lease: a funding left behind (older than `fundingStaleSeconds`),
 * a delivery not yet judged, a verdict not yet paid out, or an open escrow past its expiry.
 */
export async function needingProgress(db: Db, fundingStaleSeconds: number, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: escrows.id })
    .from(escrows)
    .where(
      and(
        or(isNull(escrows.leaseUntil), lte(escrows.leaseUntil, clockNow)),
        or(
          and(eq(escrows.status, 'funding'), lt(escrows.createdAt, sql`${clockNow} - make_interval(secs => ${fundingStaleSeconds})`)),
          eq(escrows.status, 'delivered'),
          and(eq(escrows.status, 'validating'), isNull(escrows.escalatedAt)),
          and(eq(escrows.status, 'validating'), sql`${escrows.validatorVerdict} IS NOT NULL`),
          and(inArray(escrows.status, [...OPEN_STATUSES]), lte(escrows.expiresAt, clockNow)),
        ),
      ),
    )
    .orderBy(escrows.updatedAt)
    .limit(limit);
  return rows.map((r) => r.id);
}

// ---- read model of another feature: the admin view ----

/** Escrow metadata. The deliverable's bytes are never read: only their size. */
const metadataColumns = {
  id: escrows.id,
  employerId: escrows.employerId,
  status: escrows.status,
  amount: escrows.amount,
  posterAgentIdentifier: escrows.posterAgentIdentifier,
  workerAgentIdentifier: escrows.workerAgentIdentifier,
  workerWalletAddress: escrows.workerWalletAddress,
  workerReputationTier: escrows.workerReputationTier,
  appliedExpiryHours: escrows.appliedExpiryHours,
  expiresAt: escrows.expiresAt,
  deliverableUri: escrows.deliverableUri,
  deliverableSha256: escrows.deliverableSha256,
  deliverableBytes: sql<number | null>`octet_length(${escrows.deliverableContent})`,
  validatorVerdict: escrows.validatorVerdict,
  validatorConfidence: escrows.validatorConfidence,
  validatorModel: escrows.validatorModel,
  sanitizerFlagged: escrows.sanitizerFlagged,
  escalatedAt: escrows.escalatedAt,
  escalationReason: escrows.escalationReason,
  createdAt: escrows.createdAt,
  deliveredAt: escrows.deliveredAt,
  verdictAt: escrows.verdictAt,
  finalizedAt: escrows.finalizedAt,
};

const metadataPage = (db: Db, page: OffsetPage, where: SQL | undefined) =>
  db.select(metadataColumns).from(escrows).where(where).orderBy(desc(escrows.createdAt), desc(escrows.id)).offset(page.offset).limit(page.limit);
export type EscrowMetadataRow = Awaited<ReturnType<typeof metadataPage>>[number];

/** Escrows newest first, of one employer or of all, without their deliverables. */
export async function escrowMetadataPage(db: Db, page: OffsetPage, employerId?: string): Promise<Counted<EscrowMetadataRow>> {
  const where = employerId === undefined ? undefined : eq(escrows.employerId, employerId);
  const [rows, totals] = await Promise.all([
    metadataPage(db, page, where),
    db.select({ total: count() }).from(escrows).where(where),
  ]);
  return { rows: rows.map((r) => ({ ...r, deliverableBytes: r.deliverableBytes === null ? null : Number(r.deliverableBytes) })), total: totals[0]?.total ?? 0 };
}
