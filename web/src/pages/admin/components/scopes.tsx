import type { Schema } from '../../../lib/api';
import { formatDate } from '../../../lib/format';
import { formatUsd } from '../../../lib/money';
import { JsonDetails, Mono, StatePill, type Column } from '../../../components/DataTable';

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

// The rows of each scope, from the API's own schemas.
export type EmployerRow = Schema<'AdminEmployers'>['items'][number];
export type PayrollRunRow = Schema<'AdminPayrollRuns'>['items'][number];
export type EscrowRow = Schema<'AdminEscrows'>['items'][number];
export type JobRow = Schema<'AdminJobs'>['items'][number];
type FailedJobRow = Schema<'AdminFailedJobs'>['items'][number];
export type JobsPage = Schema<'AdminJobs'>;
export type EmailRow = Schema<'AdminEmails'>['items'][number];
export type AuditRow = Schema<'AdminAudit'>['items'][number];
export type Overview = Schema<'AdminOverview'>;

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

export const FAILED_JOB_COLUMNS: Column<FailedJobRow>[] = [
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
