import { z } from '@hono/zod-openapi';

export const ADMIN_SCOPES = ['overview', 'employers', 'payments', 'emails', 'reputation_writes', 'audit'] as const;

export const AdminQuery = z.object({
  scope: z.enum(ADMIN_SCOPES).openapi({ param: { name: 'scope', in: 'query' }, description: 'What to show.' }),
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-indexed page (list scopes).' }),
  limit: z.coerce.number().int().min(1).max(100).default(25).openapi({ description: 'Page size, 1-100 (list scopes).' }),
  employer_id: z.uuid().optional().openapi({ description: 'scope=audit only: entries of this employer.' }),
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
  })
  .openapi('AdminOverview');

const paged = <T extends z.ZodType>(scope: (typeof ADMIN_SCOPES)[number], item: T, name: string) =>
  z
    .object({
      scope: z.literal(scope),
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
    status: z.string(),
    reference: z.string().nullable(),
    http_status: z.number().int().nullable(),
    request_id: z.string().nullable(),
    employer_id: z.uuid().nullable(),
    created_at: timestamp,
    settled_at: timestamp.nullable(),
  }),
  'AdminPayments',
);

export const AdminEmails = paged(
  'emails',
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

export const AdminReputationWrites = paged(
  'reputation_writes',
  z.object({
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
  }),
  'AdminReputationWrites',
);

export const AdminAudit = paged(
  'audit',
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

export const AdminResponse = z.union([AdminOverview, AdminEmployers, AdminPayments, AdminEmails, AdminReputationWrites, AdminAudit]).openapi('AdminResponse');
