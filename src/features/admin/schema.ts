import { z } from '@hono/zod-openapi';
import { AdminAnnouncement } from '../announcements/index.js';

export const ADMIN_SCOPES = [
  'overview',
  'employers',
  'payroll_runs',
  'escrows',
  'payments',
  'jobs',
  'failed_jobs',
  'email_outbox',
  'emails',
  'reputation_writes',
  'reputation_failures',
  'audit_log',
  'audit',
  'announcements',
  'health',
] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];
/** Scopes that take `employer_id`. */
export const EMPLOYER_FILTERED_SCOPES: readonly AdminScope[] = ['payroll_runs', 'escrows', 'audit', 'audit_log'];

export const AdminQuery = z.object({
  scope: z.enum(ADMIN_SCOPES).openapi({ param: { name: 'scope', in: 'query' }, description: 'What to show.' }),
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-indexed page (list scopes).' }),
  limit: z.coerce.number().int().min(1).max(100).default(25).openapi({ description: 'Page size, 1-100 (list scopes).' }),
  employer_id: z
    .uuid()
    .optional()
    .openapi({ description: 'scope=payroll_runs, escrows, audit_log (or audit) only: rows of this employer.' }),
});

const timestamp = z.string().openapi({ format: 'date-time' });
const statusCounts = (description: string) => z.record(z.string(), z.number().int()).openapi({ description });

export const AdminOverview = z
  .object({
    scope: z.literal('overview'),
    generated_at: timestamp,
    counts: z.object({
      employers: z.number().int(),
      employees: statusCounts('Employees per status.'),
      payroll_runs: statusCounts('Payroll runs per status.'),
      payments: z
        .array(z.object({ rail: z.string(), status: z.string(), count: z.number().int(), amount_usd: z.string() }))
        .openapi({ description: 'Fee payments through the gate, per rail and status.' }),
      emails: statusCounts('Outbox emails per status.'),
      reputation_writes: statusCounts('Queued reputation writes (attestations, ERC-8004 feedback) per status.'),
    }),
    sanctions_list: z
      .object({
        source: z.string().openapi({ description: 'The snapshot shipped with the service, or the URL the last refresh downloaded.' }),
        list_date: z.string().nullable().openapi({ description: 'The publication date the list carries (YYYY-MM-DD), when it says.' }),
        entries: z.number().int().openapi({ description: 'EVM-format addresses screened against.' }),
        synced_at: timestamp.openapi({ description: 'When this list was put in force.' }),
        last_attempt_at: timestamp,
        last_error: z.string().nullable().openapi({ description: 'Why the last refresh failed (the list in force stayed); null after a success.' }),
      })
      .nullable()
      .openapi({ description: 'The sanctions list in force (docs/operations.md, "Sanctions list"); null before the first sync.' }),
  })
  .openapi('AdminOverview');

const paged = <T extends z.ZodType>(scope: AdminScope | [AdminScope, AdminScope], item: T, name: string) =>
  z
    .object({
      scope: typeof scope === 'string' ? z.literal(scope) : z.enum(scope).openapi({ description: 'The scope asked for (two names for the same view).' }),
      page: z.number().int(),
      limit: z.number().int(),
      total: z.number().int(),
      items: z.array(item),
    })
    .openapi(name);

export const AdminEmployers = paged(
  'employers',
  z.object({
    id: z.uuid(),
    name: z.string(),
    owner_user_id: z.string(),
    admin_wallet: z.string().nullable(),
    employer_account_id: z.string().nullable(),
    tip403_policy_id: z.number().int().nullable(),
    agent_key_prefix: z.string().nullable(),
    active_employees: z.number().int(),
    created_at: timestamp,
  }),
  'AdminEmployers',
);

export const AdminPayments = paged(
  'payments',
  z.object({
    id: z.uuid(),
    rail: z.string(),
    network: z.string(),
    route: z.string(),
    payer: z.string().nullable(),
    amount_usd: z.string(),
    asset: z.string().nullable(),
    status: z.string().openapi({ description: 'claimed, settled (not yet answered), served, voided, unknown, refunding or refunded.' }),
    reference: z.string().nullable(),
    http_status: z.number().int().nullable(),
    request_id: z.string().nullable(),
    employer_id: z.uuid().nullable(),
    refund_reference: z.string().nullable().openapi({ description: 'The refund transaction (or card charge) when the fee went back.' }),
    created_at: timestamp,
    settled_at: timestamp.nullable(),
    served_at: timestamp.nullable(),
    refunded_at: timestamp.nullable(),
  }),
  'AdminPayments',
);

export const AdminEmails = paged(
  ['email_outbox', 'emails'],
  z.object({
    id: z.uuid(),
    to_address: z.string(),
    subject: z.string(),
    body_text: z.string(),
    dedupe_key: z.string(),
    status: z.string(),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    created_at: timestamp,
    sent_at: timestamp.nullable(),
  }),
  'AdminEmails',
);

const ReputationWrite = z
  .object({
    id: z.uuid(),
    kind: z.string(),
    write_type: z.string(),
    subject: z.string(),
    source: z.string().openapi({ description: '`<source type>:<source id>`: what earned it.' }),
    amount_usd: z.string().nullable(),
    status: z.string(),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    chain_reference: z.string().nullable(),
    next_attempt_at: timestamp,
    created_at: timestamp,
    written_at: timestamp.nullable(),
  })
  .openapi('AdminReputationWrite');

