/**
 * SQL of the platform admin's operations view over the platform's own tables (payments, audit log)
 * and pg-boss's job table. The features' tables are read through their owners' index.ts. It never
 * writes.
 */
import { count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { Counted, OffsetPage } from '../../db/paging.js';
import { payments } from '../../payments/tables.js';
import { auditLog } from '../../audit/tables.js';

/** Payments by rail and status, with their sum. */
export async function paymentCounts(db: Db): Promise<{ rail: string; status: string; count: number; amount: bigint }[]> {
  const rows = await db
    .select({
      rail: payments.rail,
      status: payments.status,
      count: count(),
      amount: sql<string>`coalesce(sum(${payments.amount}), 0)::text`,
    })
    .from(payments)
    .groupBy(payments.rail, payments.status)
    .orderBy(payments.rail, payments.status);
  return rows.map((row) => ({ ...row, amount: BigInt(row.amount) }));
}

export type PaymentRow = typeof payments.$inferSelect;

export async function listPayments(db: Db, page: OffsetPage): Promise<Counted<PaymentRow>> {
  const [rows, totals] = await Promise.all([
    db.select().from(payments).orderBy(desc(payments.createdAt), desc(payments.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(payments),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
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
export async function listJobs(db: Db, page: OffsetPage, failedOnly: boolean): Promise<Counted<JobRow>> {
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

export async function listAudit(db: Db, page: OffsetPage, employerId?: string): Promise<Counted<AuditRow>> {
  const where = employerId === undefined ? undefined : eq(auditLog.employerId, employerId);
  const [rows, totals] = await Promise.all([
    db.select().from(auditLog).where(where).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(auditLog).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}
