import { and, asc, desc, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { auditLog } from '../../audit/tables.js';
import { complianceEvents, sanctionsListState, walletBlocklist } from './tables.js';

export type BlocklistRow = typeof walletBlocklist.$inferSelect;
export type ComplianceEventRow = typeof complianceEvents.$inferSelect;
export type NewComplianceEvent = typeof complianceEvents.$inferInsert;
export type AuditRow = typeof auditLog.$inferSelect;

/** Raw `db.execute` rows carry timestamps as the driver's text (drizzle turns pg's parsing off). */
const toDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const toDateOrNull = (value: Date | string | null) => (value === null ? null : toDate(value));

/** `source` of the global rows that mirror the sanctions list in force (sanctions-list.ts). */
export const BUILTIN_SANCTIONS_SOURCE = 'sanctions:builtin';
const SANCTIONS_LIST_ID = 'ofac-sdn';
/** `source` of the rows an employer adds to its own blocklist. */
export const EMPLOYER_SOURCE = 'employer';

/** Screening hit: a wallet on the global sanctions list (employerId null) or on an employer's blocklist. */
export interface ScreeningHit {
  walletAddress: string;
  employerId: string | null;
  source: string;
  reason: string | null;
}

/**
 * Every sanctions row and every row of this employer's blocklist for these wallets, in one
 * query. `wallets` must be lower-cased; `employerId` null screens against sanctions only.
 */
export async function findScreeningHits(db: Db, employerId: string | null, wallets: string[]): Promise<ScreeningHit[]> {
  if (wallets.length === 0) return [];
  const scope = employerId === null ? sql`employer_id IS NULL` : sql`(employer_id IS NULL OR employer_id = ${employerId}::uuid)`;
  const { rows } = await db.execute<{ wallet_address: string; employer_id: string | null; source: string; reason: string | null }>(sql`
    SELECT wallet_address, employer_id, source, reason
    FROM wallet_blocklist
    WHERE wallet_address = ANY(${sql.param(wallets)}::text[]) AND ${scope}
    ORDER BY (employer_id IS NULL) DESC, created_at, id`);
  return rows.map((r) => ({ walletAddress: r.wallet_address, employerId: r.employer_id, source: r.source, reason: r.reason }));
}

export async function insertEvent(db: Db, event: NewComplianceEvent): Promise<ComplianceEventRow> {
  const [row] = await db.insert(complianceEvents).values(event).returning();
  if (!row) throw new Error('compliance event insert returned nothing');
  return row;
}

/**
 * A CLEAR event for each recipient, in one statement over two arrays (a payroll run's screen can
 * name 10,000 wallets; row-by-row parameters cost a second there). Ids and addresses are hex and
 * UUIDs, checked upstream, so the array literals need no quoting.
 */
export async function insertClearEvents(
  db: Db,
  screen: { employerId: string; policyId: bigint; eventType: string; checkedAt: Date },
  recipients: { employeeId: string; wallet: string }[],
): Promise<void> {
  if (recipients.length === 0) return;
  const ids = `{${recipients.map((r) => r.employeeId).join(',')}}`;
  const wallets = `{${recipients.map((r) => r.wallet.toLowerCase()).join(',')}}`;
  await db.execute(sql`
    INSERT INTO compliance_events (employer_id, employee_id, wallet_address, policy_id, authorized, risk_score, result, event_type, reasons, checked_at)
    SELECT ${screen.employerId}::uuid, r.employee_id, r.wallet, ${screen.policyId.toString()}::bigint, true, 0, 'CLEAR', ${screen.eventType}, '[]'::jsonb, ${screen.checkedAt.toISOString()}::timestamptz
    FROM unnest(${ids}::uuid[], ${wallets}::text[]) AS r(employee_id, wallet)`);
}

export interface ClearedWallet {
  walletAddress: string;
  checkedAt: Date;
  employeeId: string | null;
  eventType: string;
}

/**
 * The employer's cleared wallets: those whose latest event in its ledger is CLEAR (a tie at the
 * same instant counts as BLOCKED) and that are on neither the sanctions list nor its blocklist
 * now. Most recently checked first; `total` and `lastUpdated` cover all of them, not the page.
 */
export async function clearedWallets(
  db: Db,
  employerId: string,
  limit: number,
): Promise<{ rows: ClearedWallet[]; total: number; lastUpdated: Date | null }> {
  const { rows } = await db.execute<{
    wallet_address: string | null;
    checked_at: Date | string | null;
    employee_id: string | null;
    event_type: string | null;
    total: number;
    last_updated: Date | string | null;
  }>(sql`
    WITH latest AS (
      SELECT DISTINCT ON (wallet_address) wallet_address, result, checked_at, employee_id, event_type
      FROM compliance_events
      WHERE employer_id = ${employerId}::uuid
      ORDER BY wallet_address, checked_at DESC, (result = 'BLOCKED') DESC, id
    ),
    cleared AS (
      SELECT l.wallet_address, l.checked_at, l.employee_id, l.event_type
      FROM latest l
      WHERE l.result = 'CLEAR'
        AND NOT EXISTS (
          SELECT 1 FROM wallet_blocklist b
          WHERE b.wallet_address = l.wallet_address AND (b.employer_id IS NULL OR b.employer_id = ${employerId}::uuid)
        )
    ),
    totals AS (SELECT count(*)::int AS total, max(checked_at) AS last_updated FROM cleared),
    page AS (SELECT * FROM cleared ORDER BY checked_at DESC, wallet_address LIMIT ${limit})
    SELECT page.wallet_address, page.checked_at, page.employee_id, page.event_type, totals.total, totals.last_updated
    FROM totals LEFT JOIN page ON true
    ORDER BY page.checked_at DESC, page.wallet_address`);
  const first = rows[0];
  return {
    rows: rows
      .filter((r) => r.wallet_address !== null)
      .map((r) => ({ walletAddress: r.wallet_address!, checkedAt: toDate(r.checked_at!), employeeId: r.employee_id, eventType: r.event_type! })),
    total: first?.total ?? 0,
    lastUpdated: toDateOrNull(first?.last_updated ?? null),
  };
}

export interface EmployeeCompliance {
  id: string;
  fullName: string;
  walletAddress: string | null;
  manualReviewStatus: 'none' | 'pending' | 'approved' | 'rejected';
  latestResult: 'CLEAR' | 'BLOCKED' | null;
  latestCheckedAt: Date | null;
  blockedNow: string | null;
}

/**
 * For each of these (lower-cased) wallets: the latest event in this employer's ledger (a BLOCKED
 * result wins a tie), and whether the sanctions list or the employer's blocklist holds it now.
 */
export async function walletStanding(
  db: Db,
  employerId: string,
  wallets: string[],
): Promise<Map<string, { latestResult: 'CLEAR' | 'BLOCKED' | null; latestCheckedAt: Date | null; blockedNow: string | null }>> {
  const standing = new Map(wallets.map((w) => [w, { latestResult: null as 'CLEAR' | 'BLOCKED' | null, latestCheckedAt: null as Date | null, blockedNow: null as string | null }]));
  if (wallets.length === 0) return standing;
  const list = sql.join(wallets.map((w) => sql`${w}`), sql`, `);
  const [events, listings] = await Promise.all([
    db.execute<{ wallet_address: string; result: 'CLEAR' | 'BLOCKED'; checked_at: Date | string }>(sql`
      SELECT DISTINCT ON (wallet_address) wallet_address, result, checked_at
      FROM compliance_events
      WHERE employer_id = ${employerId}::uuid AND wallet_address IN (${list})
      ORDER BY wallet_address, checked_at DESC, (result = 'BLOCKED') DESC, id`),
    db.execute<{ wallet_address: string; why: string }>(sql`
      SELECT DISTINCT ON (wallet_address) wallet_address,
             CASE WHEN employer_id IS NULL THEN 'sanctions' ELSE 'employer blocklist' END || coalesce(': ' || reason, '') AS why
      FROM wallet_blocklist
      WHERE wallet_address IN (${list}) AND (employer_id IS NULL OR employer_id = ${employerId}::uuid)
      ORDER BY wallet_address, (employer_id IS NULL) DESC, created_at`),
  ]);
  for (const e of events.rows) Object.assign(standing.get(e.wallet_address)!, { latestResult: e.result, latestCheckedAt: toDate(e.checked_at) });
  for (const l of listings.rows) standing.get(l.wallet_address)!.blockedNow = l.why;
  return standing;
}

export async function countBlocklist(db: Db, employerId: string): Promise<number> {
  const rows = await db.select({ total: sql<number>`count(*)::int` }).from(walletBlocklist).where(eq(walletBlocklist.employerId, employerId));
  return rows[0]?.total ?? 0;
}

export function recentAudit(db: Db, employerId: string, limit: number): Promise<AuditRow[]> {
  return db.select().from(auditLog).where(eq(auditLog.employerId, employerId)).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).limit(limit);
}

