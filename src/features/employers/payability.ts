import type { EmployeeRow } from './store.js';

/**
 * Why payroll cannot pay this employee on this chain now, or null when it can: the one place the
 * rule lives. Payroll refuses a run with it (EMPLOYEE_NOT_PAYABLE) and the team answer carries it
 * (`unpayable_reason`), so the web app greys a row for the same reason the server would refuse it.
 */
export function unpayableReason(employee: EmployeeRow, chain: 'tempo' | 'solana' = 'tempo'): string | null {
  if (employee.status !== 'active') return 'removed';
  if (employee.payrollPaused) return 'payroll paused';
  if (employee.manualReviewStatus === 'pending') return 'new wallet awaiting review';
  if (employee.manualReviewStatus === 'rejected') return 'wallet rejected in review';
  if (chain === 'tempo' && !employee.walletAddress) return 'no wallet address';
  if (chain === 'solana' && !employee.solanaWalletAddress) return 'no Solana wallet address';
  return null;
}
