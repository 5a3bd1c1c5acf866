import { zodToOpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '@hono/zod-openapi';
import { formatUsd } from '../../money.js';
import { presentCardOffer, type RouteOffers } from '../../payments/offers.js';
import { findPaidRoute, type PaidRoute } from '../../payments/prices.js';
import { AgentPayBody } from '../agents/index.js';
import { AgentProfile, Directory, DirectoryQuery, ProfileParams, RegisterBody } from '../agent-directory/index.js';
import { PaidOfframpBody } from '../bridge/index.js';
import { CheckBody } from '../compliance/index.js';
import { DeliverBody, EscrowIdParams, PostEscrowBody } from '../escrow/index.js';
import { DecodeBody } from '../memo/index.js';
import { ExecuteBody, HistoryParams, HistoryQuery, PayslipParams } from '../payroll/index.js';
import { ReputationParams, ReputationSummarySchema } from '../reputation/index.js';
import { OptimizeBody, SessionBody, YieldRatesQuery } from '../treasury/index.js';
import { AdvanceBody } from '../wages/index.js';

/**
 * The MCP tool catalog (spec 4.6): each tool is one REST route of this service. Its arguments are
 * validated by the very zod schemas the route validates with (imported, never copied), and mapped
 * onto the request: path parameters by name into the path, the other arguments of a GET into the
 * query string, the whole argument object of a POST as its JSON body. Prices come from PRICE_TABLE,
 * the table the payment gate charges by.
 */

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface ToolDefinition {
  /** The tool name without the service prefix: `svc_<suffix>`. */
  suffix: string;
  method: 'GET' | 'POST';
  /** OpenAPI-style path, e.g. /api/mpp/escrow/{id}/status. */
  path: string;
  title: string;
  description: string;
  /** The route's path-parameter schema (argument names equal the path's `{names}`). */
  params?: AnyObject;
  /** The route's query schema (GET). */
  query?: AnyObject;
  /** The route's JSON body schema (POST): the tool's arguments are exactly the body. */
  body?: AnyObject;
  /** Free tools only: the route's 200 schema, declared as the tool's outputSchema. */
  output?: z.ZodType;
  /** Paid tools that move money or change state beyond the fee (annotations.destructiveHint). */
  mutates?: boolean;
}

const PROOF =
  'Needs the agent identity proof: X-Agent-Identifier, X-Agent-Timestamp and X-Agent-Signature HTTP headers on the MCP request, signing ' +
  '`POST <path>` and the body JSON.stringify(arguments) (docs/api.md, "MCP").';
const PAID_IDENTITY = 'Identity beyond payment: X-Identity-Token (identity-provider JWT) or X-Agent-Key HTTP header on the MCP request.';

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    suffix: 'agents_directory',
    method: 'GET',
    path: '/api/agents/directory',
    title: 'Agent directory',
    description: 'Lists registered agents, newest first; filter by name substring (q) or capability; page with cursor. Free.',
    query: DirectoryQuery,
    output: Directory,
  },
  {
    suffix: 'agents_profile',
    method: 'GET',
    path: '/api/agents/profile/{id}',
    title: 'Agent profile',
    description: "A registered agent's public profile by registration id or identifier (e.g. erc8004:eip155:4217:42, solana:<key>), given as is (the tool URL-encodes it). Free.",
    params: ProfileParams,
    output: AgentProfile,
  },
  {
    suffix: 'reputation_get',
    method: 'GET',
    path: '/api/reputation/{address}',
    title: 'Reputation summary',
    description: 'Reputation of a Solana public key (base58) or a numeric ERC-8004 agent id, from the artifacts written on chain. Free.',
    params: ReputationParams,
    output: ReputationSummarySchema,
  },
  {
    suffix: 'openapi_spec',
    method: 'GET',
    path: '/api/openapi.json',
    title: 'OpenAPI document',
    description: "This service's OpenAPI 3.0.3 document: every REST route, its price (x-payment) and schemas. Free.",
    output: z.object({}).loose(),
  },
  {
    suffix: 'treasury_yield_rates',
    method: 'GET',
    path: '/api/mpp/treasury/yield-rates',
    title: 'Treasury yield rates',
    description: 'Yield sources and the blended APY of the default allocation.',
    query: YieldRatesQuery,
  },
  {
    suffix: 'compliance_check',
    method: 'POST',
    path: '/api/mpp/compliance/check',
    title: 'Compliance check',
    description: `Screens an EVM wallet against sanctions lists, blocklists and a TIP-403 policy. With employerId: ${PAID_IDENTITY}`,
    body: CheckBody,
  },
  {
    suffix: 'memo_decode',
    method: 'POST',
    path: '/api/mpp/memo/decode',
    title: 'Decode payroll memo',
    description: 'Decodes a 32-byte payroll memo (0x + 64 hex) into its payroll fields.',
    body: DecodeBody,
  },
  {
    suffix: 'agent_pay',
    method: 'POST',
    path: '/api/mpp/agent/pay',
    title: 'Agent payment',
    description: `Pays a recipient on Tempo from an employer treasury as an agent the employer authorized. ${PROOF} Idempotency-Key header honoured.`,
    body: AgentPayBody,
    mutates: true,
  },
  {
    suffix: 'agent_register',
    method: 'POST',
    path: '/api/mpp/agents/register',
    title: 'Register an agent',
    description: `Lists (or replaces) an agent in the public directory. ${PROOF} X-Agent-Solana-Signature when linking solana_public_key.`,
    body: RegisterBody,
    mutates: true,
  },
  {
    suffix: 'payroll_execute',
    method: 'POST',
    path: '/api/mpp/payroll/execute',
    title: 'Execute payroll',
    description: `Pays a prepared payroll run on chain in one batch. ${PAID_IDENTITY}`,
    body: ExecuteBody,
    mutates: true,
  },
  {
    suffix: 'employee_advance',
    method: 'POST',
    path: '/api/mpp/employee/advance',
    title: 'Salary advance',
    description: `Claims an employee's accrued streamed salary to their wallet. ${PAID_IDENTITY}`,
    body: AdvanceBody,
    mutates: true,
  },
  {
    suffix: 'bridge_offramp',
    method: 'POST',
    path: '/api/mpp/bridge/offramp',
    title: 'Cash out to a bank',
    description: "An employee's off-ramp to a registered bank account. Identity: the employee's X-Identity-Token HTTP header.",
    body: PaidOfframpBody,
    mutates: true,
  },
  {
    suffix: 'treasury_optimize',
    method: 'POST',
    path: '/api/mpp/treasury/optimize',
    title: 'Treasury optimisation',
    description: `Treasury allocation advice for an employer. ${PAID_IDENTITY}`,
    body: OptimizeBody,
  },
  {
    suffix: 'payslip_get',
    method: 'GET',
    path: '/api/mpp/payslips/{runId}/{employeeId}',
    title: 'Payslip',
    description: `One employee's payslip of a payroll run. ${PAID_IDENTITY}`,
    params: PayslipParams,
  },
  {
    suffix: 'employee_history',
    method: 'GET',
    path: '/api/mpp/employee/{id}/history',
    title: 'Employee payment history',
    description: `An employee's payments, newest first. ${PAID_IDENTITY}`,
    params: HistoryParams,
    query: HistoryQuery,
  },
  {
    suffix: 'escrow_post',
    method: 'POST',
    path: '/api/mpp/escrow/post',
    title: 'Post an escrow',
    description: `Locks up to 100 USDC of an employer treasury in a Solana escrow for a worker agent, judged against the rubric on delivery. ${PROOF}`,
    body: PostEscrowBody,
    mutates: true,
  },
  {
    suffix: 'escrow_deliver',
    method: 'POST',
    path: '/api/mpp/escrow/deliver',
    title: 'Deliver escrowed work',
    description:
      `The worker delivers (https URL, ipfs:// link or data: URI); judged in the background, poll svc_escrow_status. X-Agent-Identifier: the escrow's worker_agent_identifier. ${PROOF}`,
    body: DeliverBody,
    mutates: true,
  },
  {
    suffix: 'escrow_status',
    method: 'GET',
    path: '/api/mpp/escrow/{id}/status',
    title: 'Escrow status',
    description: "An escrow's public fields, verdict and signatures.",
    params: EscrowIdParams,
  },
  {
    suffix: 'treasury_session',
    method: 'POST',
    path: '/api/mpp/agent/session/treasury',
    title: 'Treasury session action',
    description: `balance, yield, rebalance or headcount for an employer treasury. ${PAID_IDENTITY}`,
    body: SessionBody,
    mutates: true,
  },
];

