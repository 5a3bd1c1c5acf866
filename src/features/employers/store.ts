import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { employees, employers } from '../../db/schema.js';

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
    .set({ agentKeyHash: key.hash, agentKeyPrefix: key.prefix, agentKeyRotatedAt: new Date(), updatedAt: new Date() })
    .where(eq(employers.id, employerId))
    .returning();
  if (!rows[0]) throw new Error(`employer ${employerId} vanished while its agent key was rotated`);
  return rows[0];
}

export async function findEmployer(db: Db, employerId: string): Promise<EmployerRow | null> {
  const rows = await db.select().from(employers).where(eq(employers.id, employerId));
  return rows[0] ?? null;
}

/** The employer's row, locked until the transaction ends. */
export async function lockEmployer(db: Db, employerId: string): Promise<EmployerRow | null> {
  const rows = await db.select().from(employers).where(eq(employers.id, employerId)).for('update');
  return rows[0] ?? null;
}

export async function setEmployerAccountId(db: Db, employerId: string, accountId: string): Promise<void> {
  await db.update(employers).set({ employerAccountId: accountId, updatedAt: new Date() }).where(eq(employers.id, employerId));
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
  return db.select().from(employees).where(and(eq(employees.employerId, employerId), inArray(employees.id, ids)));
}

/** This employer's employees whose EVM wallet is one of `wallets` (compared case-insensitively). */
export function findEmployeesByWallets(db: Db, employerId: string, wallets: string[]): Promise<EmployeeRow[]> {
  if (wallets.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(employees)
    .where(and(eq(employees.employerId, employerId), inArray(sql`lower(${employees.walletAddress})`, wallets.map((w) => w.toLowerCase()))));
}

export function findEmployee(db: Db, employeeId: string): Promise<EmployeeRow | undefined> {
  return db.select().from(employees).where(eq(employees.id, employeeId)).then((rows) => rows[0]);
}
