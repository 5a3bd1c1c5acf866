import { z } from '@hono/zod-openapi';
import { usdAmountSchema } from '../../http/validation.js';
import { parseUsd } from '../../money.js';
import { AGENT_IDENTIFIER_PATTERN, withEvmAddressRule } from '../agents/index.js';
import { solanaAddressSchema } from '../employers/index.js';

/** Spec 7 limits. */
export const ESCROW_MAX_AMOUNT = 100_000_000n; // 100.00 USDC in base units
export const RUBRIC_MAX_CHARS = 2000;

const agentIdentifier = withEvmAddressRule(z.string().regex(AGENT_IDENTIFIER_PATTERN, 'must be 1-200 printable ASCII characters without spaces'));
// Rubrics are multi-line text: line breaks and tabs are allowed, other control characters are not.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export const AgentHeaders = z.object({
  'x-agent-identifier': withEvmAddressRule(z.string()).optional().openapi({ description: 'Required (401 without).' }),
  'x-agent-timestamp': z.string().optional().openapi({ description: 'The identity proof of X-Agent-Identifier (docs/api.md "Agent identity proof"); 401 without it (deliver-signed: unless the identifier is the signing wallet\'s key).' }),
  'x-agent-signature': z.string().optional().openapi({ description: 'The identity proof; each signature is accepted once.' }),
});

export const PostEscrowBody = z
  .object({
    employer_id: z.uuid().openapi({ description: 'Whose treasury funds the escrow; the agent must be authorized for it.' }),
    worker_wallet_address: solanaAddressSchema.openapi({ description: 'Solana address paid on approval.' }),
    worker_agent_identifier: agentIdentifier.openapi({ description: 'The worker agent; must equal X-Agent-Identifier on deliver.' }),
    amount_usdc: usdAmountSchema
      .refine((value) => parseUsd(value)! > 0n, 'must be more than 0')
      .refine((value) => parseUsd(value)! <= ESCROW_MAX_AMOUNT, 'must be at most 100.00')
      .openapi({ description: 'USDC decimal string, more than 0 and at most 100.00.', example: '25.00' }),
    rubric_prompt: z
      .string()
      .trim()
      .min(1)
      .max(RUBRIC_MAX_CHARS)
      .refine((text) => !CONTROL.test(text), 'must not contain control characters other than line breaks and tabs')
      .openapi({
        description: 'What the judge checks, at most 2000 characters. Local mode judges lines `must include: <phrase>` and `must not include: <phrase>`.',
        example: 'A haiku about payroll.\nmust include: payroll',
      }),
    expiry_hours: z.number().int().min(1).max(168).optional().openapi({ description: 'Requested hours until expiry: 1-168, default 24; reputation may shorten it.' }),
  })
  .strict()
  .openapi('EscrowPost');

const signatures = z.record(z.string(), z.string()).openapi({
  description:
    'On-chain signatures by step: `treasury_debit` and `treasury_refund` (Tempo tx hashes), `initialize`, `deliverable` (the content hash), `submit_deliverable` (a worker-signed delivery), `settle`, `refund` (Solana).',
});
const explorerUrls = z.record(z.string(), z.string()).openapi({ description: 'An explorer link for each entry of `signatures`.' });

export const PostEscrowResult = z
  .object({
    escrow_id: z.uuid(),
    escrow_pda: z.string().openapi({ description: "The escrow program's state account for this escrow (PDA of \"escrow\" and the escrow id); its associated token account is the vault that holds the funds." }),
    status: z.literal('posted'),
    expires_at: z.string().openapi({ format: 'date-time' }),
    initialize_signature: z.string(),
    solana_explorer_urls: explorerUrls,
    applied_expiry_hours: z.number(),
    requested_expiry_hours: z.number(),
    worker_reputation_tier: z.enum(['unknown', 'new', 'established', 'trusted']),
    worker_attestation_count: z.number(),
  })
  .openapi('EscrowPosted');

export const DeliverBody = z
  .object({
    escrow_id: z.uuid(),
    deliverable_uri: z.string().min(1).max(150_000).openapi({ description: 'An https URL, an ipfs:// link, or an inline data: URI (at most 100 KB of content).' }),
  })
  .strict()
  .openapi('EscrowDeliver');

export const DeliverSignedBody = DeliverBody.extend({
  signed_transaction: z
    .string()
    .min(1)
    .max(4096)
    .openapi({ description: 'Base64 of the fully signed Solana transaction holding one submit_deliverable instruction (docs/api.md "Escrow: deliver-signed").' }),
})
  .strict()
  .openapi('EscrowDeliverSigned');

export const DeliverResult = z
  .object({
    escrow_id: z.uuid(),
    status: z.enum(['delivered', 'validating']),
    deliverable_uri: z.string(),
    content_sha256: z.string().openapi({ description: 'SHA-256 (hex) of exactly the bytes that will be judged; recorded on chain.' }),
    content_bytes: z.number().int(),
    signatures,
  })
  .openapi('EscrowDelivered');

export const EscrowIdParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'The escrow id.' }),
});

export const EscrowStatus = z
  .object({
    escrow_id: z.uuid(),
    status: z.enum(['posted', 'delivered', 'validating', 'settled', 'rejected_refunded', 'expired_refunded']),
    amount_usdc: z.string(),
    worker_wallet_address: z.string(),
    rubric_prompt: z.string(),
    deliverable_uri: z.string().nullable(),
    validator_verdict: z.enum(['approved', 'rejected']).nullable(),
    validator_confidence: z.number().int().nullable(),
    validator_reasoning: z.string().nullable(),
    expires_at: z.string().openapi({ format: 'date-time' }),
    signatures,
    solana_explorer_urls: explorerUrls,
  })
  .openapi('EscrowStatus');

export const EmployerEscrowParams = z.object({
  employer_id: z.uuid().openapi({ param: { name: 'employer_id', in: 'path' } }),
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }),
});

export const EmployerParams = z.object({
  employer_id: z.uuid().openapi({ param: { name: 'employer_id', in: 'path' } }),
});

/** The owner's view: the public fields plus who posted it, the escalation and the judge's model. */
export const EmployerEscrow = EscrowStatus.extend({
  worker_agent_identifier: z.string(),
  poster_agent_identifier: z.string(),
  escalated_at: z.string().nullable(),
  escalation_reason: z.string().nullable(),
  validator_model: z.string().nullable(),
  sanitizer_flagged: z.boolean(),
  created_at: z.string(),
}).openapi('EmployerEscrow');

export const DecideBody = z
  .object({
    verdict: z.enum(['approved', 'rejected']),
    reasoning: z.string().trim().min(1).max(2000),
  })
  .strict()
  .openapi('EscrowDecision');

export const EmployerEscrowList = EmployerEscrow.array().openapi('EmployerEscrowList');
