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
const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const text = (value: string | number | null | undefined) => (value === null || value === undefined || value === '' ? <span className="muted">—</span> : String(value));

export const EMPLOYER_COLUMNS: Column<EmployerRow>[] = [
  { key: 'name', label: 'Employer', value: (r) => r.name, render: (r) => r.name },
  { key: 'owner', label: 'Owner', value: (r) => r.owner_user_id, render: (r) => <Mono value={r.owner_user_id} /> },
  { key: 'employees', label: 'Active employees', value: (r) => r.active_employees, render: (r) => r.active_employees, num: true },
  { key: 'account', label: 'Treasury account', value: (r) => r.employer_account_id, render: (r) => text(r.employer_account_id) },
  { key: 'wallet', label: 'Admin wallet', value: (r) => r.admin_wallet, render: (r) => <Mono value={r.admin_wallet} /> },
  { key: 'key', label: 'Agent key', render: (r) => (r.agent_key_prefix ? <code className="ap-mono">{r.agent_key_prefix}…</code> : text(null)) },
  { key: 'created', label: 'Created', value: (r) => r.created_at, render: (r) => formatDate(r.created_at) },
  { key: 'id', label: 'Id', value: (r) => r.id, render: (r) => <Mono value={r.id} /> },
];

export const PAYROLL_RUN_COLUMNS: Column<PayrollRunRow>[] = [
  { key: 'created', label: 'Created', value: (r) => r.created_at, render: (r) => formatDate(r.created_at) },
  { key: 'employer', label: 'Employer', value: (r) => r.employer_name ?? r.employer_id, render: (r) => r.employer_name ?? <Mono value={r.employer_id} /> },
  { key: 'status', label: 'Status', value: (r) => r.status, render: (r) => <StatePill state={r.status} /> },
  { key: 'total', label: 'Total', value: (r) => r.total_usd, render: (r) => usd(r.total_usd), num: true },
  { key: 'recipients', label: 'Recipients', value: (r) => r.recipient_count, render: (r) => r.recipient_count, num: true },
  { key: 'by', label: 'Submitted by', value: (r) => r.submitted_by, render: (r) => text(r.submitted_by) },
  { key: 'tx', label: 'Transaction', value: (r) => r.tx_hash, render: (r) => <Mono value={r.tx_hash} /> },
  { key: 'finalized', label: 'Finalized', value: (r) => r.finalized_at, render: (r) => formatDate(r.finalized_at) },
  { key: 'failure', label: 'Failure', value: (r) => r.failure_reason, render: (r) => text(r.failure_reason) },
];

export const ESCROW_COLUMNS: Column<EscrowRow>[] = [
  { key: 'created', label: 'Created', value: (r) => r.created_at, render: (r) => formatDate(r.created_at) },
  { key: 'status', label: 'Status', value: (r) => r.status, render: (r) => <StatePill state={r.status} /> },
  { key: 'amount', label: 'Amount', value: (r) => r.amount_usd, render: (r) => usd(r.amount_usd), num: true },
  { key: 'poster', label: 'Poster agent', value: (r) => r.poster_agent_identifier, render: (r) => <Mono value={r.poster_agent_identifier} /> },
  { key: 'worker', label: 'Worker agent', value: (r) => r.worker_agent_identifier, render: (r) => <Mono value={r.worker_agent_identifier} /> },
  { key: 'tier', label: 'Worker tier', value: (r) => r.worker_reputation_tier, render: (r) => text(r.worker_reputation_tier) },
  {
    key: 'verdict',
    label: 'Verdict',
    value: (r) => r.validator_verdict,
    render: (r) => (r.validator_verdict ? `${r.validator_verdict}${r.validator_confidence === null ? '' : ` (${r.validator_confidence}%)`}` : text(null)),
  },
  { key: 'escalated', label: 'Escalated', render: (r) => (r.escalated_at ? `${formatDate(r.escalated_at)}${r.escalation_reason ? `: ${r.escalation_reason}` : ''}` : text(null)) },
  { key: 'bytes', label: 'Deliverable bytes', value: (r) => r.deliverable_bytes, render: (r) => text(r.deliverable_bytes), num: true },
  { key: 'expires', label: 'Expires', value: (r) => r.expires_at, render: (r) => formatDate(r.expires_at) },
  { key: 'id', label: 'Id', value: (r) => r.id, render: (r) => <Mono value={r.id} /> },
];