// ---- the employer's blocklist ------------------------------------------------------------------

export function listBlocklist(db: Db, employerId: string): Promise<BlocklistRow[]> {
  return db
    .select()
    .from(walletBlocklist)
    .where(eq(walletBlocklist.employerId, employerId))
    .orderBy(desc(walletBlocklist.createdAt), desc(walletBlocklist.id));
}

/** Inserts unless the employer already blocks this wallet: null means it does. */
export async function insertBlocklistIfAbsent(
  db: Db,
  values: { employerId: string; walletAddress: string; reason: string | null },
): Promise<BlocklistRow | null> {
  const rows = await db
    .insert(walletBlocklist)
    .values({ ...values, source: EMPLOYER_SOURCE })
    .onConflictDoNothing()
    .returning();
  return rows[0] ?? null;
}

export async function findBlocklistEntry(db: Db, employerId: string, walletAddress: string): Promise<BlocklistRow | null> {
  const rows = await db
    .select()
    .from(walletBlocklist)
    .where(and(eq(walletBlocklist.employerId, employerId), eq(walletBlocklist.walletAddress, walletAddress)));
  return rows[0] ?? null;
}

/** Deletes the entry only if it is this employer's: null means there was none. */
export async function deleteBlocklistEntry(db: Db, employerId: string, entryId: string): Promise<BlocklistRow | null> {
  const rows = await db
    .delete(walletBlocklist)
    .where(and(eq(walletBlocklist.id, entryId), eq(walletBlocklist.employerId, employerId)))
    .returning();
  return rows[0] ?? null;
}

