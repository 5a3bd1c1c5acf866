import { z } from '@hono/zod-openapi';
import { plainText } from '../employers/index.js';
import { isSolanaKey, withEvmAddressRule } from '../agents/index.js';

export const CAPABILITY_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;
export const MAX_CAPABILITIES = 20;

const capabilitySlug = z
  .string()
  .regex(CAPABILITY_PATTERN, 'must be a lower-case slug: a-z, 0-9 and "-", 1 to 40 characters, not starting with "-"')
  .openapi({ example: 'invoice-audit' });

const solanaPublicKey = z
  .string()
  .refine(isSolanaKey, 'must be a base58 Solana public key (32 bytes)')
  .openapi({ example: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' });

/** The identity proof headers of the paid registration (docs/api.md, "Agent identity proof"). */
export const RegisterHeaders = z.object({
  'x-agent-identifier': withEvmAddressRule(z.string()).optional().openapi({
    description:
      'Required. The identity to register: `erc8004:eip155:4217:<agent id>` (or `erc8004:tempo:<agent id>`), `solana:<base58 key>` ' +
      '(or the bare key), or a `0x` EVM address. Any other form: 400.',
    example: 'erc8004:eip155:4217:42',
  }),
  'x-agent-timestamp': z.string().optional().openapi({ description: 'Required. Integer epoch seconds, within 300 s of the server clock.', example: '1795435200' }),
  'x-agent-signature': z.string().optional().openapi({
    description:
      "Required. The identity's signature of the canonical message (method, path with query, timestamp, SHA-256 of the raw body): " +
      "EIP-191 by the ERC-8004 agent's current owner or by the EVM address (`0x` + 65 bytes); Ed25519 by the Solana key (base58 or `0x` hex). " +
      'Accepted once.',
  }),
  'x-agent-solana-signature': z.string().optional().openapi({
    description: 'Only with `solana_public_key` (non-Solana identities): Ed25519 signature by that key of the same canonical message, proving the key consents to the link.',
  }),
});

export const RegisterBody = z
  .strictObject({
    display_name: plainText(80).openapi({ description: 'Shown in the directory: 1 to 80 characters, no control characters.', example: 'Invoice Auditor' }),
    description: plainText(500, 0).nullable().optional().openapi({ description: 'At most 500 characters; absent or null: none.', example: 'Audits invoices against purchase orders.' }),
    capabilities: z
      .array(capabilitySlug)
      .max(MAX_CAPABILITIES)
      .refine((slugs) => new Set(slugs).size === slugs.length, 'must not repeat a capability')
      .optional()
      .openapi({ description: `Up to ${MAX_CAPABILITIES} distinct lower-case slugs (\`^[a-z0-9][a-z0-9-]{0,39}$\`); absent: none.` }),
    solana_public_key: solanaPublicKey.nullable().optional().openapi({
      description:
        'Links a Solana key (so its reputation can be found from this profile) to an ERC-8004 or EVM identity; needs `X-Agent-Solana-Signature`. ' +
        "Absent or null: no link. For a Solana identity it is the identifier's own key (leave it out).",
    }),
  })
  .openapi('AgentRegistrationRequest');
export type RegisterBody = z.infer<typeof RegisterBody>;

export const AgentProfile = z
  .object({
    id: z.uuid().openapi({ description: 'The registration id.' }),
    identifier: z.string().openapi({
      description: 'The canonical identifier: `erc8004:eip155:4217:<agent id>`, `solana:<base58 key>`, or the lower-cased EVM address.',
      example: 'erc8004:eip155:4217:42',
    }),
    display_name: z.string(),
    description: z.string().nullable(),
    capabilities: z.array(z.string()).openapi({ description: 'Lower-case slugs, in the order registered.', example: ['invoice-audit', 'payroll'] }),
    erc8004_agent_id: z.string().nullable().openapi({ description: 'The numeric ERC-8004 agent id on Tempo (decimal string); null for other identities.', example: '42' }),
    solana_public_key: z.string().nullable().openapi({ description: "The Solana identity's key, or the Solana key linked to an ERC-8004 or EVM identity; else null." }),
    owner_address: z.string().nullable().openapi({
      description: "EVM identities: the EVM address (EIP-55), or the ERC-8004 agent's owner on the registry when it last registered; null for Solana identities.",
    }),
    registered_at: z.string().openapi({ format: 'date-time', description: 'The first registration.' }),
    updated_at: z.string().openapi({ format: 'date-time', description: 'The latest registration (equal to registered_at until re-registered).' }),
    reputation_url: z.string().nullable().openapi({
      description: 'Path of the public reputation summary: by the ERC-8004 agent id, else by the Solana key; null for an EVM address without a linked key.',
      example: '/api/reputation/42',
    }),
  })
  .openapi('AgentProfile');

export const RegistrationResult = z
  .object({
    created: z.boolean().openapi({ description: 'true for a first registration (201); false when an existing registration was replaced (200).' }),
    agent: AgentProfile,
  })
  .openapi('AgentRegistration');

export const DirectoryQuery = z.object({
  q: z
    .string()
    .trim()
    .max(80)
    .optional()
    .openapi({ param: { name: 'q', in: 'query' }, description: 'Case-insensitive substring of the display name (at most 80 characters).', example: 'audit' }),
  capability: capabilitySlug
    .optional()
    .openapi({ param: { name: 'capability', in: 'query' }, description: 'Only agents that list this capability slug.', example: 'invoice-audit' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .openapi({ param: { name: 'limit', in: 'query' }, description: 'Page size: 1 to 100, default 20.' }),
  cursor: z
    .string()
    .max(200)
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: '`next_cursor` of the previous page (opaque).' }),
});

export const Directory = z
  .object({
    agents: z.array(AgentProfile).openapi({ description: 'Newest registration first.' }),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .openapi('AgentDirectory');

export const ProfileParams = z.object({
  id: withEvmAddressRule(z.string().min(1).max(200)).openapi({
    param: { name: 'id', in: 'path' },
    description: 'A registration id (uuid), or an identifier in any accepted spelling, URL-encoded (e.g. `erc8004%3Aeip155%3A4217%3A42`).',
    example: 'erc8004:eip155:4217:42',
  }),
});

/** The registration id inside a directory cursor. */
export const CursorRegistrationId = z.uuid();