export const JOB_COLUMNS: Column<JobRow>[] = [
  { key: 'name', label: 'Queue', value: (r) => r.name, render: (r) => r.name },
  { key: 'state', label: 'State', value: (r) => r.state, render: (r) => <StatePill state={r.state} /> },
  { key: 'retries', label: 'Retries', value: (r) => r.retry_count, render: (r) => `${r.retry_count} / ${r.retry_limit}`, num: true },
  { key: 'created', label: 'Created', value: (r) => r.created_at, render: (r) => formatDate(r.created_at) },
  { key: 'started', label: 'Started', value: (r) => r.started_at, render: (r) => formatDate(r.started_at) },
  { key: 'completed', label: 'Completed', value: (r) => r.completed_at, render: (r) => formatDate(r.completed_at) },
  { key: 'id', label: 'Id', value: (r) => r.id, render: (r) => <Mono value={r.id} /> },
];

export const FAILED_JOB_COLUMNS: Column<FailedJobRow>[] = [
  ...JOB_COLUMNS.filter((c) => c.key !== 'started'),
  { key: 'error', label: 'Last error', value: (r) => json(r.error), render: (r) => <JsonDetails value={r.error} summary="Error" /> },
  { key: 'data', label: 'Input', value: (r) => json(r.data), render: (r) => <JsonDetails value={r.data} summary="Input" /> },
];

export const EMAIL_COLUMNS: Column<EmailRow>[] = [
  { key: 'created', label: 'Queued', value: (r) => r.created_at, render: (r) => formatDate(r.created_at) },
  { key: 'to', label: 'To', value: (r) => r.to_address, render: (r) => r.to_address },
  { key: 'subject', label: 'Subject', value: (r) => r.subject, render: (r) => r.subject },
  { key: 'status', label: 'Status', value: (r) => r.status, render: (r) => <StatePill state={r.status} /> },
  { key: 'attempts', label: 'Attempts', value: (r) => r.attempts, render: (r) => r.attempts, num: true },
  { key: 'sent', label: 'Sent', value: (r) => r.sent_at, render: (r) => formatDate(r.sent_at) },
  { key: 'error', label: 'Last error', value: (r) => r.last_error, render: (r) => text(r.last_error) },
  { key: 'body', label: 'Body', value: (r) => r.body_text, render: (r) => <JsonDetails value={r.body_text} summary="Body" /> },
];

const actor = (r: AuditRow) => (r.actor_user_id ? `${r.actor_user_id} (${r.actor_kind})` : r.actor_kind);

export const AUDIT_COLUMNS: Column<AuditRow>[] = [
  { key: 'at', label: 'When', value: (r) => r.created_at, render: (r) => formatDate(r.created_at) },
  { key: 'action', label: 'Action', value: (r) => r.action, render: (r) => <code className="ap-mono">{r.action}</code> },
  { key: 'actor', label: 'Actor', value: actor, render: actor },
  { key: 'target', label: 'Target', value: (r) => (r.target_type ? `${r.target_type} ${r.target_id ?? ''}`.trim() : null), render: (r) => (r.target_type ? <>{r.target_type} <Mono value={r.target_id} /></> : text(null)) },
  { key: 'employer', label: 'Employer', value: (r) => r.employer_id, render: (r) => <Mono value={r.employer_id} /> },
  { key: 'details', label: 'Details', value: (r) => json(r.details), render: (r) => <JsonDetails value={r.details} summary="Details" /> },
  { key: 'request', label: 'Request id', value: (r) => r.request_id, render: (r) => <Mono value={r.request_id} /> },
];
