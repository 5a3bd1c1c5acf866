import type { Db } from '../../db/client.js';
import { latestEvent, type Listing } from '../compliance/index.js';
import { findEmployee, findEmployeesByIds } from '../employers/index.js';
import { itemsOfRun, type ItemRow, type RunRow } from '../payroll/index.js';

/**
 * The read model behind the AI routes: the payroll and compliance ledgers and the employees, each
 * read through its owner's queries. It writes nothing.
 */

export { findEmployerRun, lastPaidWallets, recentPaidAmounts } from '../payroll/index.js';
export { listingsNow } from '../compliance/index.js';
export type { Listing, RunRow };

export interface RunItem {
  employeeId: string;
  fullName: string;
  annualSalary: bigint;
  chain: 'tempo' | 'solana';
  walletAddress: string;
  amount: bigint;
  status: ItemRow['status'];
}

/** The run's items with their employee's name and salary, in item order. */
export async function runItems(db: Db, run: RunRow): Promise<RunItem[]> {
  const items = await itemsOfRun(db, run.id);
  const employees = await findEmployeesByIds(db, run.employerId, [...new Set(items.map((item) => item.employeeId))]);
  const byId = new Map(employees.map((employee) => [employee.id, employee]));
  return items.flatMap(({ employeeId, chain, walletAddress, amount, status }) => {
    const employee = byId.get(employeeId);
    return employee ? [{ employeeId, fullName: employee.fullName, annualSalary: employee.annualSalary, chain, walletAddress, amount, status }] : [];
  });
}

export interface LatestCheck {
  result: 'CLEAR' | 'BLOCKED';
  policyId: bigint;
  riskScore: number;
  reasons: unknown;
  checkedAt: Date;
  /** The employee the wallet was checked for, and whether a new wallet of theirs waits for review. */
  employee: { id: string; name: string; reviewPending: boolean } | null;
}

/**
 * The employer's latest compliance event for the (lower-cased) wallet, with the name of the
 * employee it was checked for.
 */
export async function latestCheck(db: Db, employerId: string, wallet: string): Promise<LatestCheck | null> {
  const event = await latestEvent(db, employerId, wallet);
  if (!event) return null;
  const employee = event.employeeId ? await findEmployee(db, event.employeeId) : undefined;
  const { result, policyId, riskScore, reasons, checkedAt } = event;
  return {
    result,
    policyId,
    riskScore,
    reasons,
    checkedAt,
    employee: employee ? { id: employee.id, name: employee.fullName, reviewPending: employee.manualReviewStatus === 'pending' } : null,
  };
}
