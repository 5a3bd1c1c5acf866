import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { Challenge, Credential, Mcp, Receipt } from 'mppx';
import { Transport } from 'mppx/server';
import type { Logger } from '../../log.js';
import { pathParamNames, type CatalogTool } from './tools.js';

/**
 * One MCP server per HTTP request (stateless). `tools/call` runs the tool's REST route in process,
 * through the app's own fetch: both front doors run the same gate, validation and handler. The MCP
 * layer adds no authority: what a call may do is what its forwarded payment and identity prove.
 *
 * The low-level `Server` (not `McpServer`) because `McpServer` hands tool handlers the arguments
 * after zod has parsed them (defaults filled in, strings trimmed): the REST request must carry the
 * caller's own arguments, byte for byte what an agent signed for its identity proof.
 */

/** HTTP headers of the MCP request passed on to the REST route as they are. Never `Authorization` (the MCP bearer). */
export const FORWARDED_HEADERS = [
  'X-PAYMENT',
  'PAYMENT-SIGNATURE',
  'X-Agent-Identifier',
  'X-Agent-Timestamp',
  'X-Agent-Signature',
  'X-Agent-Solana-Signature',
  'X-Agent-Key',
  'X-Identity-Token',
  'Idempotency-Key',
  // A draw on the caller's card credit (src/payments/card/credit.ts).
  'Payment-Credit',
] as const;

/** Rail A credential at the HTTP layer (`Authorization` carries the MCP bearer): sent on as `Authorization`. */
export const PAYMENT_AUTHORIZATION_HEADER = 'X-Payment-Authorization';
/** Per-call payment in the tools/call request's `_meta`; it replaces any payment header of the HTTP request. */
export const MPP_META_KEY = 'mpp/authorization';
export const X402_META_KEY = 'x402/payment';
/** Result `_meta` keys. */
export const STATUS_META_KEY = 'http/status';
export const RECEIPTS_META_KEY = 'payment/receipts';
export const X402_RESPONSE_META_KEY = 'x402/payment-response';
export const MPP_RECEIPT_META_KEY = 'mpp/receipt';
/**
 * mppx's MCP convention (`mppx/mcp-sdk/client`'s `McpClient.wrap`): the credential object in
 * `_meta["org.paymentauth/credential"]`, the challenges in `_meta["org.paymentauth/payment-required"]`
 * of a 402 result (or the -32042 / -32043 error's `data`), the receipt in `_meta["org.paymentauth/receipt"]`.
 */
export const { credentialMetaKey: PAYMENTAUTH_CREDENTIAL_META_KEY, paymentRequiredMetaKey: PAYMENTAUTH_REQUIRED_META_KEY, receiptMetaKey: PAYMENTAUTH_RECEIPT_META_KEY } = Mcp;

