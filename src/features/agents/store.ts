import { and, asc, eq, inArray, isNotNull, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { agentAuthorizations, agentPayCalls } from './tables.js';

export type AuthorizationRow = typeof agentAuthorizations.$inferSelect;
export type NewAuthorization = typeof agentAuthorizations.$inferInsert;
export type PayCallRow = typeof agentPayCalls.$inferSelect;

const ofEmployer = (employerId: string, id: string) => and(eq(agentAuthorizations.employerId, employerId), eq(agentAuthorizations.id, id));
const active = isNull(agentAuthorizations.revokedAt);

// ---- authorizations -----------------------------------------------------------------------------

/** Inserts an authorization; null when the employer already has an active one for this identifier. */
export async function insertAuthorization(db: Db, values: NewAuthorization): Promise<AuthorizationRow | null> {
  const [row] = await db.insert(agentAuthorizations).values(values).onConflictDoNothing().returning();
  return row ?? null;
}

export function listAuthorizations(db: Db, employerId: string, includeRevoked: boolean): Promise<AuthorizationRow[]> {
  return db
    .select()
    .from(agentAuthorizations)
    .where(and(eq(agentAuthorizations.employerId, employerId), includeRevoked ? undefined : active))
    .orderBy(asc(agentAuthorizations.createdAt), asc(agentAuthorizations.id));
}

export async function findAuthorization(db: Db, employerId: string, id: string): Promise<AuthorizationRow | null> {
  const [row] = await db.select().from(agentAuthorizations).where(ofEmployer(employerId, id));
  return row ?? null;
}

/** The employer's active authorization whose identifier is exactly this one. */
export async function findActiveByIdentifier(db: Db, employerId: string, identifier: string): Promise<AuthorizationRow | null> {
  const [row] = await db
    .select()
    .from(agentAuthorizations)
    .where(and(eq(agentAuthorizations.employerId, employerId), eq(agentAuthorizations.agentIdentifier, identifier), active));
  return row ?? null;
}

/** Holds the authorization row for the rest of the transaction: the spend gates' serialisation point. */
export async function lockAuthorization(db: Db, id: string): Promise<AuthorizationRow | null> {
  const [row] = await db.select().from(agentAuthorizations).where(and(eq(agentAuthorizations.id, id), active)).for('update');
  return row ?? null;
}

/** Updates an active authorization; null when it is not (or no longer) active. */
export async function updateAuthorization(db: Db, employerId: string, id: string, patch: Partial<NewAuthorization>): Promise<AuthorizationRow | null> {
  const [row] = await db
    .update(agentAuthorizations)
    .set({ ...patch, updatedAt: clockNow })
    .where(and(ofEmployer(employerId, id), active))
    .returning();
  return row ?? null;
}

/** active -> revoked; null when it was not active. */
export async function revokeAuthorization(db: Db, employerId: string, id: string): Promise<AuthorizationRow | null> {
  const [row] = await db
    .update(agentAuthorizations)
    .set({ revokedAt: clockNow, updatedAt: clockNow })
    .where(and(ofEmployer(employerId, id), active))
    .returning();
  return row ?? null;
}

/** halved -> restored: the original cap back (compare-and-set on `cap_halved_at`). */
export async function restoreHalvedCap(db: Db, employerId: string, id: string): Promise<AuthorizationRow | null> {
  const [row] = await db
    .update(agentAuthorizations)
    .set({ perTxCap: sql`${agentAuthorizations.perTxCapOriginal}`, perTxCapOriginal: null, capHalvedAt: null, updatedAt: clockNow })
    .where(and(ofEmployer(employerId, id), active, isNotNull(agentAuthorizations.capHalvedAt), isNotNull(agentAuthorizations.perTxCapOriginal)))
    .returning();
  return row ?? null;
}

/** Gate 6: halves the per-tx cap, keeping the owner's cap from before the first halving. */
export async function halveCap(db: Db, id: string): Promise<AuthorizationRow | null> {
  const [row] = await db
    .update(agentAuthorizations)
    .set({
      perTxCapOriginal: sql`coalesce(${agentAuthorizations.perTxCapOriginal}, ${agentAuthorizations.perTxCap})`,
      // Never below one base unit (the cap must stay positive).
      perTxCap: sql`greatest(${agentAuthorizations.perTxCap} / 2, 1)`,
      capHalvedAt: clockNow,
      updatedAt: clockNow,
    })
    .where(and(eq(agentAuthorizations.id, id), active))
    .returning();
  return row ?? null;
}

/** Pauses every active, unpaused authorization of the employer; returns those it paused. */
export function pauseAll(db: Db, employerId: string, reason: string, at: Date) {
  return db
    .update(agentAuthorizations)
    .set({ pausedAt: at, pauseReason: reason, updatedAt: at })
    .where(and(eq(agentAuthorizations.employerId, employerId), active, isNull(agentAuthorizations.pausedAt)))
    .returning({ id: agentAuthorizations.id, label: agentAuthorizations.label });
}

/** Resumes every paused authorization of the employer; returns those it resumed. */
export function resumeAll(db: Db, employerId: string) {
  return db
    .update(agentAuthorizations)
    .set({ pausedAt: null, pauseReason: null, updatedAt: clockNow })
    .where(and(eq(agentAuthorizations.employerId, employerId), active, isNotNull(agentAuthorizations.pausedAt)))
    .returning({ id: agentAuthorizations.id, label: agentAuthorizations.label });
}

// ---- agent/pay calls ----------------------------------------------------------------------------

const counting = inArray(agentPayCalls.status, ['reserved', 'paid']);

/**
 * Reservations another feature holds against an authorization's caps (escrow's posts), as SQL
 * selecting rows (amount, created_at, counts) made after `since`. Given as a port, not imported:
 * escrow imports this feature.
 */
export type OtherReservations = (authorizationId: string, since: SQL) => SQL;

/**
 * Everything an authorization has reserved, of every kind, over the rolling 24 h (gate 3): its
 * agent/pay calls still reserved or paid, and `others` (escrows funding, open or paid out), in
 * one statement. Gate 4 counts every call and post that reached a reservation in the last 60 s,
 * whatever became of it.
 */
export async function spendUsage(db: Db, authorizationId: string, others: OtherReservations): Promise<{ spentLastDay: bigint; callsLastMinute: number }> {
  const dayAgo = sql`${clockNow} - interval '24 hours'`;
  const result = await db.execute<{ spent: string; calls: number }>(sql`
    select coalesce(sum(amount) filter (where counts), 0)::text as spent,
           (count(*) filter (where created_at > ${clockNow} - interval '60 seconds'))::int as calls
    from (
      select ${agentPayCalls.amount} as amount, ${agentPayCalls.createdAt} as created_at, ${counting} as counts
        from ${agentPayCalls}
       where ${agentPayCalls.authorizationId} = ${authorizationId} and ${agentPayCalls.createdAt} > ${dayAgo}
      union all
      ${others(authorizationId, dayAgo)}
    ) as reservations`);
  const row = result.rows[0];
  return { spentLastDay: BigInt(row?.spent ?? '0'), callsLastMinute: Number(row?.calls ?? 0) };
}

export async function insertCall(db: Db, values: typeof agentPayCalls.$inferInsert): Promise<PayCallRow> {
  const [row] = await db.insert(agentPayCalls).values(values).returning();
  return row!;
}

/** The live (reserved or paid) call holding this Idempotency-Key, if any. */
export async function findCallByKey(db: Db, authorizationId: string, key: string): Promise<PayCallRow | null> {
  const [row] = await db
    .select()
    .from(agentPayCalls)
    .where(and(eq(agentPayCalls.authorizationId, authorizationId), eq(agentPayCalls.idempotencyKey, key), counting));
  return row ?? null;
}

/** The call a fee payment bought, if any (one at most: fee_payment_id is unique). */
export async function findCallByFee(db: Db, feePaymentId: string): Promise<PayCallRow | null> {
  const [row] = await db.select().from(agentPayCalls).where(eq(agentPayCalls.feePaymentId, feePaymentId));
  return row ?? null;
}

export async function findCall(db: Db, id: string): Promise<PayCallRow | null> {
  const [row] = await db.select().from(agentPayCalls).where(eq(agentPayCalls.id, id));
  return row ?? null;
}

/**
 * Records the transfer about to be sent (compare-and-set: still reserved, nothing recorded yet).
 * False when the reconciler released the reservation first: then the transfer must not be sent.
 */
export async function recordCallTransfer(db: Db, id: string, txHash: string): Promise<boolean> {
  const rows = await db
    .update(agentPayCalls)
    .set({ txHash })
    .where(and(eq(agentPayCalls.id, id), eq(agentPayCalls.status, 'reserved'), isNull(agentPayCalls.txHash)))
    .returning({ id: agentPayCalls.id });
  return rows.length > 0;
}

/** reserved -> paid; null when the call had already left `reserved`. */
export async function markCallPaid(db: Db, id: string, txHash: string): Promise<PayCallRow | null> {
  const [row] = await db
    .update(agentPayCalls)
    .set({ status: 'paid', txHash, settledAt: clockNow })
    .where(and(eq(agentPayCalls.id, id), eq(agentPayCalls.status, 'reserved')))
    .returning();
  return row ?? null;
}

/**
 * reserved -> released: the amount stops counting toward the caps. `unsentOnly`: only while no
 * transfer is recorded (compare-and-set against `recordCallTransfer`, so a transfer recorded
 * meanwhile is never released from under its request).
 */
export async function releaseCall(db: Db, id: string, reason: string, { unsentOnly = false } = {}): Promise<boolean> {
  const rows = await db
    .update(agentPayCalls)
    .set({ status: 'released', failureReason: reason, settledAt: clockNow })
    .where(and(eq(agentPayCalls.id, id), eq(agentPayCalls.status, 'reserved'), unsentOnly ? isNull(agentPayCalls.txHash) : undefined))
    .returning({ id: agentPayCalls.id });
  return rows.length > 0;
}

/**
 * Gate 6's test for a call just paid: how many payments the authorization made before it, the
 * median of those in the 7 days before it, and whether this one exceeds 10x that median.
 */
export async function anomalyCheck(db: Db, call: PayCallRow): Promise<{ priorPayments: number; median: bigint | null; anomalous: boolean }> {
  const prior = and(eq(agentPayCalls.authorizationId, call.authorizationId), eq(agentPayCalls.status, 'paid'), lt(agentPayCalls.createdAt, call.createdAt));
  const median = sql`(percentile_cont(0.5) within group (order by ${agentPayCalls.amount}::float8) filter (where ${agentPayCalls.createdAt} >= ${call.createdAt.toISOString()}::timestamptz - interval '7 days'))::numeric`;
  const [row] = await db
    .select({
      priorPayments: sql<number>`count(*)::int`,
      median: sql<string | null>`floor(${median})::text`,
      anomalous: sql<boolean>`coalesce(${call.amount.toString()}::numeric > 10 * ${median}, false)`,
    })
    .from(agentPayCalls)
    .where(prior);
  return { priorPayments: Number(row?.priorPayments ?? 0), median: row?.median == null ? null : BigInt(row.median), anomalous: Boolean(row?.anomalous) };
}

/** Calls still reserved after `olderThanSeconds`: a crash or a lost answer between reservation and settlement. */
export function staleReservations(db: Db, olderThanSeconds: number, limit: number): Promise<PayCallRow[]> {
  return db
    .select()
    .from(agentPayCalls)
    .where(and(eq(agentPayCalls.status, 'reserved'), lt(agentPayCalls.createdAt, sql`${clockNow} - make_interval(secs => ${olderThanSeconds})`)))
    .orderBy(asc(agentPayCalls.createdAt))
    .limit(limit);
}
