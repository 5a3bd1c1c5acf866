import { formatDate } from '../../../lib/format';
import { formatUsd } from '../../../lib/money';
import { JsonDetails, Mono, StatePill, type Column } from './DataTable';

/** `GET /api/admin?scope=<list scope>` answers a page of items. */
export interface AdminPage<T> {
  scope: string;
  page: number;
  limit: number;
  total: number;
  items: T[];
  /** jobs / failed_jobs only: false before the job runner first started on this database. */
  available?: boolean;
}

export interface EmployerRow {
  id: string;
  name: string;
  owner_user_id: string;
  admin_wallet: string | null;
  employer_account_id: string | null;
  tip403_policy_id: number | null;
  agent_key_prefix: string | null;
  active_employees: number;
  created_at: string;
}

export interface PayrollRunRow {
  id: string;
  employer_id: string;
  employer_name: string | null;
  status: string;
  total_usd: string;
  recipient_count: number;
  submitted_by: string | null;
  tx_hash: string | null;
  block_number: number | null;
  failure_reason: string | null;
  created_at: string;
  submitted_at: string | null;
  finalized_at: string | null;
}

export interface EscrowRow {
  id: string;
  employer_id: string;
  status: string;
  amount_usd: string;
  poster_agent_identifier: string | null;
  worker_agent_identifier: string | null;
  worker_wallet_address: string | null;
  worker_reputation_tier: string | null;
  expires_at: string;
  deliverable_uri: string | null;
  deliverable_bytes: number | null;
  validator_verdict: string | null;
  validator_confidence: number | null;
  sanitizer_flagged: boolean | null;
  escalated_at: string | null;
  escalation_reason: string | null;
  created_at: string;
}

export interface JobRow {
  id: string;
  name: string;
  state: string;
  retry_count: number;
  retry_limit: number;
  singleton_key: string | null;
  created_at: string | null;
  start_after: string | null;
  started_at: string | null;
  completed_at: string | null;
  error?: unknown;
  data?: unknown;
}

export interface JobsPage extends AdminPage<JobRow> {
  counts?: { name: string; state: string; count: number }[];
}

