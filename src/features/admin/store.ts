/**
 * SQL of the platform admin's operations view. Unlike every other feature, this store reads other
 * features' tables directly (employers, employees, payroll runs, escrows, payments, email outbox,
 * reputation writes, audit log, and pg-boss's job table): the admin view is a read-only window on the whole database for operators, and going
 * through each feature's service would only add round trips. It never writes.
 */
import { count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { payments } from '../../payments/tables.js';
import { auditLog } from '../../audit/tables.js';
import { emailOutbox } from '../email/tables.js';
import { employees, employers } from '../employers/tables.js';
import { escrows } from '../escrow/tables.js';
import { payrollRuns } from '../payroll/tables.js';
import { reputationWrites } from '../reputation/tables.js';

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

/** Failed writes first (they need an operator), then newest first; `failedOnly`: the failed ones alone. */
export async function listReputationWrites(db: Db, page: Page, failedOnly = false): Promise<Counted<ReputationWriteRow>> {
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

export type AdminPayrollRunRow = typeof payrollRuns.$inferSelect & { employerName: string };

export async function listPayrollRuns(db: Db, page: Page, employerId?: string): Promise<Counted<AdminPayrollRunRow>> {
  const where = employerId === undefined ? undefined : eq(payrollRuns.employerId, employerId);
  const [rows, totals] = await Promise.all([
    db
      .select({ run: payrollRuns, employerName: employers.name })
      .from(payrollRuns)
      .innerJoin(employers, eq(employers.id, payrollRuns.employerId))
      .where(where)
      .orderBy(desc(payrollRuns.createdAt), desc(payrollRuns.id))
      .offset(page.offset)
      .limit(page.limit),
    db.select({ total: count() }).from(payrollRuns).where(where),
  ]);
  return { rows: rows.map((r) => ({ ...r.run, employerName: r.employerName })), total: totals[0]?.total ?? 0 };
}

/** Escrow metadata. The deliverable's bytes are never read: only their size. */
const escrowColumns = {
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

const escrowPage = (db: Db, page: Page, where: SQL | undefined) =>
  db.select(escrowColumns).from(escrows).where(where).orderBy(desc(escrows.createdAt), desc(escrows.id)).offset(page.offset).limit(page.limit);
export type AdminEscrowRow = Awaited<ReturnType<typeof escrowPage>>[number];

export async function listEscrows(db: Db, page: Page, employerId?: string): Promise<Counted<AdminEscrowRow>> {
  const where = employerId === undefined ? undefined : eq(escrows.employerId, employerId);
  const [rows, totals] = await Promise.all([
    escrowPage(db, page, where),
    db.select({ total: count() }).from(escrows).where(where),
  ]);
  return { rows: rows.map((r) => ({ ...r, deliverableBytes: r.deliverableBytes === null ? null : Number(r.deliverableBytes) })), total: totals[0]?.total ?? 0 };
}

// ---- pg-boss jobs (schema `pgboss`, pg-boss 12.35: table pgboss.job, state enum) ---------------

/** Timestamps come back as ISO strings (raw queries bypass drizzle's column mapping). */
export type JobRow = {
  id: string;
  name: string;
  state: string;
  retry_count: number;
  retry_limit: number;
  singleton_key: string | null;
  created_on: string;
  start_after: string;
  started_on: string | null;
  completed_on: string | null;
  error: string | null;
  data: unknown;
};

const isoOf = (column: string) => sql.raw(`to_char(j.${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`);

/** Whether pg-boss has created its tables here (the runner started at least once). */
export async function jobsAvailable(db: Db): Promise<boolean> {
  const result = await db.execute<{ present: boolean }>(sql`SELECT to_regclass('pgboss.job') IS NOT NULL AS present`);
  return result.rows[0]?.present === true;
}

export async function jobCounts(db: Db): Promise<{ name: string; state: string; count: number }[]> {
  const result = await db.execute<{ name: string; state: string; count: number }>(
    sql`SELECT name, state::text AS state, count(*)::int AS count FROM pgboss.job GROUP BY name, state ORDER BY name, state`,
  );
  return result.rows;
}

/** Jobs newest first; `failedOnly`: failed ones, most recently failed first, with their error and input. */
export async function listJobs(db: Db, page: Page, failedOnly: boolean): Promise<Counted<JobRow>> {
  const where = failedOnly ? sql`WHERE state = 'failed'` : sql``;
  // Qualified: unqualified names would sort by the text columns of the same name in the output.
  const order = failedOnly ? sql`j.completed_on DESC NULLS LAST, j.created_on DESC, j.id DESC` : sql`j.created_on DESC, j.id DESC`;
  const extra = failedOnly
    ? sql`, left(coalesce(j.output->>'message', j.output::text), 1000) AS error, j.data`
    : sql`, NULL::text AS error, NULL::jsonb AS data`;
  const [rows, totals] = await Promise.all([
    db.execute<JobRow>(
      sql`SELECT j.id, j.name, j.state::text AS state, j.retry_count, j.retry_limit, j.singleton_key,
            ${isoOf('created_on')}, ${isoOf('start_after')}, ${isoOf('started_on')}, ${isoOf('completed_on')} ${extra}
          FROM pgboss.job j ${where} ORDER BY ${order} OFFSET ${page.offset} LIMIT ${page.limit}`,
    ),
    db.execute<{ total: number }>(sql`SELECT count(*)::int AS total FROM pgboss.job ${where}`),
  ]);
  return { rows: rows.rows, total: totals.rows[0]?.total ?? 0 };
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
