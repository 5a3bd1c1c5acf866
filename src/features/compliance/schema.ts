import { z } from '@hono/zod-openapi';
import { evmAddressSchema } from '../../http/validation.js';
import { plainText } from '../employers/index.js';

/** Largest policy id a JSON number carries exactly (TIP-403 ids are uint64 on chain). */
export const MAX_POLICY_ID = Number.MAX_SAFE_INTEGER;
/** TIP-403's built-in allow-all policy: the default when neither the body nor the employer names one. */
export const GLOBAL_POLICY_ID = 1n;

export const COMPLIANCE_LIST_DEFAULT_LIMIT = 100;
export const COMPLIANCE_LIST_MAX_LIMIT = 500;
export const AUDIT_LOG_LIMIT = 50;

const dateTime = () => z.string().openapi({ format: 'date-time' });

// ---- POST /api/mpp/compliance/check ------------------------------------------------------------

/** Unknown fields are ignored; every known field is checked strictly (no coercion). */
export const CheckBody = z
  .object({
    walletAddress: evmAddressSchema.openapi({ description: 'The EVM wallet to screen (0x and 40 hex characters).' }),
    policyId: z
      .number()
      .int()
      .min(0)
      .max(MAX_POLICY_ID)
      .optional()
      .openapi({
        description:
          'TIP-403 policy id. Default: the employer\'s policy when `employerId` is given and the employer has one, else the global policy 1 (allow all).',
        example: 1,
      }),
    employerId: z.uuid().optional().openapi({
      description:
        'Scope the check to this employer (its blocklist and TIP-403 policy; the event joins its ledger). The caller must act for it: ' +
        '`X-Identity-Token` of its owner or its `X-Agent-Key`; otherwise 404 as if it did not exist.',
    }),
  })
  .openapi('ComplianceCheckRequest');

export const REASON_CODES = ['SANCTIONED', 'EMPLOYER_BLOCKLIST', 'TIP403_UNAUTHORIZED'] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export const Reason = z
  .object({
    code: z.enum(REASON_CODES),
    source: z.string().openapi({ description: '`sanctions:builtin`, `employer`, another list name, or `tip403:<policy id>`.' }),
    detail: z.string().nullable(),
    risk_score: z.number().int().openapi({ description: 'The score this reason alone carries.' }),
  })
  .openapi('ComplianceReason');

export const CheckResponse = z
  .object({
    wallet_address: z.string().openapi({ description: 'The screened wallet, lower-cased.' }),
    policy_id: z.number().int().openapi({ description: 'The TIP-403 policy the wallet was checked against.' }),
    authorized: z.boolean().openapi({ description: 'Whether the wallet may be paid: the TIP-403 policy authorizes it and nothing blocks it (false whenever result is BLOCKED).' }),
    risk_score: z.number().int().min(0).max(100).openapi({
      description: '0 to 100: sanctions list 100, employer blocklist 90, not TIP-403 authorized 70, clear 0 (the highest reason wins).',
    }),
    result: z.enum(['CLEAR', 'BLOCKED']),
    checked_at: dateTime(),
    reasons: z.array(Reason).openapi({ description: 'Why the result is BLOCKED; empty when CLEAR.' }),
  })
  .openapi('ComplianceCheckResult');

// ---- GET /api/mpp/marketplace/compliance-list/{employerId} ---------------------------------------

export const ComplianceListParams = z.object({
  employerId: z.uuid().openapi({ param: { name: 'employerId', in: 'path' }, description: 'Employer id.' }),
});

export const ComplianceListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(COMPLIANCE_LIST_MAX_LIMIT)
    .default(COMPLIANCE_LIST_DEFAULT_LIMIT)
    .openapi({ param: { name: 'limit', in: 'query' }, description: `1 to ${COMPLIANCE_LIST_MAX_LIMIT}; default ${COMPLIANCE_LIST_DEFAULT_LIMIT}.` }),
});

export const ComplianceListEntry = z
  .object({
    walletAddress: z.string().openapi({ description: 'Lower-cased.' }),
    checkedAt: dateTime(),
    employeeId: z.uuid().nullable(),
    eventType: z.string(),
  })
  .openapi('ComplianceListEntry');

