import type { Database } from '../../db/client.js';
import { EMPLOYEE_STATUSES, PAYROLL_RUN_STATUSES, REPUTATION_WRITE_STATUSES } from '../../db/schema.js';
import { formatUsd } from '../../money.js';
import type { ADMIN_SCOPES } from './schema.js';
import * as store from './store.js';

const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const;

export interface AdminQuery {
  scope: (typeof ADMIN_SCOPES)[number];
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

/** The platform admin's operations view (GET /api/admin); callers are checked by the route. */
export class AdminService {
  constructor(private readonly database: Database) {}

  async read(query: AdminQuery) {
    const db = this.database.db;
    const page = { offset: (query.page - 1) * query.limit, limit: query.limit };
    const paging = { page: query.page, limit: query.limit };
    switch (query.scope) {
      case 'overview': {
        const counts = await store.overview(db);
        return {
          scope: 'overview' as const,
          generated_at: new Date().toISOString(),
          counts: {
            employers: counts.employers,
            employees: byStatus(EMPLOYEE_STATUSES, counts.employees),
            payroll_runs: byStatus(PAYROLL_RUN_STATUSES, counts.payrollRuns),
            payments: counts.payments.map((p) => ({ rail: p.rail, status: p.status, count: p.count, amount_usd: formatUsd(p.amount) })),
            emails: byStatus(EMAIL_STATUSES, counts.emails),
            reputation_writes: byStatus(REPUTATION_WRITE_STATUSES, counts.reputationWrites),
          },
        };
      }
      case 'employers': {
        const { rows, total } = await store.listEmployers(db, page);
        return {
          scope: 'employers' as const,
          ...paging,
          total,
          items: rows.map((e) => ({
            id: e.id,
            name: e.name,
            owner_user_id: e.ownerUserId,
            admin_wallet: e.adminWallet,
            employer_account_id: e.employerAccountId,
            tip403_policy_id: e.tip403PolicyId === null ? null : Number(e.tip403PolicyId),
            agent_key_prefix: e.agentKeyPrefix,
            active_employees: e.activeEmployees,
            created_at: e.createdAt.toISOString(),
          })),
        };
      }
      case 'payments': {
        const { rows, total } = await store.listPayments(db, page);
        return {
          scope: 'payments' as const,
          ...paging,
          total,
          items: rows.map((p) => ({
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
            created_at: p.createdAt.toISOString(),
            settled_at: iso(p.settledAt),
          })),
        };
      }
      case 'emails': {
        const { rows, total } = await store.listEmails(db, page);
        return {
          scope: 'emails' as const,
          ...paging,
          total,
          items: rows.map((m) => ({
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
          })),
        };
      }
      case 'reputation_writes': {
        const { rows, total } = await store.listReputationWrites(db, page);
        return {
          scope: 'reputation_writes' as const,
          ...paging,
          total,
          items: rows.map((w) => ({
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
          })),
        };
      }
      case 'audit': {
        const { rows, total } = await store.listAudit(db, page, query.employerId);
        return {
          scope: 'audit' as const,
          ...paging,
          total,
          items: rows.map((a) => ({
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
          })),
        };
      }
    }
  }
}
