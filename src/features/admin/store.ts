/**
 * SQL of the platform admin's operations view. Unlike every other feature, this store reads other
 * features' tables directly (employers, employees, payroll runs, payments, email outbox, audit
 * log): the admin view is a read-only window on the whole database for operators, and going
 * through each feature's service would only add round trips. It never writes.
 */
import { count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { auditLog, emailOutbox, employees, employers, payments, payrollRuns, reputationWrites } from '../../db/schema.js';

export interface Page {
  offset: number;
  limit: number;
}

export interface Counted<T> {
  rows: T[];
  total: number;
}

export interface Overview {
  employers: number;
  employees: { status: string; count: number }[];
  payrollRuns: { status: string; count: number }[];
  payments: { rail: string; status: string; count: number; amount: bigint }[];
  emails: { status: string; count: number }[];
  reputationWrites: { status: string; count: number }[];
}

export async function overview(db: Db): Promise<Overview> {
  const [employerCount, employeeCounts, runCounts, paymentCounts, emailCounts, reputationCounts] = await Promise.all([
    db.select({ total: count() }).from(employers),
    db.select({ status: employees.status, count: count() }).from(employees).groupBy(employees.status),
    db.select({ status: payrollRuns.status, count: count() }).from(payrollRuns).groupBy(payrollRuns.status),
    db
      .select({
        rail: payments.rail,
        status: payments.status,
        count: count(),
        amount: sql<string>`coalesce(sum(${payments.amount}), 0)::text`,
      })
      .from(payments)
      .groupBy(payments.rail, payments.status)
      .orderBy(payments.rail, payments.status),
    db.select({ status: emailOutbox.status, count: count() }).from(emailOutbox).groupBy(emailOutbox.status),
    db.select({ status: reputationWrites.status, count: count() }).from(reputationWrites).groupBy(reputationWrites.status),
  ]);
  return {
    employers: employerCount[0]?.total ?? 0,
    employees: employeeCounts,
    payrollRuns: runCounts,
    payments: paymentCounts.map((row) => ({ ...row, amount: BigInt(row.amount) })),
    emails: emailCounts,
    reputationWrites: reputationCounts,
  };
}

export type AdminEmployerRow = typeof employers.$inferSelect & { activeEmployees: number };

export async function listEmployers(db: Db, page: Page): Promise<Counted<AdminEmployerRow>> {
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

export type PaymentRow = typeof payments.$inferSelect;

export async function listPayments(db: Db, page: Page): Promise<Counted<PaymentRow>> {
  const [rows, totals] = await Promise.all([
    db.select().from(payments).orderBy(desc(payments.createdAt), desc(payments.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(payments),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export type EmailRow = typeof emailOutbox.$inferSelect;

export async function listEmails(db: Db, page: Page): Promise<Counted<EmailRow>> {
  const [rows, totals] = await Promise.all([
    db.select().from(emailOutbox).orderBy(desc(emailOutbox.createdAt), desc(emailOutbox.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(emailOutbox),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export type ReputationWriteRow = typeof reputationWrites.$inferSelect;

/** Failed writes first (they need an operator), then newest first. */
export async function listReputationWrites(db: Db, page: Page): Promise<Counted<ReputationWriteRow>> {
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(reputationWrites)
      .orderBy(sql`${reputationWrites.status} = 'failed' DESC`, desc(reputationWrites.createdAt), desc(reputationWrites.id))
      .offset(page.offset)
      .limit(page.limit),
    db.select({ total: count() }).from(reputationWrites),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export type AuditRow = typeof auditLog.$inferSelect;

export async function listAudit(db: Db, page: Page, employerId?: string): Promise<Counted<AuditRow>> {
  const where = employerId === undefined ? undefined : eq(auditLog.employerId, employerId);
  const [rows, totals] = await Promise.all([
    db.select().from(auditLog).where(where).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(auditLog).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}