export const AdminReputationWrites = paged('reputation_writes', ReputationWrite, 'AdminReputationWrites');
export const AdminReputationFailures = paged('reputation_failures', ReputationWrite, 'AdminReputationFailures');

export const AdminAudit = paged(
  ['audit_log', 'audit'],
  z.object({
    id: z.uuid(),
    actor_user_id: z.string().nullable(),
    actor_kind: z.string(),
    action: z.string(),
    employer_id: z.uuid().nullable(),
    target_type: z.string().nullable(),
    target_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    request_id: z.string().nullable(),
    created_at: timestamp,
  }),
  'AdminAudit',
);

export const AdminPayrollRuns = paged(
  'payroll_runs',
  z.object({
    id: z.uuid(),
    employer_id: z.uuid(),
    employer_name: z.string(),
    status: z.string(),
    total_usd: z.string(),
    recipient_count: z.number().int(),
    submitted_by: z.string().nullable(),
    tx_hash: z.string().nullable(),
    block_number: z.number().int().nullable(),
    failure_reason: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: timestamp,
    submitted_at: timestamp.nullable(),
    finalized_at: timestamp.nullable(),
  }),
  'AdminPayrollRuns',
);

export const AdminEscrows = paged(
  'escrows',
  z
    .object({
      id: z.uuid(),
      employer_id: z.uuid(),
      status: z.string(),
      amount_usd: z.string(),
      poster_agent_identifier: z.string(),
      worker_agent_identifier: z.string(),
      worker_wallet_address: z.string(),
      worker_reputation_tier: z.string(),
      applied_expiry_hours: z.number().int(),
      expires_at: timestamp,
      deliverable_uri: z
        .string()
        .nullable()
        .openapi({ description: 'An inline `data:` URI is cut at its comma (`data:text/plain;base64,…`): the content is never shown here.' }),
      deliverable_sha256: z.string().nullable(),
      deliverable_bytes: z.number().int().nullable().openapi({ description: 'Size of the fetched content; the content itself is not shown.' }),
      validator_verdict: z.string().nullable(),
      validator_confidence: z.number().int().nullable(),
      validator_model: z.string().nullable(),
      sanitizer_flagged: z.boolean(),
      escalated_at: timestamp.nullable(),
      escalation_reason: z.string().nullable(),
      created_at: timestamp,
      delivered_at: timestamp.nullable(),
      verdict_at: timestamp.nullable(),
      finalized_at: timestamp.nullable(),
    })
    .openapi({ description: 'Metadata only: no deliverable content, rubric or judge reasoning.' }),
  'AdminEscrows',
);

const JobState = z.string().openapi({ description: 'pg-boss state: created, retry, active, completed, cancelled, failed.' });
const Job = z.object({
  id: z.uuid(),
  name: z.string(),
  state: JobState,
  retry_count: z.number().int(),
  retry_limit: z.number().int(),
  singleton_key: z.string().nullable(),
  created_at: timestamp,
  start_after: timestamp,
  started_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
});
const jobsAvailable = z.boolean().openapi({ description: 'False when the job runner has never started on this database (no pg-boss schema).' });

export const AdminJobs = z
  .object({
    scope: z.literal('jobs'),
    available: jobsAvailable,
    counts: z.array(z.object({ name: z.string(), state: JobState, count: z.number().int() })).openapi({ description: 'Jobs per queue and state.' }),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    items: z.array(Job).openapi({ description: 'Recent jobs, newest first.' }),
  })
  .openapi('AdminJobs');

export const AdminFailedJobs = z
  .object({
    scope: z.literal('failed_jobs'),
    available: jobsAvailable,
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    items: z.array(
      Job.extend({
        error: z.string().nullable().openapi({ description: 'The last error message (at most 1000 characters).' }),
        data: z.unknown().openapi({ description: 'The job\'s input.' }),
      }),
    ),
  })
  .openapi('AdminFailedJobs');

export const AdminHealth = z
  .object({
    scope: z.literal('health'),
    generated_at: timestamp,
    checks: z
      .record(
        z.string(),
        z.union([
          z.object({ ok: z.literal(true), latency_ms: z.number().int() }),
          z.object({
            ok: z.literal(false),
            reason: z.enum(['timeout', 'unreachable', 'error']).openapi({ description: 'No error text: it may carry a URL with its API key.' }),
          }),
        ]),
      )
      .openapi({ description: 'Per outside system: `tempo`, `base`, `solana`; live mode adds `facilitator`, `bridge`, `ai`, `smtp` when configured.' }),
  })
  .openapi('AdminHealth');

export const AdminAnnouncements = paged('announcements', AdminAnnouncement, 'AdminAnnouncements');

export const AdminResponse = z
  .union([
    AdminOverview,
    AdminEmployers,
    AdminPayrollRuns,
    AdminEscrows,
    AdminPayments,
    AdminJobs,
    AdminFailedJobs,
    AdminEmails,
    AdminReputationWrites,
    AdminReputationFailures,
    AdminAudit,
    AdminAnnouncements,
    AdminHealth,
  ])
  .openapi('AdminResponse');
