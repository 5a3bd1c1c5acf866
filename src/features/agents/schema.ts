import { z } from '@hono/zod-openapi';
import { EVM_ADDRESS_RULE } from '../../chains/evm/address.js';
import { evmAddressSchema, usdAmountSchema } from '../../http/validation.js';
import { parseUsd } from '../../money.js';
import { plainText, solanaAddressSchema } from '../employers/index.js';
import { breaksEvmAddressRule } from './identifiers.js';

/** A USD amount above zero, parsed to base units. */
const positiveUsd = usdAmountSchema.refine((value) => parseUsd(value)! > 0n, 'must be more than 0');
const cap = (description: string) => positiveUsd.openapi({ description, example: '25.00' });
const elevatedCap = (description: string) => cap(description).nullable();

export const EmployerIdParams = z.object({
  employer_id: z.uuid().openapi({ param: { name: 'employer_id', in: 'path' }, description: 'The employer.' }),
});
export const AuthorizationParams = EmployerIdParams.extend({
  authorization_id: z.uuid().openapi({ param: { name: 'authorization_id', in: 'path' }, description: 'The agent authorization.' }),
});

export const AGENT_IDENTIFIER_PATTERN = /^[\x21-\x7e]{1,200}$/;
/** An agent identifier (body or X-Agent-Identifier) spelled as an EVM address follows the API's address rule (#33). */
export const withEvmAddressRule = (identifier: z.ZodString) => identifier.refine((value) => !breaksEvmAddressRule(value), EVM_ADDRESS_RULE);
const agentIdentifier = withEvmAddressRule(z.string().regex(AGENT_IDENTIFIER_PATTERN, 'must be 1-200 printable ASCII characters without spaces'))
  .openapi({
    description:
      'What the agent sends in X-Agent-Identifier, matched exactly (EVM addresses case-insensitively): `erc8004:tempo:<agent_id>`, a Solana key (`solana:<base58>` or bare), an EVM address, an agent-card URI or an opaque token.',
    example: 'erc8004:tempo:42',
  });

const velocity = z.number().int().min(1).max(600);
/** An allowlist entry: an agent/pay recipient on Tempo (EVM) or an escrow worker's wallet (Solana). */
const recipientAddress = z
  .string()
  .refine((value) => !breaksEvmAddressRule(value), { message: EVM_ADDRESS_RULE, abort: true })
  .refine((value) => evmAddressSchema.safeParse(value).success || solanaAddressSchema.safeParse(value).success, 'must be an EVM address (0x...) or a base58 Solana address')
  .openapi({ example: '0x5FbDB2315678afecb367f032d93F642f64180aa3' });
const allowlist = z
  .array(recipientAddress)
  .min(1)
  .max(100)
  .nullable()
  .openapi({
    description:
      'Recipients this agent may pay or post escrows to: EVM addresses (agent/pay, kept in their EIP-55 spelling; mixed case must carry a valid checksum) and Solana wallets (escrow workers, compared exactly); null = any recipient.',
  });

export const CreateAuthorizationBody = z
  .object({
    label: plainText(80).openapi({ description: 'A name the owner recognises.', example: 'Research agent' }),
    agent_identifier: agentIdentifier,
    identity_scheme: z
      .enum(['hmac', 'erc8004', 'ed25519', 'evm'])
      .optional()
      .openapi({
        description:
          'How the agent proves X-Agent-Identifier (docs/api.md "Agent identity proof"). Default: `erc8004` for `erc8004:...` identifiers, `ed25519` for Solana keys, else `hmac` (a secret issued in this response, once). `evm` (EIP-191 by the address itself, no secret) only for an EVM-address identifier.',
      }),
    per_tx_cap_usd: cap('Largest single payment (required).'),
    per_day_cap_usd: cap('Most the agent may pay over any rolling 24 hours (required; at least per_tx_cap_usd).'),
    velocity_per_minute: velocity.default(5).openapi({ description: 'Most payments in any 60 s (default 5).' }),
    allowed_recipients: allowlist.default(null),
    elevated_per_tx_cap_usd: elevatedCap('Per-transaction cap while the agent\'s reputation tier is `established` or `trusted` (optional).').default(null),
    elevated_per_day_cap_usd: elevatedCap('Per-day cap while the agent\'s reputation tier is `established` or `trusted` (optional).').default(null),
  })
  .strict()
  .openapi('CreateAgentAuthorization');

