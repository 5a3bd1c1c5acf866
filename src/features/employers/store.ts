import { and, asc, count, desc, eq, inArray, isNotNull, isNull, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import type { Counted, OffsetPage } from '../../db/paging.js';
import { employees, employers } from './tables.js';

export type EmployerRow = typeof employers.$inferSelect;
export type EmployeeRow = typeof employees.$inferSelect;
export type NewEmployee = typeof employees.$inferInsert;

/** The employer, only if this user owns it. */
export async function findOwnedEmployer(db: Db, employerId: string, ownerUserId: string): Promise<EmployerRow | null> {
  const rows = await db
    .select()
    .from(employers)
    .where(and(eq(employers.id, employerId), eq(employers.ownerUserId, ownerUserId)));
  return rows[0] ?? null;
}

export async function findEmployerByOwner(db: Db, ownerUserId: string): Promise<EmployerRow | null> {
  const rows = await db.select().from(employers).where(eq(employers.ownerUserId, ownerUserId));
  return rows[0] ?? null;
}

/** Inserts unless the owner already has one (unique owner): null means someone got there first. */
export async function insertEmployerIfAbsent(
  db: Db,
  values: { ownerUserId: string; name: string; adminWallet: string | null },
): Promise<EmployerRow | null> {
  const rows = await db.insert(employers).values(values).onConflictDoNothing({ target: employers.ownerUserId }).returning();
  return rows[0] ?? null;
}

export function allActiveEmployees(db: Db, employerId: string): Promise<EmployeeRow[]> {
  return db
    .select()
    .from(employees)
    .where(and(eq(employees.employerId, employerId), eq(employees.status, 'active')))
    .orderBy(asc(employees.createdAt), asc(employees.id));
}

export async function listActiveEmployees(
  db: Db,
  employerId: string,
  page: { offset: number; limit: number },
): Promise<{ rows: EmployeeRow[]; total: number }> {
  const active = and(eq(employees.employerId, employerId), eq(employees.status, 'active'));
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(employees)
      .where(active)
      .orderBy(asc(employees.createdAt), asc(employees.id))
      .offset(page.offset)
      .limit(page.limit),
    db.select({ total: count() }).from(employees).where(active),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

/** Inserts unless the employer already has this email: null means it exists. */
export async function insertEmployeeIfAbsent(db: Db, values: NewEmployee): Promise<EmployeeRow | null> {
  const rows = await db
    .insert(employees)
    .values(values)
    .onConflictDoNothing({ target: [employees.employerId, employees.email] })
    .returning();
  return rows[0] ?? null;
}

export async function findEmployeeByEmail(db: Db, employerId: string, email: string): Promise<EmployeeRow | null> {
  const rows = await db
    .select()
    .from(employees)
    .where(and(eq(employees.employerId, employerId), eq(employees.email, email)));
  return rows[0] ?? null;
}

export async function findEmployerByAgentKeyHash(db: Db, hash: string): Promise<EmployerRow | null> {
  const rows = await db.select().from(employers).where(eq(employers.agentKeyHash, hash));
  return rows[0] ?? null;
}

/** Replaces the agent key (the old one stops working in the same statement). */
export async function setAgentKey(db: Db, employerId: string, key: { hash: string; prefix: string }): Promise<EmployerRow> {
  const rows = await db
    .update(employers)
    .set({ agentKeyHash: key.hash, agentKeyPrefix: key.prefix, agentKeyRotatedAt: clockNow, updatedAt: clockNow })
    .where(eq(employers.id, employerId))
    .returning();
  if (!rows[0]) throw new Error(`employer ${employerId} vanished while its agent key was rotated`);
  return rows[0];
}

export async function findEmployer(db: Db, employerId: string): Promise<EmployerRow | null> {
  const rows = await db.select().from(employers).where(eq(employers.id, employerId));
  return rows[0] ?? null;
}

/** Records the treasury account id unless one is already recorded; false when another won. */
export async function setEmployerAccountIdIfUnset(db: Db, employerId: string, accountId: string): Promise<boolean> {
  const rows = await db
    .update(employers)
    .set({ employerAccountId: accountId, updatedAt: clockNow })
    .where(and(eq(employers.id, employerId), isNull(employers.employerAccountId)))
    .returning({ id: employers.id });
  return rows.length > 0;
}

export async function countActiveEmployees(db: Db, employerId: string): Promise<number> {
  const rows = await db
    .select({ total: count() })
    .from(employees)
    .where(and(eq(employees.employerId, employerId), eq(employees.status, 'active')));
  return rows[0]?.total ?? 0;
}

/** This employer's employees among `ids` (others' ids simply do not match). */
export function findEmployeesByIds(db: Db, employerId: string, ids: string[]): Promise<EmployeeRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  // One array parameter, not one per id (a payroll run names up to 10,000).
  return db.select().from(employees).where(and(eq(employees.employerId, employerId), sql`${employees.id} = ANY(${sql.param(ids)}::uuid[])`));
}

/** This employer's employees whose EVM wallet is one of `wallets` (compared case-insensitively). */
export function findEmployeesByWallets(db: Db, employerId: string, wallets: string[]): Promise<EmployeeRow[]> {
  if (wallets.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(employees)
    .where(and(eq(employees.employerId, employerId), sql`lower(${employees.walletAddress}) = ANY(${sql.param(wallets.map((w) => w.toLowerCase()))}::text[])`));
}

export function findEmployee(db: Db, employeeId: string): Promise<EmployeeRow | undefined> {
  return db.select().from(employees).where(eq(employees.id, employeeId)).then((rows) => rows[0]);
}

/** The employer's row if this user owns it, locked until the transaction ends. */
export async function lockOwnedEmployer(db: Db, employerId: string, ownerUserId: string): Promise<EmployerRow | null> {
  const rows = await db
    .select()
    .from(employers)
    .where(and(eq(employers.id, employerId), eq(employers.ownerUserId, ownerUserId)))
    .for('update');
  return rows[0] ?? null;
}

export async function updateEmployer(
  db: Db,
  employerId: string,
  set: Partial<Pick<EmployerRow, 'name' | 'tip403PolicyId' | 'paySchedule' | 'payDay' | 'payAnchorDate'>>,
): Promise<EmployerRow> {
  const rows = await db
    .update(employers)
    .set({ ...set, updatedAt: clockNow })
    .where(eq(employers.id, employerId))
    .returning();
  if (!rows[0]) throw new Error(`employer ${employerId} vanished while locked`);
  return rows[0];
}

/** This employer's employee (any status), locked until the transaction ends. */
export async function lockEmployerEmployee(db: Db, employerId: string, employeeId: string): Promise<EmployeeRow | null> {
  const rows = await db
    .select()
    .from(employees)
    .where(and(eq(employees.id, employeeId), eq(employees.employerId, employerId)))
    .for('update');
  return rows[0] ?? null;
}

/** The user's own active employee record, locked until the transaction ends. */
export async function lockOwnActiveEmployee(db: Db, employeeId: string, userId: string): Promise<EmployeeRow | null> {
  const rows = await db
    .select()
    .from(employees)
    .where(and(eq(employees.id, employeeId), eq(employees.userId, userId), eq(employees.status, 'active')))
    .for('update');
  return rows[0] ?? null;
}

export type EmployeeChanges = Partial<
  Pick<
    EmployeeRow,
    | 'fullName'
    | 'walletAddress'
    | 'solanaWalletAddress'
    | 'annualSalary'
    | 'department'
    | 'costCentre'
    | 'status'
    | 'payrollPaused'
    | 'manualReviewStatus'
    | 'manualReviewNote'
    | 'manualReviewedAt'
    | 'manualReviewedBy'
    | 'removedAt'
  >
>;

/**
 * Compare-and-set: changes the employee only while it is still active. null means it was not
 * (removed in between), and nothing changed.
 */
export async function updateActiveEmployee(db: Db, employeeId: string, set: EmployeeChanges): Promise<EmployeeRow | null> {
  const rows = await db
    .update(employees)
    .set({ ...set, updatedAt: clockNow })
    .where(and(eq(employees.id, employeeId), eq(employees.status, 'active')))
    .returning();
  return rows[0] ?? null;
}

/** Inserts every employee whose email the employer does not have yet; returns those inserted. */
export async function insertEmployeesIfAbsent(db: Db, values: NewEmployee[]): Promise<EmployeeRow[]> {
  if (values.length === 0) return [];
  return db
    .insert(employees)
    .values(values)
    .onConflictDoNothing({ target: [employees.employerId, employees.email] })
    .returning();
}

export function findEmployeesByEmails(db: Db, employerId: string, emails: string[]): Promise<EmployeeRow[]> {
  if (emails.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(employees)
    .where(and(eq(employees.employerId, employerId), inArray(employees.email, emails)));
}

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

// ---- the fiat bridge's columns (written by the bridge feature through index.ts) ----------------

/** Records the provider's customer id once (compare-and-set); false when another request won. */
export async function setBridgeCustomerIfUnset(db: Db, employeeId: string, customerId: string): Promise<boolean> {
  const rows = await db
    .update(employees)
    .set({ bridgeCustomerId: customerId, updatedAt: clockNow })
    .where(and(eq(employees.id, employeeId), isNull(employees.bridgeCustomerId)))
    .returning({ id: employees.id });
  return rows.length > 0;
}

/** Writes a KYC status; true when it changed (so the change is announced once). */
export async function setKycStatus(db: Db, employeeId: string, status: string): Promise<boolean> {
  const rows = await db
    .update(employees)
    .set({ kycStatus: status, updatedAt: clockNow })
    .where(and(eq(employees.id, employeeId), sql`${employees.kycStatus} <> ${status}`))
    .returning({ id: employees.id });
  return rows.length > 0;
}

/** Employees whose KYC is still moving at the provider. */
export function employeesAwaitingKyc(db: Db, limit: number) {
  return db
    .select({ id: employees.id, employerId: employees.employerId, fullName: employees.fullName, bridgeCustomerId: employees.bridgeCustomerId, kycStatus: employees.kycStatus })
    .from(employees)
    .where(and(isNotNull(employees.bridgeCustomerId), notInArray(employees.kycStatus, ['approved', 'rejected'])))
    .limit(limit);
}

/** Locks the employee's row for the rest of the transaction: one off-ramp reservation at a time per employee. */
export async function lockEmployee(db: Db, employeeId: string): Promise<void> {
  await db.select({ id: employees.id }).from(employees).where(eq(employees.id, employeeId)).for('update');
}

// ---- a user's roles and sign-in linking (the users feature, through index.ts) ------------------

/**
 * The id of the employer the user owns, as a correlated subquery: the users store puts it in its
 * one per-request read. `userId` must name the outer column qualified (`users.id`): a bare column
 * would bind to this subquery's own tables.
 */
export const ownedEmployerIdOf = (userId: SQL) => sql<string | null>`(SELECT e.id FROM employers e WHERE e.owner_user_id = ${userId})`;

/** The user's active employee ids, oldest first, as a correlated subquery (see `ownedEmployerIdOf`). */
export const activeEmployeeIdsOf = (userId: SQL) =>
  sql<string[]>`COALESCE((SELECT array_agg(m.id::text ORDER BY m.created_at) FROM employees m
    WHERE m.user_id = ${userId} AND m.status = 'active'), '{}')`;

/** Links unclaimed employee records with this email to the user. */
export async function linkEmployeesByEmail(db: Db, userId: string, email: string) {
  await db
    .update(employees)
    .set({ userId, updatedAt: clockNow })
    .where(and(eq(employees.email, email), isNull(employees.userId)));
}

// ---- for other features' read models (payroll receipts, the AI analyses), through index.ts ---

/** This employer's employees among `ids` with their contact details and the employer's name (a run's receipts). */
export function employeeContacts(db: Db, employerId: string, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select({ id: employees.id, email: employees.email, fullName: employees.fullName, employerName: employers.name })
    .from(employees)
    .innerJoin(employers, eq(employers.id, employees.employerId))
    .where(and(eq(employees.employerId, employerId), sql`${employees.id} = ANY(${sql.param(ids)}::uuid[])`));
}

// ---- read model of another feature: the admin view ----

/** How many employers there are, and how many employees are in each status. */
export async function employerCounts(db: Db): Promise<{ employers: number; employees: { status: string; count: number }[] }> {
  const [employerTotal, employeeCounts] = await Promise.all([
    db.select({ total: count() }).from(employers),
    db.select({ status: employees.status, count: count() }).from(employees).groupBy(employees.status),
  ]);
  return { employers: employerTotal[0]?.total ?? 0, employees: employeeCounts };
}

export type EmployerWithHeadcount = EmployerRow & { activeEmployees: number };

/** Employers newest first, each with its count of active employees. */
export async function employersPage(db: Db, page: OffsetPage): Promise<Counted<EmployerWithHeadcount>> {
  const [rows, totals] = await Promise.all([
    db
      .select({
        employer: employers,
        activeEmployees: sql<number>`(SELECT count(*)::int FROM employees m WHERE m.employer_id = employers.id AND m.status = 'active')`,
      })
      .from(employers)
      .orderBy(desc(employers.createdAt), desc(employers.id))
      .offset(page.offset)
      .limit(page.limit),
    db.select({ total: count() }).from(employers),
  ]);
  return { rows: rows.map((r) => ({ ...r.employer, activeEmployees: Number(r.activeEmployees) })), total: totals[0]?.total ?? 0 };
}

/** These employers' names by id. */
export async function employerNames(db: Db, employerIds: string[]): Promise<Map<string, string>> {
  if (employerIds.length === 0) return new Map();
  const rows = await db.select({ id: employers.id, name: employers.name }).from(employers).where(inArray(employers.id, [...new Set(employerIds)]));
  return new Map(rows.map((row) => [row.id, row.name]));
}
