import type { Database, Db } from '../../db/client.js';
import type { OffsetPage } from '../../db/paging.js';
import { sanctionsState } from '../compliance/index.js';
import { outboxCounts, outboxPage, type OutboxRow } from '../email/index.js';
import { EMPLOYEE_STATUSES, employerCounts, employerNames, employersPage, type EmployerWithHeadcount } from '../employers/index.js';
import { escrowMetadataPage, type EscrowMetadataRow } from '../escrow/index.js';
import { PAYROLL_RUN_STATUSES, payrollRunCounts, payrollRunsPage, type RunRow } from '../payroll/index.js';
import { REPUTATION_WRITE_STATUSES, reputationWriteCounts, reputationWritesPage, type ReputationWriteRow } from '../reputation/index.js';
import { badRequest } from '../../errors.js';
import { formatUsd } from '../../money.js';
import { presentForAdmin } from '../announcements/index.js';
import { listAnnouncements } from '../announcements/index.js';
import type { DependencyHealth } from '../ops/index.js';
import { EMPLOYER_FILTERED_SCOPES, type AdminScope } from './schema.js';
import * as store from './store.js';

const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const;

export interface AdminQuery {
  scope: AdminScope;
  page: number;
  limit: number;
  employerId?: string | undefined;
}

/** Zero for every known status, then the counts found (an unexpected status still shows). */
function byStatus(known: readonly string[], rows: { status: string; count: number }[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(known.map((status) => [status, 0]));
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** An inline deliverable (`data:` URI) carries the content itself: show only what precedes the comma. */
export function redactDeliverableUri(uri: string | null): string | null {
  if (uri === null || !/^data:/i.test(uri)) return uri;
  const comma = uri.indexOf(',');
  return `${(comma < 0 ? uri : uri.slice(0, comma + 1)).slice(0, 200)}…`;
}

const presentJob = (j: store.JobRow) => ({
  id: j.id,
  name: j.name,
  state: j.state,
  retry_count: j.retry_count,
  retry_limit: j.retry_limit,
  singleton_key: j.singleton_key,
  created_at: j.created_on,
  start_after: j.start_after,
  started_at: j.started_on,
  completed_at: j.completed_on,
});

const presentReputationWrite = (w: ReputationWriteRow) => ({
  id: w.id,
  kind: w.kind,
  write_type: w.writeType,
  subject: w.subject,
  source: `${w.sourceType}:${w.sourceId}`,
  amount_usd: w.amount === null ? null : formatUsd(w.amount),
  status: w.status,
  attempts: w.attempts,
  last_error: w.lastError,
  chain_reference: w.chainReference,
  next_attempt_at: w.nextAttemptAt.toISOString(),
  created_at: w.createdAt.toISOString(),
  written_at: iso(w.writtenAt),
});

const presentEmployer = (e: EmployerWithHeadcount) => ({
  id: e.id,
  name: e.name,
  owner_user_id: e.ownerUserId,
  admin_wallet: e.adminWallet,
  employer_account_id: e.employerAccountId,
  tip403_policy_id: e.tip403PolicyId === null ? null : Number(e.tip403PolicyId),
  agent_key_prefix: e.agentKeyPrefix,
  active_employees: e.activeEmployees,
  created_at: e.createdAt.toISOString(),
});

const presentPayment = (p: store.PaymentRow) => ({
  id: p.id,
  rail: p.rail,
  network: p.network,
  route: p.route,
  payer: p.payer,
  amount_usd: formatUsd(p.amount),
  asset: p.asset,
  status: p.status,
  reference: p.reference,
  http_status: p.httpStatus,
  request_id: p.requestId,
  employer_id: p.employerId,
  refund_reference: p.refundReference,
  created_at: p.createdAt.toISOString(),
  settled_at: iso(p.settledAt),
  served_at: iso(p.servedAt),
  refunded_at: iso(p.refundedAt),
});

const presentEmail = (m: OutboxRow) => ({
  id: m.id,
  to_address: m.toAddress,
  subject: m.subject,
  body_text: m.bodyText,
  dedupe_key: m.dedupeKey,
  status: m.status,
  attempts: m.attempts,
  last_error: m.lastError,
  created_at: m.createdAt.toISOString(),
  sent_at: iso(m.sentAt),
});

const presentPayrollRun = (r: RunRow, employerName: string) => ({
  id: r.id,
  employer_id: r.employerId,
  employer_name: employerName,
  status: r.status,
  total_usd: formatUsd(r.totalAmount),
  recipient_count: r.recipientCount,
  submitted_by: r.submittedBy,
  tx_hash: r.txHash,
  block_number: r.blockNumber === null ? null : Number(r.blockNumber),
  failure_reason: r.failureReason,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
  submitted_at: iso(r.submittedAt),
  finalized_at: iso(r.finalizedAt),
});

const presentEscrow = (e: EscrowMetadataRow) => ({
  id: e.id,
  employer_id: e.employerId,
  status: e.status,
  amount_usd: formatUsd(e.amount),
  poster_agent_identifier: e.posterAgentIdentifier,
  worker_agent_identifier: e.workerAgentIdentifier,
  worker_wallet_address: e.workerWalletAddress,
  worker_reputation_tier: e.workerReputationTier,
  applied_expiry_hours: e.appliedExpiryHours,
  expires_at: e.expiresAt.toISOString(),
  deliverable_uri: redactDeliverableUri(e.deliverableUri),
  deliverable_sha256: e.deliverableSha256,
  deliverable_bytes: e.deliverableBytes,
  validator_verdict: e.validatorVerdict,
  validator_confidence: e.validatorConfidence,
  validator_model: e.validatorModel,
  sanitizer_flagged: e.sanitizerFlagged,
  escalated_at: iso(e.escalatedAt),
  escalation_reason: e.escalationReason,
  created_at: e.createdAt.toISOString(),
  delivered_at: iso(e.deliveredAt),
  verdict_at: iso(e.verdictAt),
  finalized_at: iso(e.finalizedAt),
});

const presentAudit = (a: store.AuditRow) => ({
  id: a.id,
  actor_user_id: a.actorUserId,
  actor_kind: a.actorKind,
  action: a.action,
  employer_id: a.employerId,
  target_type: a.targetType,
  target_id: a.targetId,
  details: a.details as Record<string, unknown>,
  request_id: a.requestId,
  created_at: a.createdAt.toISOString(),
});

/** scope=overview: counts, each status listed even at zero. */
async function overview(db: Db, now: Date) {
  const [employers, runs, payments, emails, reputationWrites, sanctions] = await Promise.all([
    employerCounts(db),
    payrollRunCounts(db),
    store.paymentCounts(db),
    outboxCounts(db),
    reputationWriteCounts(db),
    sanctionsState(db),
  ]);
  return {
    scope: 'overview' as const,
    generated_at: now.toISOString(),
    counts: {
      employers: employers.employers,
      employees: byStatus(EMPLOYEE_STATUSES, employers.employees),
      payroll_runs: byStatus(PAYROLL_RUN_STATUSES, runs),
      payments: payments.map((p) => ({ rail: p.rail, status: p.status, count: p.count, amount_usd: formatUsd(p.amount) })),
      emails: byStatus(EMAIL_STATUSES, emails),
      reputation_writes: byStatus(REPUTATION_WRITE_STATUSES, reputationWrites),
    },
    sanctions_list: sanctions && {
      source: sanctions.source,
      list_date: sanctions.listDate,
      entries: sanctions.entries,
      synced_at: sanctions.syncedAt.toISOString(),
      last_attempt_at: sanctions.lastAttemptAt.toISOString(),
      last_error: sanctions.lastError,
    },
  };
}

/** Runs with their employer's name (a run's employer always exists: a foreign key). */
async function payrollRuns(db: Db, page: OffsetPage, employerId: string | undefined) {
  const { rows, total } = await payrollRunsPage(db, page, employerId);
  const names = await employerNames(db, rows.map((run) => run.employerId));
  return { total, items: rows.map((run) => presentPayrollRun(run, names.get(run.employerId)!)) };
}

/** The platform admin's operations view (GET /api/admin); callers are checked by the route. */
export class AdminService {
  private readonly database: Database;
  private readonly health: DependencyHealth | undefined;

  /** `health` absent (an app without chains): scope=health lists no dependency. */
  constructor(options: { database: Database; health?: DependencyHealth | undefined }) {
    this.database = options.database;
    this.health = options.health;
  }

  async read(query: AdminQuery) {
    if (query.employerId !== undefined && !EMPLOYER_FILTERED_SCOPES.includes(query.scope)) {
      throw badRequest('employer_id', `is only accepted with scope ${EMPLOYER_FILTERED_SCOPES.join(', ')}`);
    }
    const db = this.database.db;
    const page = { offset: (query.page - 1) * query.limit, limit: query.limit };
    const paging = { page: query.page, limit: query.limit };
    switch (query.scope) {
      case 'overview':
        return overview(db, this.database.clock.now());
      case 'employers': {
        const { rows, total } = await employersPage(db, page);
        return { scope: 'employers' as const, ...paging, total, items: rows.map(presentEmployer) };
      }
      case 'payments': {
        const { rows, total } = await store.listPayments(db, page);
        return { scope: 'payments' as const, ...paging, total, items: rows.map(presentPayment) };
      }
      case 'email_outbox':
      case 'emails': {
        const { rows, total } = await outboxPage(db, page);
        return { scope: query.scope, ...paging, total, items: rows.map(presentEmail) };
      }
      case 'reputation_writes':
      case 'reputation_failures': {
        const { rows, total } = await reputationWritesPage(db, page, query.scope === 'reputation_failures');
        return { scope: query.scope, ...paging, total, items: rows.map(presentReputationWrite) };
      }
      case 'payroll_runs':
        return { scope: 'payroll_runs' as const, ...paging, ...(await payrollRuns(db, page, query.employerId)) };
      case 'escrows': {
        const { rows, total } = await escrowMetadataPage(db, page, query.employerId);
        return { scope: 'escrows' as const, ...paging, total, items: rows.map(presentEscrow) };
      }
      case 'jobs': {
        if (!(await store.jobsAvailable(db))) return { scope: 'jobs' as const, available: false, counts: [], ...paging, total: 0, items: [] };
        const [counts, { rows, total }] = await Promise.all([store.jobCounts(db), store.listJobs(db, page, false)]);
        return { scope: 'jobs' as const, available: true, counts, ...paging, total, items: rows.map(presentJob) };
      }
      case 'failed_jobs': {
        if (!(await store.jobsAvailable(db))) return { scope: 'failed_jobs' as const, available: false, ...paging, total: 0, items: [] };
        const { rows, total } = await store.listJobs(db, page, true);
        return {
          scope: 'failed_jobs' as const,
          available: true,
          ...paging,
          total,
          items: rows.map((j) => ({ ...presentJob(j), error: j.error, data: j.data })),
        };
      }
      case 'announcements': {
        const now = this.database.clock.now();
        const { rows, total } = await listAnnouncements(db, { ...page, now });
        return { scope: 'announcements' as const, ...paging, total, items: rows.map((row) => presentForAdmin(row, now)) };
      }
      case 'health':
        return { scope: 'health' as const, generated_at: this.database.clock.now().toISOString(), checks: (await this.health?.check()) ?? {} };
      case 'audit_log':
      case 'audit': {
        const { rows, total } = await store.listAudit(db, page, query.employerId);
        return { scope: query.scope, ...paging, total, items: rows.map(presentAudit) };
      }
    }
  }
}