/** What a tool's `_meta` says about its price (spec 4.6): what its route's 402 offers (`RouteOffers`). */
export interface ToolPricing {
  /** USD decimal with 6 places, as in the 402 body and `x-payment`; "0.000000" for a free tool. */
  price: string;
  currency: 'USD';
  /** A: MPP on Tempo; B: x402 on Base; C: x402 on Solana. Empty for a free tool. */
  rails: string[];
  /** `mpp` for rail A, `x402` for rails B and C. */
  protocols: string[];
  /** What one price buys: `charge`, `session`, `tick`; null for a free tool. */
  unit: string | null;
  /** The card charge the route's 402 offers next to rail A (a card processor is configured), or false; `credit`: a card credit top-up. */
  card: ReturnType<typeof presentCardOffer>;
  /** `acts`: the fee is collected before the tool does anything; `reads`: after it answers. Null for a free tool. */
  effect: 'reads' | 'acts' | null;
  /** For a tool whose `action` decides: the actions that act (the others read). */
  actingActions?: string[];
  /** The backing REST route, e.g. `POST /api/mpp/agent/pay`. */
  endpoint: string;
}

export interface CatalogTool {
  name: string;
  definition: ToolDefinition;
  paid: PaidRoute | null;
  /** Validates the arguments (the route's own schemas); the raw arguments are what is sent. */
  input: AnyObject;
  /** The `tools/list` entry. */
  listing: {
    name: string;
    title: string;
    description: string;
    inputSchema: { type: 'object'; [key: string]: unknown };
    outputSchema?: { type: 'object'; [key: string]: unknown };
    annotations: Record<string, unknown>;
    _meta: ToolPricing;
  };
}