// ---- the sanctions list in force ----------------------------------------------------------------

/**
 * Makes the global `sanctions:builtin` rows equal to `entries` (lower-cased addresses): deletes the
 * ones no longer listed, inserts the missing ones, updates changed reasons. Run it inside one
 * transaction. A global row for the same wallet from another source is left alone (the wallet is
 * sanctioned either way).
 */
export async function syncBuiltinSanctions(
  db: Db,
  entries: { address: string; reason: string }[],
): Promise<{ inserted: number; updated: number; removed: number }> {
  const addresses = entries.map((e) => e.address);
  const reasons = entries.map((e) => e.reason);
  const removed = await db.execute(sql`
    DELETE FROM wallet_blocklist
    WHERE employer_id IS NULL AND source = ${BUILTIN_SANCTIONS_SOURCE}
      AND NOT (wallet_address = ANY(${sql.param(addresses)}::text[]))
    RETURNING id`);
  const inserted = await db.execute(sql`
    INSERT INTO wallet_blocklist (employer_id, wallet_address, source, reason)
    SELECT NULL, entry.address, ${BUILTIN_SANCTIONS_SOURCE}, entry.reason
    FROM unnest(${sql.param(addresses)}::text[], ${sql.param(reasons)}::text[]) AS entry(address, reason)
    ON CONFLICT DO NOTHING
    RETURNING id`);
  const updated = await db.execute(sql`
    UPDATE wallet_blocklist AS b SET reason = entry.reason
    FROM unnest(${sql.param(addresses)}::text[], ${sql.param(reasons)}::text[]) AS entry(address, reason)
    WHERE b.employer_id IS NULL AND b.source = ${BUILTIN_SANCTIONS_SOURCE}
      AND b.wallet_address = entry.address AND b.reason IS DISTINCT FROM entry.reason
    RETURNING b.id`);
  return { inserted: inserted.rows.length, updated: updated.rows.length, removed: removed.rows.length };
}

export type SanctionsListStateRow = typeof sanctionsListState.$inferSelect;

export async function sanctionsState(db: Db): Promise<SanctionsListStateRow | null> {
  const [row] = await db.select().from(sanctionsListState).where(eq(sanctionsListState.id, SANCTIONS_LIST_ID));
  return row ?? null;
}

/** Records the list now in force (a successful sync). */
export async function recordSanctionsSynced(db: Db, list: { source: string; listDate: string | null; entries: number }, at: Date): Promise<void> {
  const values = { source: list.source, listDate: list.listDate, entries: list.entries, syncedAt: at, lastAttemptAt: at, lastError: null };
  await db.insert(sanctionsListState).values({ id: SANCTIONS_LIST_ID, ...values }).onConflictDoUpdate({ target: sanctionsListState.id, set: values });
}

/** Records a failed refresh: the list in force stays as it is. */
export async function recordSanctionsFailure(db: Db, error: string, at: Date): Promise<void> {
  await db.update(sanctionsListState).set({ lastAttemptAt: at, lastError: error }).where(eq(sanctionsListState.id, SANCTIONS_LIST_ID));
}

// ---- for the AI's compliance explanation (through index.ts) -----------------------------------

/**
 * The employer's latest compliance event for the (lower-cased) wallet; a tie at the same instant
 * counts as BLOCKED, as in the compliance list.
 */
export async function latestEvent(db: Db, employerId: string, wallet: string): Promise<ComplianceEventRow | null> {
  const rows = await db
    .select()
    .from(complianceEvents)
    .where(and(eq(complianceEvents.employerId, employerId), eq(complianceEvents.walletAddress, wallet)))
    .orderBy(desc(complianceEvents.checkedAt), desc(sql`(${complianceEvents.result} = 'BLOCKED')`), asc(complianceEvents.id))
    .limit(1);
  return rows[0] ?? null;
}

export interface Listing {
  id: string;
  /** null: the global sanctions list; otherwise the employer's own blocklist. */
  employerId: string | null;
  source: string;
  reason: string | null;
}

/** Where the (lower-cased) wallet is listed now: sanctions rows first, then the employer's blocklist. */
export function listingsNow(db: Db, employerId: string, wallet: string): Promise<Listing[]> {
  return db
    .select({ id: walletBlocklist.id, employerId: walletBlocklist.employerId, source: walletBlocklist.source, reason: walletBlocklist.reason })
    .from(walletBlocklist)
    .where(and(eq(walletBlocklist.walletAddress, wallet), or(isNull(walletBlocklist.employerId), eq(walletBlocklist.employerId, employerId))))
    .orderBy(desc(sql`(${walletBlocklist.employerId} IS NULL)`), asc(walletBlocklist.createdAt));
}