export const UpdateAuthorizationBody = z
  .object({
    label: plainText(80).optional(),
    per_tx_cap_usd: cap('New per-transaction cap; replaces a halved cap.').optional(),
    per_day_cap_usd: cap('New per-day cap.').optional(),
    velocity_per_minute: velocity.optional(),
    allowed_recipients: allowlist.optional(),
    elevated_per_tx_cap_usd: elevatedCap('null removes it.').optional(),
    elevated_per_day_cap_usd: elevatedCap('null removes it.').optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'name at least one field to change')
  .openapi('UpdateAgentAuthorization');

export const ListAuthorizationsQuery = z.object({
  include_revoked: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .openapi({ description: 'Also list revoked authorizations.' }),
});

const usd = (description: string) => z.string().openapi({ description: `${description} USD decimal (6 places).`, example: '25.000000' });
const usdOrNull = (description: string) => usd(description).nullable();
const dateTime = (description: string) => z.string().nullable().openapi({ format: 'date-time', description });

export const Authorization = z
  .object({
    id: z.uuid(),
    employer_id: z.uuid(),
    label: z.string(),
    agent_identifier: z.string(),
    identity_scheme: z.enum(['hmac', 'erc8004', 'ed25519', 'evm', 'none']),
    per_tx_cap_usd: usd('Per-transaction cap in force (halved by gate 6 when `cap_halved_at` is set).'),
    per_day_cap_usd: usd('Rolling 24 h cap.'),
    velocity_per_minute: z.number().int(),
    allowed_recipients: z.array(z.string()).nullable(),
    elevated_per_tx_cap_usd: usdOrNull('Applies while the reputation tier is established or trusted and the cap is not halved.'),
    elevated_per_day_cap_usd: usdOrNull('As elevated_per_tx_cap_usd.'),
    paused_at: dateTime('Set by pause-all; payments are refused while set.'),
    pause_reason: z.string().nullable(),
    per_tx_cap_original_usd: usdOrNull('The cap before gate 6 halved it.'),
    cap_halved_at: dateTime('When gate 6 halved the cap.'),
    revoked_at: dateTime('Revoked authorizations match nothing.'),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AgentAuthorization');

export const IssuedAuthorization = Authorization.extend({
  hmac_secret: z
    .string()
    .nullable()
    .openapi({ description: 'The HMAC-SHA256 key (its UTF-8 bytes), shown only in this response; null for erc8004 and ed25519 agents.' }),
}).openapi('IssuedAgentAuthorization');

export const AuthorizationList = z.object({ authorizations: z.array(Authorization) }).openapi('AgentAuthorizations');

export const PauseAllBody = z
  .object({ reason: plainText(500).openapi({ description: 'Why; shown on every paused authorization.', example: 'Suspicious activity' }) })
  .strict()
  .openapi('PauseAllAgents');

const Paused = z.object({ id: z.uuid(), label: z.string() });
export const PauseAllResult = z
  .object({
    success: z.boolean(),
    paused_count: z.number().int().openapi({ description: 'Authorizations this call paused (already paused ones are left as they were).' }),
    paused_at: z.string().openapi({ format: 'date-time' }),
    pause_reason: z.string(),
    paused_authorizations: z.array(Paused),
  })
  .openapi('PauseAllResult');
export const ResumeAllResult = z
  .object({
    success: z.boolean(),
    resumed_count: z.number().int(),
    resumed_at: z.string().openapi({ format: 'date-time' }),
    resumed_authorizations: z.array(Paused),
  })
  .openapi('ResumeAllResult');

// ---- POST /api/mpp/agent/pay (spec 4.4) -------------------------------------------------------

export const AgentPayHeaders = z.object({
  'x-agent-identifier': withEvmAddressRule(z.string())
    .optional()
    .openapi({ description: 'Required. Must match an active authorization of the employer exactly.' }),
  'x-agent-timestamp': z.string().optional().openapi({ description: 'Required. Integer epoch seconds, within 5 minutes of the server.' }),
  'x-agent-signature': z
    .string()
    .optional()
    .openapi({ description: 'Required. Over the canonical message of docs/api.md "Agent identity proof"; each is accepted once.' }),
  'idempotency-key': z
    .string()
    .optional()
    .openapi({ description: 'A retry with the same key returns the first payment instead of paying again (the retry\'s own fee is charged).' }),
});

export const AgentPayBody = z
  .object({
    employer_id: z.uuid().openapi({ description: 'Whose treasury funds the payment.' }),
    recipient_wallet: evmAddressSchema.openapi({ description: 'The payee on Tempo.' }),
    amount: positiveUsd.openapi({ description: 'USDC decimal string, more than 0.', example: '1.50' }),
    reference: plainText(200).nullable().optional().openapi({ description: 'Audit text kept with the payment.' }),
  })
  .strict()
  .openapi('AgentPay');

export const AgentPayResult = z
  .object({
    success: z.literal(true),
    tx_hash: z.string(),
    recipient: z.string(),
    amount: z.string().openapi({ description: 'USD decimal (6 places).' }),
    explorer_url: z.string().nullable(),
    employer_id: z.uuid(),
    employer_account_id: z.string().openapi({ description: 'The treasury account on Tempo the payment came from.' }),
    reference: z.string().nullable(),
    memo: z.string().openapi({ description: 'The 32-byte memo carried with the transfer (POST /api/mpp/memo/decode reads it).' }),
    timestamp: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AgentPayResult');