const MPP_SCHEME = /^(payment|mpp)\s+\S/i;
const RECEIPT_HEADERS = ['Payment-Receipt', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE', 'Payment-Credit', 'Payment-Credit-Remaining'] as const;
/** mppx's own MCP server transport: reads the credential from `_meta` and attaches receipts the way its client expects. */
const paymentAuth = Transport.mcpSdk();

/** Rail A's payment of one call: the credential sent on (decoded, when it decodes), and whether it came in mppx's `_meta` key. */
interface RailAPayment {
  credential: Credential.Credential | null;
  viaPaymentAuth: boolean;
}

export interface McpServerDeps {
  catalog: readonly CatalogTool[];
  /** The app's own fetch (with the incoming request's bindings). */
  fetch: (request: Request) => Response | Promise<Response>;
  /** scheme://host[:port] of the public base URL: in-process requests are addressed there. */
  origin: string;
  /** Passed on as X-Request-Id so the REST route's log lines join this request's. */
  requestId: string;
  log: Logger;
  instructions: string;
}

type Headers_ = Record<string, string | string[] | undefined>;

export function createMcpServer(deps: McpServerDeps): Server {
  const server = new Server(
    { name: 'payroll-agent-payments', title: 'Payroll and agent payments', version: '1.0.0' },
    // Stateless: no session can be told that the list changed.
    { capabilities: { tools: { listChanged: false } }, instructions: deps.instructions },
  );
  const byName = new Map(deps.catalog.map((tool) => [tool.name, tool]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: deps.catalog.map((tool) => tool.listing) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const started = performance.now();
    const result = await callTool(deps, tool, request.params.arguments ?? {}, request.params._meta ?? {}, extra.requestInfo?.headers ?? {});
    const ms = Math.round(performance.now() - started);
    if (result instanceof McpError) {
      deps.log.info({ tool: tool.name, status: 402, rpcError: result.code, ms }, 'mcp tool call');
      throw result;
    }
    deps.log.info({ tool: tool.name, status: result._meta?.[STATUS_META_KEY] ?? null, isError: result.isError ?? false, ms }, 'mcp tool call');
    return result;
  });
  return server;
}

async function callTool(
  deps: McpServerDeps,
  tool: CatalogTool,
  args: Record<string, unknown>,
  meta: Record<string, unknown>,
  headers: Headers_,
): Promise<CallToolResult | McpError> {
  // Checked here with the route's own schemas, so a malformed call is not charged (the gate runs
  // before the route's validation); what is sent is the caller's arguments, unparsed.
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) {
    return errorResult(400, {
      error: `Invalid arguments for ${tool.name}; nothing was sent or charged.`,
      code: 'VALIDATION_ERROR',
      issues: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    });
  }
  const outgoing = forwardedHeaders(headers, meta);
  if ('refused' in outgoing) return errorResult(400, { error: outgoing.refused, code: 'PAYMENT_INVALID' });
  outgoing.headers.set('X-Request-Id', deps.requestId);
  outgoing.headers.set('Accept', 'application/json');

  const { method, path } = tool.definition;
  const pathNames = pathParamNames(path);
  let target = path.replaceAll(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(args[name])));
  let body: string | undefined;
  if (method === 'GET') {
    const queryKeys = new Set(Object.keys(tool.definition.query?.shape ?? {}));
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(args)) {
      if (queryKeys.has(key) && !pathNames.includes(key) && value !== undefined && value !== null) query.append(key, String(value));
    }
    if (query.size > 0) target += `?${query.toString()}`;
  } else {
    // Exactly the bytes an agent signs: JSON.stringify of the arguments (minus path parameters), keys in the order sent.
    body = JSON.stringify(pathNames.length === 0 ? args : Object.fromEntries(Object.entries(args).filter(([key]) => !pathNames.includes(key))));
    outgoing.headers.set('Content-Type', 'application/json');
  }

  const response = await deps.fetch(new Request(`${deps.origin}${target}`, { method, headers: outgoing.headers, ...(body === undefined ? {} : { body }) }));
  return toResult(tool, response, outgoing.railA);
}

/** The payment and identity headers for the REST request, or why the payment given cannot be sent. */
function forwardedHeaders(incoming: Headers_, meta: Record<string, unknown>): { headers: Headers; railA: RailAPayment } | { refused: string } {
  let credential: Credential.Credential | null;
  try {
    credential = paymentAuth.getCredential({ _meta: meta });
  } catch {
    return { refused: `_meta["${PAYMENTAUTH_CREDENTIAL_META_KEY}"] must be an MPP credential object {challenge, payload}` };
  }
  const forwarded = forwardedHeadersOf(incoming, meta, credential);
  if ('refused' in forwarded) return forwarded;
  const authorization = forwarded.headers.get('Authorization');
  return { headers: forwarded.headers, railA: { credential: credential ?? (authorization ? decodeCredential(authorization) : null), viaPaymentAuth: credential !== null } };
}

/** The credential of an `Authorization: Payment ...` value, or null (a legacy `mpp ...` scheme, or not decodable: the gate says why). */
function decodeCredential(authorization: string): Credential.Credential | null {
  try {
    return Credential.deserialize(authorization);
  } catch {
    return null;
  }
}