export interface EmailRow {
  id: string;
  to_address: string;
  subject: string;
  body_text: string;
  status: string;
  attempts: number;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface AuditRow {
  id: string;
  actor_user_id: string | null;
  actor_kind: string;
  action: string;
  employer_id: string | null;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
  request_id: string | null;
  created_at: string;
}

export interface Overview {
  scope: 'overview';
  generated_at: string;
  counts: {
    employers: number;
    employees: Record<string, number>;
    payroll_runs: Record<string, number>;
    payments: { rail: string; status: string; count: number; amount_usd: string }[];
    emails: Record<string, number>;
    reputation_writes: Record<string, number>;
  };
}

const usd = (value: string | null | undefined) => (value ? formatUsd(value) : '—');
const text = (value: string | number | null | undefined) => (value === null || value === undefined || value === '' ? <span className="muted">—</span> : String(value));

export const EMPLOYER_COLUMNS: Column<EmployerRow>[] = [
  { key: 'name', label: 'Employer', render: (r) => r.name },
  { key: 'owner', label: 'Owner', render: (r) => <Mono value={r.owner_user_id} /> },
  { key: 'employees', label: 'Active employees', render: (r) => r.active_employees, num: true },
  { key: 'account', label: 'Treasury account', render: (r) => text(r.employer_account_id) },
  { key: 'wallet', label: 'Admin wallet', render: (r) => <Mono value={r.admin_wallet} /> },
  { key: 'key', label: 'Agent key', render: (r) => (r.agent_key_prefix ? <code className="ap-mono">{r.agent_key_prefix}…</code> : text(null)) },
  { key: 'created', label: 'Created', render: (r) => formatDate(r.created_at) },
  { key: 'id', label: 'Id', render: (r) => <Mono value={r.id} /> },
];

export const PAYROLL_RUN_COLUMNS: Column<PayrollRunRow>[] = [
  { key: 'created', label: 'Created', render: (r) => formatDate(r.created_at) },
  { key: 'employer', label: 'Employer', render: (r) => r.employer_name ?? <Mono value={r.employer_id} /> },
  { key: 'status', label: 'Status', render: (r) => <StatePill state={r.status} /> },
  { key: 'total', label: 'Total', render: (r) => usd(r.total_usd), num: true },
  { key: 'recipients', label: 'Recipients', render: (r) => r.recipient_count, num: true },
  { key: 'by', label: 'Submitted by', render: (r) => text(r.submitted_by) },
  { key: 'tx', label: 'Transaction', render: (r) => <Mono value={r.tx_hash} /> },
  { key: 'finalized', label: 'Finalized', render: (r) => formatDate(r.finalized_at) },
  { key: 'failure', label: 'Failure', render: (r) => text(r.failure_reason) },
];

export const ESCROW_COLUMNS: Column<EscrowRow>[] = [
  { key: 'created', label: 'Created', render: (r) => formatDate(r.created_at) },
  { key: 'status', label: 'Status', render: (r) => <StatePill state={r.status} /> },
  { key: 'amount', label: 'Amount', render: (r) => usd(r.amount_usd), num: true },
  { key: 'poster', label: 'Poster agent', render: (r) => <Mono value={r.poster_agent_identifier} /> },
  { key: 'worker', label: 'Worker agent', render: (r) => <Mono value={r.worker_agent_identifier} /> },
  { key: 'tier', label: 'Worker tier', render: (r) => text(r.worker_reputation_tier) },
  {
    key: 'verdict',
    label: 'Verdict',
    render: (r) => (r.validator_verdict ? `${r.validator_verdict}${r.validator_confidence === null ? '' : ` (${r.validator_confidence}%)`}` : text(null)),
  },
  { key: 'escalated', label: 'Escalated', render: (r) => (r.escalated_at ? `${formatDate(r.escalated_at)}${r.escalation_reason ? `: ${r.escalation_reason}` : ''}` : text(null)) },
  { key: 'bytes', label: 'Deliverable bytes', render: (r) => text(r.deliverable_bytes), num: true },
  { key: 'expires', label: 'Expires', render: (r) => formatDate(r.expires_at) },
  { key: 'id', label: 'Id', render: (r) => <Mono value={r.id} /> },
];

export const JOB_COLUMNS: Column<JobRow>[] = [
  { key: 'name', label: 'Queue', render: (r) => r.name },
  { key: 'state', label: 'State', render: (r) => <StatePill state={r.state} /> },
  { key: 'retries', label: 'Retries', render: (r) => `${r.retry_count} / ${r.retry_limit}`, num: true },
  { key: 'created', label: 'Created', render: (r) => formatDate(r.created_at) },
  { key: 'started', label: 'Started', render: (r) => formatDate(r.started_at) },
  { key: 'completed', label: 'Completed', render: (r) => formatDate(r.completed_at) },
  { key: 'id', label: 'Id', render: (r) => <Mono value={r.id} /> },
];

export const FAILED_JOB_COLUMNS: Column<JobRow>[] = [
  ...JOB_COLUMNS.filter((c) => c.key !== 'started'),
  { key: 'error', label: 'Last error', render: (r) => <JsonDetails value={r.error} summary="Error" /> },
  { key: 'data', label: 'Input', render: (r) => <JsonDetails value={r.data} summary="Input" /> },
];

export const EMAIL_COLUMNS: Column<EmailRow>[] = [
  { key: 'created', label: 'Queued', render: (r) => formatDate(r.created_at) },
  { key: 'to', label: 'To', render: (r) => r.to_address },
  { key: 'subject', label: 'Subject', render: (r) => r.subject },
  { key: 'status', label: 'Status', render: (r) => <StatePill state={r.status} /> },
  { key: 'attempts', label: 'Attempts', render: (r) => r.attempts, num: true },
  { key: 'sent', label: 'Sent', render: (r) => formatDate(r.sent_at) },
  { key: 'error', label: 'Last error', render: (r) => text(r.last_error) },
  { key: 'body', label: 'Body', render: (r) => <JsonDetails value={r.body_text} summary="Body" /> },
];

export const AUDIT_COLUMNS: Column<AuditRow>[] = [
  { key: 'at', label: 'When', render: (r) => formatDate(r.created_at) },
  { key: 'action', label: 'Action', render: (r) => <code className="ap-mono">{r.action}</code> },
  { key: 'actor', label: 'Actor', render: (r) => (r.actor_user_id ? `${r.actor_user_id} (${r.actor_kind})` : r.actor_kind) },
  { key: 'target', label: 'Target', render: (r) => (r.target_type ? <>{r.target_type} <Mono value={r.target_id} /></> : text(null)) },
  { key: 'employer', label: 'Employer', render: (r) => <Mono value={r.employer_id} /> },
  { key: 'details', label: 'Details', render: (r) => <JsonDetails value={r.details} summary="Details" /> },
  { key: 'request', label: 'Request id', render: (r) => <Mono value={r.request_id} /> },
];
