/** Response shapes of the routes the core dashboard pages read (the zod schemas in src/features are the truth). */

export interface Employee {
  id: string;
  employer_id: string;
  email: string;
  full_name: string;
  wallet_address: string | null;
  solana_wallet_address: string | null;
  annual_salary_usd: string;
  department: string | null;
  cost_centre: string | null;
  status: 'active' | 'removed';
  payroll_paused: boolean;
  manual_review_status: 'none' | 'pending' | 'approved' | 'rejected';
  manual_review_note: string | null;
  manual_reviewed_at: string | null;
  kyc_status: string;
  linked_user: boolean;
  invited_at: string | null;
  removed_at: string | null;
  created_at: string;
}

export interface Team {
  employer_id: string;
  employees: Employee[];
  page: number;
  limit: number;
  total: number;
}

export type RunStatus = 'draft' | 'submitted' | 'confirmed' | 'failed';

export interface PayrollRun {
  id: string;
  employer_id: string;
  status: RunStatus;
  total_amount_usd: string;
  recipient_count: number;
  pay_period_start: string | null;
  pay_period_end: string | null;
  submitted_by: 'owner' | 'agent' | null;
  tx_hash: string | null;
  block_number: number | null;
  failure_reason: string | null;
  created_at: string;
  submitted_at: string | null;
  finalized_at: string | null;
}

export interface Runs {
  employer_id: string;
  runs: PayrollRun[];
  page: number;
  limit: number;
  total: number;
}

export interface Transaction {
  id: string;
  payroll_run_id: string;
  employee_id: string;
  chain: 'tempo' | 'solana';
  wallet_address: string;
  amount_usd: string;
  status: 'pending' | 'submitted' | 'paid' | 'failed' | 'policy_rejected';
  reason: string | null;
  tx_hash: string | null;
  memo: string | null;
  block_number: number | null;
  created_at: string;
  finalized_at: string | null;
}

export interface Transactions {
  transactions: Transaction[];
  page: number;
  limit: number;
  total: number;
}

export interface Treasury {
  employer_id: string;
  employer_account_id: string;
  token: string;
  available_usd: string;
  locked_usd: string;
  total_usd: string;
}

export interface YieldSummary {
  employer_id: string;
  apy_bps: number;
  apy_percent: number;
  sources: { name: string; apy_bps: number; allocation_bps: number }[];
  available_usd: string;
  locked_usd: string;
  total_usd: string;
  projected_annual_yield_usd: string;
}

export interface Employer {
  id: string;
  name: string;
  admin_wallet: string | null;
  employer_account_id: string | null;
  tip403_policy_id: number | null;
  created_at: string;
  created: boolean;
}

export interface ComplianceSummary {
  employer_id: string;
  summary: { employees: number; checked: number; clear: number; blocked: number; unchecked: number; blocklist_entries: number };
  employees: {
    id: string;
    full_name: string;
    wallet_address: string | null;
    latest_result: string | null;
    latest_checked_at: string | null;
    manual_review_status: string;
    blocked_now: string | null;
  }[];
}

export interface DevNetwork {
  network: string;
  chain_id: number | null;
  rpc_url: string;
  contracts: Record<string, string>;
}