function forwardedHeadersOf(incoming: Headers_, meta: Record<string, unknown>, credential: Credential.Credential | null): { headers: Headers } | { refused: string } {
  const header = (name: string) => {
    const value = incoming[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = header(name);
    if (value !== undefined) headers.set(name, value);
  }
  const httpAuthorization = header(PAYMENT_AUTHORIZATION_HEADER);
  const mpp = meta[MPP_META_KEY];
  const x402 = meta[X402_META_KEY];
  if (credential !== null || mpp !== undefined || x402 !== undefined) {
    // A payment in _meta is this call's payment: none from the HTTP layer goes with it.
    headers.delete('X-PAYMENT');
    headers.delete('PAYMENT-SIGNATURE');
    headers.delete('Payment-Credit');
    if (credential !== null && mpp !== undefined) return { refused: `send the MPP credential in _meta["${PAYMENTAUTH_CREDENTIAL_META_KEY}"] or _meta["${MPP_META_KEY}"], not both` };
    if (credential !== null) headers.set('Authorization', Credential.serialize(credential));
    if (mpp !== undefined) {
      if (typeof mpp !== 'string' || !MPP_SCHEME.test(mpp)) return { refused: `_meta["${MPP_META_KEY}"] must be the credential string "Payment ..."` };
      headers.set('Authorization', mpp);
    }
    if (x402 !== undefined) {
      if (typeof x402 === 'string') headers.set('X-PAYMENT', x402);
      else if (x402 !== null && typeof x402 === 'object' && !Array.isArray(x402)) headers.set('X-PAYMENT', Buffer.from(JSON.stringify(x402)).toString('base64'));
      else return { refused: `_meta["${X402_META_KEY}"] must be an x402 PaymentPayload object or its base64 X-PAYMENT encoding` };
    }
    return { headers };
  }
  if (httpAuthorization !== undefined) {
    if (!MPP_SCHEME.test(httpAuthorization)) return { refused: `${PAYMENT_AUTHORIZATION_HEADER} must be an MPP credential "Payment ..."` };
    headers.set('Authorization', httpAuthorization);
  }
  return { headers };
}

async function toResult(tool: CatalogTool, response: Response, railA: RailAPayment): Promise<CallToolResult | McpError> {
  const text = await response.text();
  const meta = resultMeta(response);
  if (response.status >= 200 && response.status < 300) {
    const result: CallToolResult = { content: [{ type: 'text', text }], _meta: meta };
    if (tool.listing.outputSchema) {
      const structured = parseJson(text);
      if (structured !== null && typeof structured === 'object' && !Array.isArray(structured)) result.structuredContent = structured as Record<string, unknown>;
    }
    return withPaymentAuthReceipt(result, response, railA);
  }
  const parsed = parseJson(text);
  const body = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { error: text };
  if (response.status === 402) return paymentRequiredAnswer(tool, response, body, meta, railA);
  const result: CallToolResult = { isError: true, content: [{ type: 'text', text: JSON.stringify({ status: response.status, ...body }) }], _meta: meta };
  // A fee kept by an answer below 500 (a 403 or 404 after payment) has its receipt too.
  return withPaymentAuthReceipt(result, response, railA);
}

/**
 * A 402 (docs/decisions.md, "The MCP endpoint"): to every caller a tool result carrying our challenge
 * (x402 and `mpp/authorization` clients read it) and mppx's `_meta["org.paymentauth/payment-required"]`
 * (mppx's `McpClient.wrap` pays it). A call that came with an `org.paymentauth` credential speaks
 * mppx's convention, so its refusal is mppx's JSON-RPC error: -32042 (payment required) or -32043
 * (the credential was refused), with the fresh challenges in `data`.
 */
function paymentRequiredAnswer(tool: CatalogTool, response: Response, body: Record<string, unknown>, meta: Record<string, unknown>, railA: RailAPayment): CallToolResult | McpError {
  const challenge = paymentChallenge(tool, response, body);
  const required = paymentAuthRequired(response, challenge);
  if (required && railA.viaPaymentAuth) {
    const code = challenge.code === 'PAYMENT_REQUIRED' ? Mcp.paymentRequiredCode : Mcp.paymentVerificationFailedCode;
    return new McpError(code, String(challenge.message), required);
  }
  // x402's MCP transport reads a PaymentRequired from structuredContent; paid tools declare no outputSchema.
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(challenge) }],
    structuredContent: challenge,
    _meta: { ...meta, ...(required && { [PAYMENTAUTH_REQUIRED_META_KEY]: required }) },
  };
}

