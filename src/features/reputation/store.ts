import { and, asc, count, countDistinct, desc, eq, gt, inArray, isNotNull, isNull, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import type { Counted, OffsetPage } from '../../db/paging.js';
import { reputationWrites } from './tables.js';

export type ReputationWriteRow = typeof reputationWrites.$inferSelect;
export type NewReputationWrite = typeof reputationWrites.$inferInsert;
export type ReputationWriteKind = ReputationWriteRow['kind'];

/** Raw `db.execute` rows carry timestamps as the driver's text (drizzle turns pg's parsing off). */
const toDateOrNull = (value: Date | string | null) => (value === null ? null : value instanceof Date ? value : new Date(value));

/** Queues one write; the unique (source_type, source_id, subject, write_type) makes a repeat a no-op. */
export async function insertPendingWrite(db: Db, values: NewReputationWrite): Promise<void> {
  await db.insert(reputationWrites).values({ ...values, status: 'pending' }).onConflictDoNothing();
}

/**
 * Claims up to `limit` due writes in one statement: the rows are locked with SKIP LOCKED (two
 * workers never take the same row), counted an attempt and pushed `leaseSeconds` ahead, so a
 * worker that dies mid-write leaves them to a later round once the lease runs out. The returned
 * `attempts` is the claim's fencing token for every later update of the row.
 */
export async function claimDueWrites(db: Db, limit: number, leaseSeconds: number): Promise<ReputationWriteRow[]> {
  const due = and(eq(reputationWrites.status, 'pending'), lte(reputationWrites.nextAttemptAt, clockNow));
  const picked = db
    .select({ id: reputationWrites.id })
    .from(reputationWrites)
    .where(due)
    .orderBy(asc(reputationWrites.nextAttemptAt), asc(reputationWrites.createdAt))
    .limit(limit)
    .for('update', { skipLocked: true });
  return db
    .update(reputationWrites)
    .set({ attempts: sql`${reputationWrites.attempts} + 1`, nextAttemptAt: sql`${clockNow} + ${`${leaseSeconds} seconds`}::interval` })
    .where(and(inArray(reputationWrites.id, picked), due))
    .returning();
}

/** Still the claim that holds the row: pending, and nobody has claimed it since. */
const heldBy = (id: string, attempts: number) =>
  and(eq(reputationWrites.id, id), eq(reputationWrites.status, 'pending'), eq(reputationWrites.attempts, attempts));

/** Records the signed transaction before it is sent; false when the claim lost the row (do not send). */
export async function setPendingReference(db: Db, id: string, attempts: number, reference: string): Promise<boolean> {
  const rows = await db.update(reputationWrites).set({ pendingReference: reference }).where(heldBy(id, attempts)).returning({ id: reputationWrites.id });
  return rows.length > 0;
}

/**
 * -> written, whatever claim holds the row: a write that landed is written even if its lease ran
 * out meanwhile (the round holding it now finds the reference landed, or loses this race) or the
 * row was given up on.
 */
export async function markWritten(db: Db, id: string, chainReference: string): Promise<boolean> {
  const rows = await db
    .update(reputationWrites)
    .set({ status: 'written', chainReference, writtenAt: clockNow, lastError: null })
    .where(and(eq(reputationWrites.id, id), ne(reputationWrites.status, 'written')))
    .returning({ id: reputationWrites.id });
  return rows.length > 0;
}

/** A failed attempt: try again after `delaySeconds`, or give up (`failed`, left for admins). */
export async function markAttemptFailed(db: Db, id: string, attempts: number, error: string, next: { giveUp: boolean; delaySeconds: number }): Promise<void> {
  await db
    .update(reputationWrites)
    .set(
      next.giveUp
        ? { status: 'failed', lastError: error }
        : { lastError: error, nextAttemptAt: sql`${clockNow} + ${`${next.delaySeconds} seconds`}::interval` },
    )
    .where(heldBy(id, attempts));
}

/** Writes given up on, newest first (admin view). */
export function listFailedWrites(db: Db, limit: number): Promise<ReputationWriteRow[]> {
  return db
    .select()
    .from(reputationWrites)
    .where(eq(reputationWrites.status, 'failed'))
    .orderBy(desc(reputationWrites.createdAt), desc(reputationWrites.id))
    .limit(limit);
}

/** The subjects one summary covers: a Solana key (attestations) and/or an ERC-8004 agent id (feedback). */
export interface Subjects {
  solana: string | null;
  agentId: string | null;
}

/** Written rows of these subjects; each kind only matches its own subject form. */
function writtenFor(subjects: Subjects, kind?: ReputationWriteKind): SQL | undefined {
  const parts: SQL[] = [];
  if (subjects.solana !== null && kind !== 'erc8004_feedback') {
    parts.push(and(eq(reputationWrites.kind, 'attestation'), eq(reputationWrites.subject, subjects.solana))!);
  }
  if (subjects.agentId !== null && kind !== 'attestation') {
    parts.push(and(eq(reputationWrites.kind, 'erc8004_feedback'), eq(reputationWrites.subject, subjects.agentId))!);
  }
  if (parts.length === 0) return sql`false`;
  return and(eq(reputationWrites.status, 'written'), or(...parts));
}

/** Written rows per (kind, write type): count and amount. */
export async function writtenTotalsByType(db: Db, subjects: Subjects): Promise<{ kind: ReputationWriteKind; writeType: string; count: number; amount: bigint }[]> {
  const rows = await db
    .select({
      kind: reputationWrites.kind,
      writeType: reputationWrites.writeType,
      count: count(),
      amount: sql<string>`coalesce(sum(${reputationWrites.amount}), 0)::text`,
    })
    .from(reputationWrites)
    .where(writtenFor(subjects))
    .groupBy(reputationWrites.kind, reputationWrites.writeType)
    .orderBy(reputationWrites.kind, reputationWrites.writeType);
  return rows.map((r) => ({ ...r, amount: BigInt(r.amount) }));
}

/** The newest written rows of one kind. */
export function latestWritten(db: Db, subjects: Subjects, kind: ReputationWriteKind, limit: number): Promise<ReputationWriteRow[]> {
  return db
    .select()
    .from(reputationWrites)
    .where(writtenFor(subjects, kind))
    .orderBy(desc(reputationWrites.writtenAt), desc(reputationWrites.id))
    .limit(limit);
}

export interface UnifiedTotals {
  payments: number;
  valueMoved: bigint;
  firstActivityAt: Date | null;
  latestActivityAt: Date | null;
}

/**
 * Totals over both subjects, one per source event: a payment or escrow that produced both an
 * attestation and feedback for the same (linked) party is counted, and its amount added, once.
 * Activity time is when the source event committed (the row was queued in its transaction).
 */
export async function unifiedTotals(db: Db, subjects: Subjects): Promise<UnifiedTotals> {
  const { rows } = await db.execute<{ payments: number; value: string; first_at: string | null; last_at: string | null }>(sql`
    SELECT count(*) FILTER (WHERE is_payment)::int AS payments, coalesce(sum(amount), 0)::text AS value,
           min(first_at) AS first_at, max(last_at) AS last_at
    FROM (
      SELECT bool_or(write_type IN ('payment', 'agent-pay')) AS is_payment, max(amount) AS amount,
             min(created_at) AS first_at, max(created_at) AS last_at
      FROM ${reputationWrites}
      WHERE ${writtenFor(subjects)}
      GROUP BY source_type, source_id
    ) AS sources`);
  const row = rows[0];
  return {
    payments: row?.payments ?? 0,
    valueMoved: BigInt(row?.value ?? '0'),
    firstActivityAt: toDateOrNull(row?.first_at ?? null),
    latestActivityAt: toDateOrNull(row?.last_at ?? null),
  };
}

/**
 * How many distinct parties vouched for these subjects in written rows: a row vouches when it
 * records a payer other than its subject and is not a zero score (a refund). A payer that paid
 * the subject many times, or on both chains for one event, counts once.
 */
export async function countVouchingPayers(db: Db, subjects: Subjects): Promise<number> {
  const vouches = and(
    writtenFor(subjects),
    isNotNull(reputationWrites.payer),
    ne(reputationWrites.payer, reputationWrites.subject),
    or(isNull(reputationWrites.score), gt(reputationWrites.score, 0)),
  );
  const [row] = await db.select({ n: countDistinct(reputationWrites.payer) }).from(reputationWrites).where(vouches);
  return row?.n ?? 0;
}

// ---- read model of another feature: the admin view ----

/** How many writes are in each status. */
export function reputationWriteCounts(db: Db): Promise<{ status: string; count: number }[]> {
  return db.select({ status: reputationWrites.status, count: count() }).from(reputationWrites).groupBy(reputationWrites.status);
}

/** Failed writes first (they need an operator), then newest first; `failedOnly`: the failed ones alone. */
export async function reputationWritesPage(db: Db, page: OffsetPage, failedOnly = false): Promise<Counted<ReputationWriteRow>> {
  const where = failedOnly ? eq(reputationWrites.status, 'failed') : undefined;
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(reputationWrites)
      .where(where)
      .orderBy(sql`${reputationWrites.status} = 'failed' DESC`, desc(reputationWrites.createdAt), desc(reputationWrites.id))
      .offset(page.offset)
      .limit(page.limit),
    db.select({ total: count() }).from(reputationWrites).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}
