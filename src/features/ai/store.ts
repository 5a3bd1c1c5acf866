import { and, asc, desc, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { complianceEvents, walletBlocklist } from '../compliance/tables.js';
import { employees } from '../employers/tables.js';
import { paymentItems, payrollRuns } from '../payroll/tables.js';

/**
 * Read-only queries behind the AI routes. They read the payroll and compliance ledgers directly:
 * the analyses need joins and windows no other feature's service offers, and they write nothing.
 */

/** How many earlier paid items per employee the spike rule compares with. */
export const HISTORY_DEPTH = 6;

export type RunRow = typeof payrollRuns.$inferSelect;

/** The run only if it belongs to this employer. */
export async function findEmployerRun(db: Db, employerId: string, runId: string): Promise<RunRow | null> {
  const rows = await db.select().from(payrollRuns).where(and(eq(payrollRuns.id, runId), eq(payrollRuns.employerId, employerId)));
  return rows[0] ?? null;
}

export interface RunItem {
  employeeId: string;
  fullName: string;
  annualSalary: bigint;
  chain: 'tempo' | 'solana';
  walletAddress: string;
  amount: bigint;
  status: (typeof paymentItems.$inferSelect)['status'];
}

/** The run's items with their employee's name and salary, in item order. */
export function runItems(db: Db, runId: string): Promise<RunItem[]> {
  return db
    .select({
      employeeId: paymentItems.employeeId,
      fullName: employees.fullName,
      annualSalary: employees.annualSalary,
      chain: paymentItems.chain,
      walletAddress: paymentItems.walletAddress,
      amount: paymentItems.amount,
      status: paymentItems.status,
    })
    .from(paymentItems)
    .innerJoin(employees, eq(employees.id, paymentItems.employeeId))
    .where(eq(paymentItems.runId, runId))
    .orderBy(asc(paymentItems.createdAt), asc(paymentItems.id));
}

/** Paid items of these employees from runs other than `run` and created before it. */
const paidBefore = (run: RunRow, employeeIds: string[]) => sql`
  p.employer_id = ${run.employerId}::uuid
  AND p.employee_id = ANY(${sql.param(employeeIds)}::uuid[])
  AND p.status = 'paid'
  AND p.run_id <> ${run.id}::uuid
  AND p.created_at < ${run.createdAt.toISOString()}::timestamptz`;

/** Each employee's last HISTORY_DEPTH paid amounts before the run (base units). */
export async function recentPaidAmounts(db: Db, run: RunRow, employeeIds: string[]): Promise<Map<string, bigint[]>> {
  const history = new Map<string, bigint[]>();
  if (employeeIds.length === 0) return history;
  const { rows } = await db.execute<{ employee_id: string; amount: string }>(sql`
    SELECT employee_id, amount::text AS amount
    FROM (
      SELECT p.employee_id, p.amount,
             row_number() OVER (PARTITION BY p.employee_id ORDER BY p.created_at DESC, p.id DESC) AS n
      FROM payment_items p
      WHERE ${paidBefore(run, employeeIds)}
    ) recent
    WHERE n <= ${HISTORY_DEPTH}`);
  for (const row of rows) history.set(row.employee_id, [...(history.get(row.employee_id) ?? []), BigInt(row.amount)]);
  return history;
}

/** The wallet of each employee's latest paid item before the run, per chain: key `employee:chain`. */
export async function lastPaidWallets(db: Db, run: RunRow, employeeIds: string[]): Promise<Map<string, string>> {
  if (employeeIds.length === 0) return new Map();
  const { rows } = await db.execute<{ employee_id: string; chain: string; wallet_address: string }>(sql`
    SELECT DISTINCT ON (p.employee_id, p.chain) p.employee_id, p.chain, p.wallet_address
    FROM payment_items p
    WHERE ${paidBefore(run, employeeIds)}
    ORDER BY p.employee_id, p.chain, p.created_at DESC, p.id DESC`);
  return new Map(rows.map((r) => [`${r.employee_id}:${r.chain}`, r.wallet_address]));
}

export interface LatestCheck {
  result: 'CLEAR' | 'BLOCKED';
  policyId: bigint;
  riskScore: number;
  reasons: unknown;
  checkedAt: Date;
  employeeName: string | null;
}

/**
 * The employer's latest compliance event for the (lower-cased) wallet; a tie at the same instant
 * counts as BLOCKED, as in the compliance list.
 */
export async function latestCheck(db: Db, employerId: string, wallet: string): Promise<LatestCheck | null> {
  const rows = await db
    .select({
      result: complianceEvents.result,
      policyId: complianceEvents.policyId,
      riskScore: complianceEvents.riskScore,
      reasons: complianceEvents.reasons,
      checkedAt: complianceEvents.checkedAt,
      employeeName: employees.fullName,
    })
    .from(complianceEvents)
    .leftJoin(employees, eq(employees.id, complianceEvents.employeeId))
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