/** mppx's payment-required data: the 402's MPP challenges (rail A, and the card), and why a credential was refused. Null without any. */
function paymentAuthRequired(response: Response, challenge: Record<string, unknown>): Record<string, unknown> | null {
  let challenges: Challenge.Challenge[];
  try {
    challenges = Challenge.fromHeadersList(response.headers);
  } catch {
    return null;
  }
  const refused = challenge.code !== 'PAYMENT_REQUIRED';
  return {
    httpStatus: 402,
    challenges,
    ...(refused && { problem: { title: challenge.code, status: 402, detail: challenge.message } }),
  };
}

/** mppx's receipt (`_meta["org.paymentauth/receipt"]`, with the challenge id its client matches), by mppx's own transport. */
function withPaymentAuthReceipt(result: CallToolResult, response: Response, railA: RailAPayment): CallToolResult {
  const header = response.headers.get('Payment-Receipt');
  if (!header || !railA.credential) return result;
  let receipt: Receipt.Receipt;
  try {
    receipt = Receipt.deserialize(header);
  } catch {
    return result; // a session receipt: the raw header is in the receipts
  }
  const { credential } = railA;
  return paymentAuth.respondReceipt({ challengeId: credential.challenge.id, credential, input: {}, receipt, response: result });
}

/**
 * A 402 as a tool result: the route's challenges (rail A's WWW-Authenticate, rails B and C's
 * decoded PAYMENT-REQUIRED), the price, and, at the top level, the x402 PaymentRequired fields
 * (x402Version, resource, accepts) so x402 MCP clients can pay it as they are.
 */
function paymentChallenge(tool: CatalogTool, response: Response, body: Record<string, unknown>): Record<string, unknown> {
  const pricing = tool.listing._meta;
  const required = response.headers.get('PAYMENT-REQUIRED');
  let paymentRequired: Record<string, unknown> | null = null;
  if (required) {
    try {
      paymentRequired = decodePaymentRequiredHeader(required) as unknown as Record<string, unknown>;
    } catch {
      paymentRequired = null;
    }
  }
  paymentRequired ??= Array.isArray(body.accepts) ? { x402Version: body.x402Version ?? 1, accepts: body.accepts } : null;
  return {
    status: 402,
    error: 'payment_required',
    code: body.code ?? 'PAYMENT_REQUIRED',
    message: typeof body.error === 'string' ? body.error : 'Payment required.',
    wwwAuthenticate: response.headers.get('WWW-Authenticate'),
    paymentRequired,
    price: pricing.price,
    currency: pricing.currency,
    unit: pricing.unit,
    rails: pricing.rails,
    protocols: pricing.protocols,
    endpoint: pricing.endpoint,
    howToPay:
      `Retry the same call with the payment: rail A (MPP) the "Payment ..." credential for wwwAuthenticate in _meta["${MPP_META_KEY}"] ` +
      `(or the ${PAYMENT_AUTHORIZATION_HEADER} HTTP header); rails B and C (x402) a PaymentPayload for one of accepts in _meta["${X402_META_KEY}"].`,
    ...(paymentRequired ? { x402Version: paymentRequired.x402Version, resource: paymentRequired.resource, accepts: paymentRequired.accepts } : {}),
  };
}

/** The result's `_meta`: the route's HTTP status and any payment receipt (settlement) it answered with. */
function resultMeta(response: Response): Record<string, unknown> {
  const meta: Record<string, unknown> = { [STATUS_META_KEY]: response.status };
  const receipts: Record<string, string> = {};
  for (const name of RECEIPT_HEADERS) {
    const value = response.headers.get(name);
    if (value) receipts[name] = value;
  }
  if (Object.keys(receipts).length === 0) return meta;
  meta[RECEIPTS_META_KEY] = receipts;
  const settlement = receipts['PAYMENT-RESPONSE'] ?? receipts['X-PAYMENT-RESPONSE'];
  if (settlement) {
    try {
      meta[X402_RESPONSE_META_KEY] = decodePaymentResponseHeader(settlement);
    } catch {
      // the raw header is in the receipts
    }
  }
  if (receipts['Payment-Receipt']) {
    try {
      meta[MPP_RECEIPT_META_KEY] = Receipt.deserialize(receipts['Payment-Receipt']);
    } catch {
      // a session receipt or another encoding: the raw header is in the receipts
    }
  }
  return meta;
}

function errorResult(status: number, body: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ status, ...body }) }], _meta: { [STATUS_META_KEY]: status } };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