export const ComplianceList = z
  .object({
    providerId: z.string(),
    clearedWallets: z.number().int().openapi({ description: 'How many wallets are cleared in all (not only this page).' }),
    list: z.array(ComplianceListEntry).openapi({ description: 'Most recently checked first.' }),
    lastUpdated: dateTime().nullable().openapi({ description: 'The newest checkedAt among the cleared wallets; null when none.' }),
  })
  .openapi('ComplianceList');

// ---- GET /api/employers/{id}/compliance ---------------------------------------------------------

export const ComplianceOverview = z
  .object({
    employer_id: z.uuid(),
    summary: z.object({
      employees: z.number().int().openapi({ description: 'Active employees.' }),
      checked: z.number().int().openapi({ description: "Active employees whose current wallet has a compliance event in this employer's ledger." }),
      clear: z.number().int().openapi({ description: 'Of those, latest result CLEAR.' }),
      blocked: z.number().int().openapi({ description: 'Of those, latest result BLOCKED.' }),
      unchecked: z.number().int().openapi({ description: 'Active employees never checked (or without an EVM wallet).' }),
      blocklist_entries: z.number().int().openapi({ description: "Entries on the employer's own blocklist." }),
    }),
    employees: z.array(
      z.object({
        id: z.uuid(),
        full_name: z.string(),
        wallet_address: z.string().nullable(),
        latest_result: z.enum(['CLEAR', 'BLOCKED']).nullable(),
        latest_checked_at: dateTime().nullable(),
        manual_review_status: z.enum(['none', 'pending', 'approved', 'rejected']),
        blocked_now: z.string().nullable().openapi({
          description: 'Why the wallet is blocked right now (sanctions list or employer blocklist), whatever its latest check said; null when it is not.',
        }),
      }),
    ),
    audit_log: z
      .array(
        z.object({
          id: z.uuid(),
          action: z.string(),
          actor_kind: z.enum(['user', 'admin', 'agent', 'system']),
          actor_user_id: z.string().nullable(),
          target_type: z.string().nullable(),
          target_id: z.string().nullable(),
          details: z.record(z.string(), z.unknown()),
          created_at: dateTime(),
        }),
      )
      .openapi({ description: `The employer's ${AUDIT_LOG_LIMIT} most recent audit entries, newest first.` }),
    sanctions_list: z
      .object({
        source: z.string().openapi({ description: "OFAC's SDN list: the snapshot shipped with the service, or the URL of its last refresh." }),
        list_date: z.string().nullable().openapi({ description: 'The publication date the list carries (YYYY-MM-DD), when it says.' }),
        entries: z.number().int().openapi({ description: 'EVM-format addresses every check screens against.' }),
        synced_at: dateTime().openapi({ description: 'When this list was put in force.' }),
      })
      .nullable()
      .openapi({ description: 'The sanctions list in force; null before the first sync.' }),
  })
  .openapi('ComplianceOverview');

// ---- /api/employers/{id}/blocklist ----------------------------------------------------------------

export const BlocklistEntryParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Employer id.' }),
  entryId: z.uuid().openapi({ param: { name: 'entryId', in: 'path' }, description: 'Blocklist entry id.' }),
});

export const AddBlocklistBody = z
  .object({
    wallet_address: evmAddressSchema.openapi({ description: 'Stored lower-cased; one entry per wallet.' }),
    reason: plainText(500).optional().openapi({ example: 'Chargeback fraud reported by our bank' }),
  })
  .openapi('AddBlocklistEntryRequest');

export const BlocklistEntry = z
  .object({
    id: z.uuid(),
    employer_id: z.uuid(),
    wallet_address: z.string(),
    reason: z.string().nullable(),
    source: z.string(),
    created_at: dateTime(),
  })
  .openapi('BlocklistEntry');

export const AddBlocklistResponse = BlocklistEntry.extend({
  created: z.boolean().openapi({ description: 'false when the wallet was already on the blocklist (the existing entry is returned).' }),
}).openapi('AddBlocklistEntryResponse');

export const BlocklistResponse = z
  .object({
    employer_id: z.uuid(),
    entries: z.array(BlocklistEntry).openapi({ description: 'Newest first.' }),
  })
  .openapi('Blocklist');