export const pathParamNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** A tool's price, rails and card as its route's 402 offers them (`offers`), never from the price table directly. */
function pricingOf(definition: ToolDefinition, paid: PaidRoute | null, offers: RouteOffers | null): ToolPricing {
  const rails = offers ? [...offers.rails] : [];
  return {
    price: formatUsd(offers?.price ?? 0n),
    currency: 'USD',
    rails,
    protocols: [...new Set(rails.map((rail) => (rail === 'A' ? 'mpp' : 'x402')))],
    unit: offers?.unit ?? null,
    card: presentCardOffer(offers?.card ?? null),
    // Whether the fee settles before the tool acts (acts) or after it answers (reads).
    effect: paid?.effect ?? null,
    ...(paid?.actingActions && { actingActions: [...paid.actingActions] }),
    endpoint: `${definition.method} ${definition.path}`,
  };
}

function inputSchemaOf(definition: ToolDefinition): AnyObject {
  if (definition.method === 'POST') return definition.body ?? z.object({});
  return z.object({ ...definition.params?.shape, ...definition.query?.shape });
}

/**
 * JSON Schema (draft-07, what the SDK's Ajv validates) of a route schema, with the descriptions and
 * examples its `.openapi()` metadata carries; OpenAPI-only keys are dropped.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } {
  const json = z.toJSONSchema(schema, {
    io,
    target: 'draft-7',
    unrepresentable: 'any',
    metadata: zodToOpenAPIRegistry as unknown as z.core.$ZodRegistry<Record<string, unknown>>,
  }) as Record<string, unknown>;
  const clean = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(clean);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'param' || key === '_internal' || key === 'refId') continue;
      // An output schema tolerates fields added later: a client must not reject a grown response.
      if (io === 'output' && key === 'additionalProperties' && value === false) continue;
      if (key === 'example') {
        if (!('examples' in node)) out.examples = [value];
        continue;
      }
      out[key] = clean(value);
    }
    return out;
  };
  return { ...(clean(json) as Record<string, unknown>), type: 'object' };
}

/**
 * The 19 tools, named `${slug}_...`, with their prices and schemas (built once per app). `offers` is
 * the payment gate's own account of what each paid route's 402 offers (`Payments.offers`).
 */
export function buildCatalog(serviceSlug: string, offers: (route: PaidRoute) => RouteOffers): CatalogTool[] {
  return TOOL_DEFINITIONS.map((definition) => {
    const paid = findPaidRoute(definition.method, definition.path) ?? null;
    const name = `${serviceSlug}_${definition.suffix}`;
    const pricing = pricingOf(definition, paid, paid && offers(paid));
    const input = inputSchemaOf(definition);
    const retry = [
      ...(pricing.rails.includes('A') ? ['_meta["org.paymentauth/credential"] or _meta["mpp/authorization"] (rail A, MPP)'] : []),
      ...(pricing.rails.some((rail) => rail !== 'A') ? ['_meta["x402/payment"] (rails B, C, x402)'] : []),
    ];
    const priceText = paid
      ? `Paid: ${pricing.price} USD${pricing.unit === 'charge' ? '' : ` per ${pricing.unit}`}, rails ${pricing.rails.join(', ')}${pricing.card ? ' (and a card)' : ''}. ` +
        `Call without payment for the 402 challenge, then retry with ${retry.join(' or ')}.`
      : 'Free.';
    return {
      name,
      definition,
      paid,
      input,
      listing: {
        name,
        title: definition.title,
        description: `${definition.description.replace(/ Free\.$/, '')} ${priceText} Backed by ${pricing.endpoint}.`,
        inputSchema: jsonSchemaOf(input, 'input'),
        // Never on a paid tool: clients validate structuredContent against it, even on a 402 result.
        ...(!paid && definition.output ? { outputSchema: jsonSchemaOf(definition.output, 'output') } : {}),
        annotations: paid
          ? { title: definition.title, readOnlyHint: false, destructiveHint: definition.mutates ?? false, idempotentHint: false, openWorldHint: false }
          : { title: definition.title, readOnlyHint: true, openWorldHint: false },
        _meta: pricing,
      },
    };
  });
}
