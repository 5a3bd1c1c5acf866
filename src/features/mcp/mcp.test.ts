import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { eq } from 'drizzle-orm';
import { getBase58Decoder } from '@solana/kit';
import { Challenge, Credential } from 'mppx';
import { Mppx, stripe, tempo } from 'mppx/client';
import { McpClient } from 'mppx/mcp-sdk/client';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders, type AgentSigner } from '../../../test/support/agents.js';
import { OAuthFlow } from '../../../test/reliability/support/auth-oauth.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { x402Payloads } from '../../../test/support/pay.js';
import type { AppEnv } from '../../http/context.js';
import { createLogger } from '../../log.js';
import { formatUsd } from '../../money.js';
import { findPaidRoute } from '../../payments/prices.js';
import { payments } from '../../payments/tables.js';
import { AccessTokens } from '../oauth/access-tokens.js';
import { TreasuryService } from '../treasury/service.js';
import { mcpRoutes } from './routes.js';
import { TOOL_DEFINITIONS } from './tools.js';

/**
 * The MCP front door (spec 4.6, 5.5) with the official SDK client against the real app on loopback
 * with the embedded chains: the bearer, Origin and methods; the 19-tool catalog and its prices;
 * every tool called once and answered by its REST route, paid with the unmodified mppx (rail A)
 * and x402 (rails B, C) clients through the tool call's `_meta` or the HTTP headers.
 */
const USD = 1_000_000n;
let t: TestApp;
let server: LoopbackServer;
let mcpUrl: string;
let owner: string;
let employerId: string;
let agentKey: string;

type Json = Record<string, any>;
const json = async <T = Json>(response: Response) => (await response.json()) as T;
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;
const bodyOf = (result: CallToolResult) => JSON.parse(textOf(result)) as Json;
const statusOf = (result: CallToolResult) => result._meta?.['http/status'];

/** An access token from a real grant (its family must be live), or, for another audience, one signed with the app's key. */
async function bearer(userId = `mcp-user-${randomUUID()}`, audience?: string): Promise<string> {
  if (!audience) return (await new OAuthFlow(t, await t.token(userId, `${userId}@mcp.example`)).grant()).tokens.access_token;
  const issuer = new AccessTokens({ issuer: t.config.publicBaseUrl, audience, configuredKey: undefined, dataDir: t.config.dataDir });
  return (await issuer.issue({ userId, clientId: 'test', scopes: ['mcp:tools'], familyId: randomUUID() })).token;
}

/** The SDK client over streamable HTTP with a bearer; `headers` are added to the HTTP requests while set (per call). */
async function connect(): Promise<{ client: Client; headers: Record<string, string>; close(): Promise<void> }> {
  const headers: Record<string, string> = {};
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${await bearer()}` } },
    fetch: (url, init) => {
      const merged = new Headers(init?.headers);
      for (const [name, value] of Object.entries(headers)) merged.set(name, value);
      return fetch(url, { ...init, headers: merged });
    },
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, headers, close: () => client.close() };
}

let mcp: Awaited<ReturnType<typeof connect>>;
const name = (suffix: string) => `${t.config.serviceSlug}_${suffix}`;

async function call(suffix: string, args: Json, options: { meta?: Json; headers?: Record<string, string> } = {}): Promise<CallToolResult> {
  for (const key of Object.keys(mcp.headers)) delete mcp.headers[key];
  Object.assign(mcp.headers, options.headers ?? {});
  try {
    return (await mcp.client.callTool({ name: name(suffix), arguments: args, ...(options.meta ? { _meta: options.meta } : {}) })) as CallToolResult;
  } finally {
    for (const key of Object.keys(mcp.headers)) delete mcp.headers[key];
  }
}

async function faucet(network: string, address: string, amount: string) {
  const response = await t.request('POST', '/api/dev/faucet', { body: { network, address, amount } });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** Rail A: mppx's Tempo charge turns a tool's 402 `wwwAuthenticate` into a `Payment ...` credential. */
async function railAPayer(amountUsd = '20') {
  const account = privateKeyToAccount(generatePrivateKey());
  await faucet('eip155:4217', account.address, amountUsd);
  const client = createClient({ chain: tempoChain, transport: http(`${server.url}/api/dev/rpc/tempo`), account });
  const mppx = Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false });
  return (wwwAuthenticate: string) => mppx.createCredential(new Response(null, { status: 402, headers: { 'WWW-Authenticate': wwwAuthenticate } }));
}

let payA: Awaited<ReturnType<typeof railAPayer>>;

/** The unpaid call must answer the 402 challenge; the same call is then paid on rail A through `_meta`. */
async function paidA(suffix: string, args: Json, headers: () => Promise<Record<string, string>> | Record<string, string> = () => ({})) {
  const challenge = await call(suffix, args);
  expect(challenge.isError, textOf(challenge)).toBe(true);
  const required = bodyOf(challenge);
  expect(required).toMatchObject({ status: 402, error: 'payment_required', wwwAuthenticate: expect.stringMatching(/^Payment /) });
  const credential = await payA(required.wwwAuthenticate);
  return call(suffix, args, { meta: { 'mpp/authorization': credential }, headers: await headers() });
}

/** A request signed as the agent: POST <route path> and exactly JSON.stringify(arguments). */
const proof = (identifier: string, signer: AgentSigner, path: string, args: Json) =>
  agentProofHeaders(identifier, signer, { method: 'POST', path, body: JSON.stringify(args) });

async function hmacAgent(): Promise<{ identifier: string; signer: AgentSigner }> {
  const body = { label: 'MCP bot', agent_identifier: `mcp-${randomUUID()}`, per_tx_cap_usd: '50', per_day_cap_usd: '500', velocity_per_minute: 100 };
  const response = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, { token: owner, body });
  expect(response.status, await response.clone().text()).toBe(201);
  const created = await json<{ agent_identifier: string; hmac_secret: string }>(response);
  return { identifier: created.agent_identifier, signer: { hmac: created.hmac_secret } };
}

function solanaIdentity() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const key = getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
  return { key, identifier: `solana:${key}`, signer: { ed25519: privateKey } as AgentSigner };
}

async function addEmployee(extra: Json = {}) {
  const account = privateKeyToAccount(generatePrivateKey());
  const email = `mcp-${randomUUID().slice(0, 8)}@mcp.example`;
  const response = await t.request('POST', `/api/employers/${employerId}/team`, { token: owner, body: { email, full_name: 'Ada Tools', wallet_address: account.address, ...extra } });
  expect(response.status, await response.clone().text()).toBe(201);
  const id = (await json<{ id: string }>(response)).id;
  return { id, account, token: await t.token(`mcp-employee-${id}`, email) };
}

beforeAll(async () => {
  t = await startTestApp({ BRIDGE_SANDBOX_STEP_SECONDS: '1' }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  mcpUrl = `${server.url}/api/mcp`;
  owner = await t.token(`mcp-owner-${randomUUID()}`, 'owner@mcp.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'MCP Co' } }))).id;
  const tempoChainPort = t.chains!.tempo;
  await faucet('eip155:4217', tempoChainPort.serviceAddress, '5000');
  await tempoChainPort.depositToTreasury(await new TreasuryService({ tempo: tempoChainPort, employers: t.services.employers }).accountId(employerId), 5000n * USD);
  // The service's Solana float that funds escrow custody.
  await faucet(t.chains!.solana.network, t.chains!.solana.serviceAddress, '1000');
  agentKey = (await json<{ agent_key: string }>(await t.request('POST', `/api/employers/${employerId}/agent-key`, { token: owner }))).agent_key;
  payA = await railAPayer('20');
  mcp = await connect();
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await t?.close();
});

describe('the endpoint', () => {
  const post = (headers: Record<string, string>) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it('answers 401 with the protected resource metadata without a bearer, and refuses a token for another audience', async () => {
    const missing = await post({});
    expect(missing.status).toBe(401);
    const challenge = missing.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${t.config.publicBaseUrl}/.well-known/oauth-protected-resource"`);
    expect(challenge).not.toContain('error=');

    for (const token of ['not-a-jwt', await bearer('u', `${t.config.publicBaseUrl}/api/other`), await bearer('u', 'https://elsewhere.example/api/mcp')]) {
      const refused = await post({ authorization: `Bearer ${token}` });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", .*resource_metadata="/);
    }
    // An identity-provider JWT (the internal API's bearer) is not an MCP access token either.
    expect((await post({ authorization: `Bearer ${owner}` })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${await bearer()}` })).status).toBe(200);
  });

  it('answers 405 (Allow: POST) to GET and DELETE, and 403 to a foreign Origin', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl, { method, headers: { authorization: `Bearer ${await bearer()}`, accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    const token = await bearer();
    const foreign = await post({ authorization: `Bearer ${token}`, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await json(foreign)).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
    // The public base URL's own origin may call it.
    expect((await post({ authorization: `Bearer ${token}`, origin: new URL(t.config.publicBaseUrl).origin })).status).toBe(200);
    // Browsers may read the challenge and send the MCP headers.
    const preflight = await fetch(mcpUrl, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'mcp-protocol-version, x-payment-authorization' },
    });
    expect((preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('mcp-protocol-version');
  });

  it('is documented in the OpenAPI document, which stays valid', async () => {
    const document = await json(await t.request('GET', '/api/openapi.json'));
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(document.paths['/api/mcp'].post).toMatchObject({ security: [{ mcpOAuth: ['mcp:tools'] }] });
    expect(Object.keys(document.paths['/api/mcp'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '403']));
    expect(document.paths['/api/mcp'].get.responses['405']).toBeDefined();
    expect(document['x-mcp-server']).toMatchObject({ url: `${t.config.publicBaseUrl}/api/mcp` });
  });
});

describe('tools/list', () => {
  it('lists the 19 tools with the live prices of PRICE_TABLE; paid tools declare no outputSchema; listChanged is false', async () => {
    expect(mcp.client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    const { tools } = await mcp.client.listTools();
    expect(tools).toHaveLength(19);
    const expected = [
      'agents_directory', 'agents_profile', 'reputation_get', 'openapi_spec',
      'treasury_yield_rates', 'compliance_check', 'memo_decode', 'agent_pay', 'agent_register',
      'payroll_execute', 'employee_advance', 'bridge_offramp', 'treasury_optimize',
      'payslip_get', 'employee_history', 'escrow_post', 'escrow_deliver', 'escrow_status', 'treasury_session',
    ];
    expect(tools.map((tool) => tool.name).sort()).toEqual(expected.map((suffix) => `svc_${suffix}`).sort());
    const free = ['agents_directory', 'agents_profile', 'reputation_get', 'openapi_spec'].map((suffix) => `svc_${suffix}`);
    for (const tool of tools) {
      const definition = TOOL_DEFINITIONS.find((d) => `svc_${d.suffix}` === tool.name)!;
      const paid = findPaidRoute(definition.method, definition.path);
      expect(tool._meta?.endpoint).toBe(`${definition.method} ${definition.path}`);
      expect(tool.inputSchema.type).toBe('object');
      if (free.includes(tool.name)) {
        expect(paid, tool.name).toBeUndefined();
        expect(tool._meta).toMatchObject({ price: '0.000000', currency: 'USD', rails: [], protocols: [], unit: null });
        expect(tool.annotations?.readOnlyHint).toBe(true);
        expect(tool.outputSchema?.type).toBe('object');
      } else {
        expect(paid, tool.name).toBeDefined();
        expect(tool._meta).toEqual({
          price: formatUsd(paid!.price),
          currency: 'USD',
          rails: [...paid!.rails],
          protocols: paid!.rails.includes('A') ? (paid!.rails.length > 1 ? ['mpp', 'x402'] : ['mpp']) : ['x402'],
          unit: paid!.unit,
          // Compared with what the route's 402 offers in 'advertises for every paid tool what its REST route's 402 offers'.
          card: paid!.card ? expect.objectContaining({ currency: 'usd' }) : false,
          effect: paid!.effect,
          ...(paid!.actingActions && { actingActions: [...paid!.actingActions] }),
          endpoint: `${paid!.method} ${paid!.path}`,
        });
        expect(tool.outputSchema, tool.name).toBeUndefined();
        expect(tool.annotations?.readOnlyHint).toBe(false);
      }
    }
    // Spec 4.6's table, spot-checked.
    const meta = (suffix: string) => tools.find((tool) => tool.name === `svc_${suffix}`)!._meta!;
    expect(meta('agent_pay')).toMatchObject({ price: '0.050000', rails: ['A', 'B', 'C'], protocols: ['mpp', 'x402'] });
    expect(meta('payroll_execute')).toMatchObject({ price: '1.000000', rails: ['A'], protocols: ['mpp'] });
    expect(meta('treasury_session')).toMatchObject({ price: '0.020000', unit: 'session', effect: 'reads', actingActions: ['rebalance'] });
    // The fee of a tool that acts is collected before it acts.
    expect(meta('agent_pay')).toMatchObject({ effect: 'acts' });
    expect(meta('memo_decode')).toMatchObject({ effect: 'reads' });
    // The route's own schema, as JSON Schema, with its descriptions.
    const escrowPost = tools.find((tool) => tool.name === 'svc_escrow_post')!;
    expect(escrowPost.inputSchema).toMatchObject({
      required: ['employer_id', 'worker_wallet_address', 'worker_agent_identifier', 'amount_usdc', 'rubric_prompt'],
      additionalProperties: false,
      properties: { expiry_hours: { type: 'integer', minimum: 1, maximum: 168, description: expect.any(String) } },
    });
    const history = tools.find((tool) => tool.name === 'svc_employee_history')!;
    expect(history.inputSchema).toMatchObject({ required: ['id'], properties: { id: { type: 'string' }, limit: { type: 'integer', maximum: 100 } } });
  });

  it('validates each tool with the very zod schemas its REST route validates with (no drift)', () => {
    const routes = t.app.openAPIRegistry.definitions.flatMap((d) => (d.type === 'route' ? [d.route] : []));
    for (const definition of TOOL_DEFINITIONS) {
      const route = routes.find((r) => r.method === definition.method.toLowerCase() && r.path === definition.path);
      expect(route, definition.suffix).toBeDefined();
      const body = (route!.request?.body?.content?.['application/json'] as { schema?: unknown } | undefined)?.schema;
      expect(body, `${definition.suffix} body`).toBe(definition.body);
      expect(route!.request?.params, `${definition.suffix} params`).toBe(definition.params);
      expect(route!.request?.query, `${definition.suffix} query`).toBe(definition.query);
    }
  });
});

describe('free tools', () => {
  it('read the directory, the OpenAPI document and a reputation with only the bearer', async () => {
    const directory = await call('agents_directory', { limit: 5 });
    expect(directory.isError ?? false, textOf(directory)).toBe(false);
    expect(directory.structuredContent).toMatchObject({ agents: expect.any(Array), next_cursor: null });
    expect(JSON.parse(textOf(directory))).toEqual(directory.structuredContent);

    const spec = await call('openapi_spec', {});
    expect(spec.structuredContent).toMatchObject({ openapi: '3.0.3', paths: expect.objectContaining({ '/api/mcp': expect.any(Object) }) });

    const { key } = solanaIdentity();
    const reputation = await call('reputation_get', { address: key });
    expect(statusOf(reputation)).toBe(200);
    expect(reputation.structuredContent).toMatchObject({ subject: { solana: key, tempo_agent_id: null }, unified: { totalPayments: 0 } });

    // The route's own 400 (spec 7), as a tool error with its status and error body.
    const refused = await call('reputation_get', { address: '0xnot-a-key' });
    expect(refused.isError).toBe(true);
    expect(bodyOf(refused)).toMatchObject({ status: 400, code: expect.any(String) });
    expect(refused.structuredContent).toBeUndefined();
  });

  it('refuses arguments the route would refuse before anything is sent (and so before any charge)', async () => {
    const result = await call('memo_decode', { memo: '0x1234' });
    expect(result.isError).toBe(true);
    expect(bodyOf(result)).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', issues: [{ path: 'memo' }] });
    const strict = await call('escrow_status', { id: 'not-a-uuid' });
    expect(bodyOf(strict)).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', issues: [{ path: 'id' }] });
  });
});

describe('paying through MCP', () => {
  const memo = `0x${'ab'.repeat(32)}`;

  it('answers a paid call without payment with isError and the 402 challenge of every rail', async () => {
    const result = await call('memo_decode', { memo });
    expect(result.isError).toBe(true);
    const challenge = bodyOf(result);
    expect(challenge).toMatchObject({
      status: 402,
      error: 'payment_required',
      code: 'PAYMENT_REQUIRED',
      wwwAuthenticate: expect.stringMatching(/^Payment .*method="tempo"/),
      price: '0.010000',
      currency: 'USD',
      rails: ['A', 'B', 'C'],
      endpoint: 'POST /api/mpp/memo/decode',
    });
    expect(challenge.paymentRequired).toMatchObject({ x402Version: 2, resource: { url: `${t.config.publicBaseUrl}/api/mpp/memo/decode` } });
    expect(challenge.paymentRequired.accepts.map((a: Json) => a.network)).toEqual(['eip155:8453', t.embeddedChains!.solana.network]);
    // x402's MCP transport: a PaymentRequired at the top level, in structuredContent too.
    expect(challenge.accepts).toEqual(challenge.paymentRequired.accepts);
    expect(result.structuredContent).toEqual(challenge);
    // A rail A only route offers no x402.
    const railAOnly = bodyOf(await call('payroll_execute', { payrollRunId: randomUUID() }));
    expect(railAOnly).toMatchObject({ status: 402, rails: ['A'], paymentRequired: null, wwwAuthenticate: expect.stringMatching(/^Payment /) });
  });

  it('takes an x402 PaymentPayload in _meta["x402/payment"] (rail B as an object, rail C base64) and returns the settlement', async () => {
    const payB = await x402Payloads(t, server.url, 'B');
    const challenge = bodyOf(await call('memo_decode', { memo }));
    const result = await call('memo_decode', { memo }, { meta: { 'x402/payment': await payB(challenge.paymentRequired) } });
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(JSON.parse(textOf(result))).toEqual({ memo, fields: null });
    expect(result._meta).toMatchObject({ 'http/status': 200, 'payment/receipts': { 'PAYMENT-RESPONSE': expect.any(String) }, 'x402/payment-response': { success: true, network: 'eip155:8453' } });

    const payC = await x402Payloads(t, server.url, 'C');
    const rates = bodyOf(await call('treasury_yield_rates', {}));
    const payload = await payC(rates.paymentRequired);
    const paid = await call('treasury_yield_rates', {}, { meta: { 'x402/payment': Buffer.from(JSON.stringify(payload)).toString('base64') } });
    expect(statusOf(paid), textOf(paid)).toBe(200);
    expect(JSON.parse(textOf(paid))).toMatchObject({ apy_bps: expect.any(Number), sources: expect.any(Array) });
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: t.embeddedChains!.solana.network });
    const again = await call('treasury_yield_rates', {}, { meta: { 'x402/payment': payload } });
    expect(bodyOf(again)).toMatchObject({ status: 402, code: 'PAYMENT_ALREADY_USED' });
  });

  it('takes a rail A credential in the X-Payment-Authorization header or _meta["mpp/authorization"], with its receipt', async () => {
    const args = { walletAddress: privateKeyToAccount(generatePrivateKey()).address };
    const challenge = bodyOf(await call('compliance_check', args));
    const viaHeader = await call('compliance_check', args, { headers: { 'X-Payment-Authorization': await payA(challenge.wwwAuthenticate) } });
    expect(statusOf(viaHeader), textOf(viaHeader)).toBe(200);
    expect(JSON.parse(textOf(viaHeader))).toMatchObject({ wallet_address: args.walletAddress.toLowerCase(), risk_score: expect.any(Number) });
    expect(viaHeader._meta).toMatchObject({ 'payment/receipts': { 'Payment-Receipt': expect.any(String) }, 'mpp/receipt': { status: 'success', method: 'tempo' } });

    const viaMeta = await paidA('memo_decode', { memo });
    expect(statusOf(viaMeta), textOf(viaMeta)).toBe(200);
    expect(viaMeta._meta?.['mpp/receipt']).toMatchObject({ status: 'success' });
    // mppx's receipt key too, with the challenge it paid.
    expect(viaMeta._meta?.['org.paymentauth/receipt']).toMatchObject({ status: 'success', method: 'tempo', challengeId: expect.any(String) });

    // Anything but an MPP credential is not passed on as Authorization.
    const bearerLike = await call('memo_decode', { memo }, { meta: { 'mpp/authorization': 'Bearer abc' } });
    expect(bodyOf(bearerLike)).toMatchObject({ status: 400, code: 'PAYMENT_INVALID' });
  });
});

describe("mppx's MCP convention (org.paymentauth)", () => {
  const memo = `0x${'cd'.repeat(32)}`;

  it("McpClient.wrap with a stock mppx tempo method pays a paid tool and gets its result and receipt", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await faucet('eip155:4217', account.address, '5');
    const client = new Client({ name: 'mppx-wrapped', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${await bearer()}` } } }));
    try {
      const rpc = createClient({ chain: tempoChain, transport: http(`${server.url}/api/dev/rpc/tempo`), account });
      McpClient.wrap(client, { methods: [tempo({ account, getClient: () => rpc })] });
      const result = await client.callTool({ name: name('memo_decode'), arguments: { memo } });
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({ memo, fields: null });
      expect(result.receipt).toMatchObject({ method: 'tempo', status: 'success', reference: expect.stringMatching(/^0x[0-9a-f]{64}$/), challengeId: expect.any(String) });
      // The fee moved: the payer's one call is in the ledger as a rail A payment of the route's price.
      const reference = (result.receipt as { reference: string }).reference;
      const rows = await t.database.db.select({ rail: payments.rail, amount: payments.amount, payer: payments.payer }).from(payments).where(eq(payments.reference, reference));
      expect(rows).toEqual([{ rail: 'A', amount: 10_000n, payer: account.address }]);
    } finally {
      await client.close();
    }
  });

  it('puts the MPP challenges in _meta["org.paymentauth/payment-required"] of the 402 result, next to the existing answer', async () => {
    const result = await call('memo_decode', { memo });
    expect(bodyOf(result)).toMatchObject({ status: 402, code: 'PAYMENT_REQUIRED', wwwAuthenticate: expect.stringMatching(/^Payment /) });
    const required = result._meta?.['org.paymentauth/payment-required'] as { httpStatus: number; challenges: Challenge.Challenge[] };
    expect(required.httpStatus).toBe(402);
    expect(required.challenges.map((c) => `${c.method}.${c.intent}`)).toEqual(['tempo.charge']);
    expect(required.challenges[0]!.id).toBe(Challenge.deserialize(bodyOf(result).wwwAuthenticate).id);
  });

  it('answers a refused org.paymentauth credential with the JSON-RPC error -32043 carrying fresh challenges; a malformed one is a 400', async () => {
    const first = await call('memo_decode', { memo });
    const [challenge] = (first._meta?.['org.paymentauth/payment-required'] as { challenges: Challenge.Challenge[] }).challenges;
    const forged = Credential.from({ challenge: challenge!, payload: { type: 'hash', hash: `0x${'00'.repeat(32)}` } });
    const refused = await call('memo_decode', { memo }, { meta: { 'org.paymentauth/credential': forged } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    const { code, data } = refused as McpError;
    expect(code).toBe(-32043);
    expect(data).toMatchObject({ httpStatus: 402, challenges: [{ method: 'tempo', intent: 'charge' }], problem: { title: 'PAYMENT_INVALID', status: 402 } });
    expect((data as { challenges: Challenge.Challenge[] }).challenges[0]!.id).not.toBe(challenge!.id);

    const malformed = await call('memo_decode', { memo }, { meta: { 'org.paymentauth/credential': { challenge: 'x' } } });
    expect(bodyOf(malformed)).toMatchObject({ status: 400, code: 'PAYMENT_INVALID', error: expect.stringContaining('org.paymentauth/credential') });
    const both = await call('memo_decode', { memo }, { meta: { 'org.paymentauth/credential': forged, 'mpp/authorization': Credential.serialize(forged) } });
    expect(bodyOf(both)).toMatchObject({ status: 400, code: 'PAYMENT_INVALID', error: expect.stringContaining('not both') });
  });

  it("advertises for every paid tool what its REST route's 402 offers (rails, card, price, unit)", async () => {
    const { tools } = await mcp.client.listTools();
    const paidTools = tools.filter((tool) => (tool._meta as Json).rails.length > 0);
    expect(paidTools).toHaveLength(15);
    for (const tool of paidTools) {
      const advertised = tool._meta as Json;
      const [method, path] = (advertised.endpoint as string).split(' ') as [string, string];
      const response = await t.request(method, path.replaceAll(/\{\w+\}/g, () => randomUUID()), method === 'POST' ? { body: {} } : {});
      expect(response.status, tool.name).toBe(402);
      const body = await json(response);
      const challenges = Challenge.fromHeadersList(response.headers);
      const required = response.headers.get('PAYMENT-REQUIRED');
      const networks = required ? (JSON.parse(Buffer.from(required, 'base64').toString()) as { accepts: { network: string; amount: string }[] }).accepts : [];
      const offered = [
        ...(challenges.some((c) => c.method === 'tempo') ? ['A'] : []),
        ...(networks.some((a) => a.network === 'eip155:8453') ? ['B'] : []),
        ...(networks.some((a) => a.network === t.embeddedChains!.solana.network) ? ['C'] : []),
      ];
      expect({ tool: tool.name, rails: advertised.rails, card: advertised.card, price: advertised.price, unit: advertised.unit }).toEqual({
        tool: tool.name,
        rails: offered,
        card: cardOfferOf(challenges, body.price as string),
        price: body.price,
        unit: body.unit,
      });
      const baseUnits = String(BigInt(Math.round(Number(advertised.price) * 1e6)));
      for (const accept of networks) expect(accept.amount, tool.name).toBe(baseUnits);
    }
    const meta = (suffix: string) => tools.find((tool) => tool.name === name(suffix))!._meta as Json;
    // The card: a charge of the price on payroll execute; a card credit of the processor's minimum on the off-ramp (spec 4.1.5).
    expect(meta('payroll_execute').card).toEqual({ amount: '1.00', currency: 'usd', credit: false });
    expect(meta('bridge_offramp').card).toEqual({ amount: '0.50', currency: 'usd', credit: true });
  });

  /** The card offer of a 402, as `_meta.card` shows it: its amount in dollars, and whether it buys more than the price (a card credit). */
  function cardOfferOf(challenges: Challenge.Challenge[], price: string) {
    const stripe = challenges.find((c) => c.method === 'stripe');
    if (!stripe) return false;
    const cents = Number((stripe.request as { amount: string }).amount);
    return { amount: (cents / 100).toFixed(2), currency: (stripe.request as { currency: string }).currency, credit: cents / 100 > Number(price) };
  }
});

describe('every paid tool reaches its route', () => {
  it('agent_register, then agents_profile and reputation_get of the registered agent (identity proof over JSON.stringify(arguments))', async () => {
    const agent = solanaIdentity();
    const args = { display_name: 'MCP Auditor', capabilities: ['invoice-audit'] };
    const registered = await paidA('agent_register', args, () => proof(agent.identifier, agent.signer, '/api/mpp/agents/register', args));
    expect(statusOf(registered), textOf(registered)).toBe(201);
    const profile = JSON.parse(textOf(registered)).agent as Json;
    expect(profile).toMatchObject({ identifier: `solana:${agent.key}`, display_name: 'MCP Auditor', capabilities: ['invoice-audit'] });

    const byIdentifier = await call('agents_profile', { id: agent.identifier });
    expect(byIdentifier.structuredContent).toEqual(profile);
    const listed = await call('agents_directory', { capability: 'invoice-audit' });
    expect((listed.structuredContent as Json).agents.map((a: Json) => a.id)).toContain(profile.id);
    const reputation = await call('reputation_get', { address: agent.key });
    expect(reputation.structuredContent).toMatchObject({ subject: { solana: agent.key } });

    // A proof over other bytes (the same arguments, keys reordered) is the route's own 401.
    const reordered = { capabilities: ['invoice-audit'], display_name: 'MCP Auditor' };
    const mismatch = await paidA('agent_register', reordered, () => proof(agent.identifier, agent.signer, '/api/mpp/agents/register', args));
    expect(bodyOf(mismatch)).toMatchObject({ status: 401, code: 'PROOF_INVALID' });
  });

  it('agent_pay pays from the treasury for an authorized agent', async () => {
    const agent = await hmacAgent();
    const args = { employer_id: employerId, recipient_wallet: privateKeyToAccount(generatePrivateKey()).address, amount: '1.25', reference: 'via MCP' };
    const paid = await paidA('agent_pay', args, () => proof(agent.identifier, agent.signer, '/api/mpp/agent/pay', args));
    expect(statusOf(paid), textOf(paid)).toBe(200);
    expect(JSON.parse(textOf(paid))).toMatchObject({ success: true, recipient: args.recipient_wallet, amount: '1.250000', reference: 'via MCP', tx_hash: expect.stringMatching(/^0x/) });
    expect(await t.chains!.tempo.balanceOf(args.recipient_wallet)).toBe(1_250_000n);
  });

  it('escrow_post, escrow_deliver and escrow_status', async () => {
    const poster = await hmacAgent();
    const workerKey = privateKeyToAccount(generatePrivateKey());
    const worker = { identifier: workerKey.address.toLowerCase(), signer: { evm: workerKey }, wallet: solanaIdentity().key };
    const args = {
      employer_id: employerId,
      worker_wallet_address: worker.wallet,
      worker_agent_identifier: worker.identifier,
      amount_usdc: '2.00',
      rubric_prompt: 'A note for the payroll team.\nmust include: ledger',
      expiry_hours: 12,
    };
    const posted = await paidA('escrow_post', args, () => proof(poster.identifier, poster.signer, '/api/mpp/escrow/post', args));
    expect(statusOf(posted), textOf(posted)).toBe(200);
    const escrow = JSON.parse(textOf(posted)) as Json;
    expect(escrow).toMatchObject({ status: 'posted', applied_expiry_hours: 12, escrow_id: expect.any(String) });

    const deliverable = `data:text/plain;base64,${Buffer.from('the ledger balances').toString('base64')}`;
    const deliverArgs = { escrow_id: escrow.escrow_id, deliverable_uri: deliverable };
    const unproven = await paidA('escrow_deliver', deliverArgs, () => ({ 'X-Agent-Identifier': worker.identifier }));
    expect(bodyOf(unproven)).toMatchObject({ status: 401, code: 'PROOF_MISSING' });
    const delivered = await paidA('escrow_deliver', deliverArgs, () => proof(worker.identifier, worker.signer, '/api/mpp/escrow/deliver', deliverArgs));
    expect(statusOf(delivered), textOf(delivered)).toBe(200);
    expect(JSON.parse(textOf(delivered))).toMatchObject({ escrow_id: escrow.escrow_id, deliverable_uri: deliverable, content_sha256: expect.any(String) });

    const status = await paidA('escrow_status', { id: escrow.escrow_id });
    expect(statusOf(status), textOf(status)).toBe(200);
    expect(JSON.parse(textOf(status))).toMatchObject({ escrow_id: escrow.escrow_id, amount_usdc: '2.000000', worker_wallet_address: worker.wallet, deliverable_uri: deliverable });
  });

  it('payroll_execute, payslip_get and employee_history for the owner (X-Identity-Token)', async () => {
    const employee = await addEmployee();
    const prepared = await t.request('POST', `/api/employers/${employerId}/payroll`, { token: owner, body: { items: [{ employee_id: employee.id, amount_usd: '42.5' }] } });
    expect(prepared.status, await prepared.clone().text()).toBe(201);
    const runId = (await json<{ payroll_run_id: string }>(prepared)).payroll_run_id;
    const asOwner = () => ({ 'X-Identity-Token': owner });

    const executed = await paidA('payroll_execute', { payrollRunId: runId }, asOwner);
    expect(statusOf(executed), textOf(executed)).toBe(200);
    expect(JSON.parse(textOf(executed))).toMatchObject({ success: true, payroll_run_id: runId, recipient_count: 1 });
    expect(await t.chains!.tempo.balanceOf(employee.account.address)).toBe(42_500_000n);

    const slip = await paidA('payslip_get', { runId, employeeId: employee.id }, asOwner);
    expect(statusOf(slip), textOf(slip)).toBe(200);
    expect(JSON.parse(textOf(slip))).toMatchObject({ payslip: { run_id: runId, employee_id: employee.id, amount_usd: 42.5, status: 'paid' } });

    const history = await paidA('employee_history', { id: employee.id, limit: 1 }, asOwner);
    expect(statusOf(history), textOf(history)).toBe(200);
    expect(JSON.parse(textOf(history))).toMatchObject({ employee_id: employee.id, count: 1, payments: [{ amount_usd: 42.5, status: 'paid' }] });
  });

  it('treasury_optimize (X-Agent-Key) and treasury_session (X-Identity-Token)', async () => {
    const optimized = await paidA('treasury_optimize', { employerId, question: 'Where should idle cash go?' }, () => ({ 'X-Agent-Key': agentKey }));
    expect(statusOf(optimized), textOf(optimized)).toBe(200);
    expect(JSON.parse(textOf(optimized))).toMatchObject({ employerId, question: 'Where should idle cash go?', recommended_allocation: expect.any(Array) });

    const session = await paidA('treasury_session', { action: 'balance', employerId }, () => ({ 'X-Identity-Token': owner }));
    expect(statusOf(session), textOf(session)).toBe(200);
    expect(JSON.parse(textOf(session))).toMatchObject({ action: 'balance', result: { employerId, availableUsd: expect.stringMatching(/^\d+\.\d{6}$/) } });
    // Without identity the route itself answers 404, as for a missing employer (spec: no access beyond what is proven).
    const anonymous = await paidA('treasury_session', { action: 'balance', employerId });
    expect(bodyOf(anonymous)).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('employee_advance claims accrued salary for the employee', async () => {
    const employee = await addEmployee({ annual_salary_usd: '100000' });
    const asEmployee = () => ({ 'X-Identity-Token': employee.token });
    // The first advance starts the stream; a second may or may not have accrued by then (the route's own 422).
    const first = await paidA('employee_advance', { employeeAddress: employee.account.address }, asEmployee);
    if (first.isError) expect(bodyOf(first)).toMatchObject({ status: 422, code: 'NOTHING_ACCRUED' });
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const advanced = await paidA('employee_advance', { employeeAddress: employee.account.address }, asEmployee);
    expect(statusOf(advanced), textOf(advanced)).toBe(200);
    expect(JSON.parse(textOf(advanced))).toMatchObject({ success: true, employee_address: employee.account.address, tx_hash: expect.stringMatching(/^0x/) });
  });

  it('bridge_offramp cashes out for the employee', async () => {
    const employee = await addEmployee();
    expect((await t.request('POST', `/api/employees/${employee.id}/kyc`, { token: owner })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the sandbox approves two steps after the link
    const account = await t.request('POST', `/api/employees/${employee.id}/bank-accounts`, {
      token: employee.token,
      body: { destinationType: 'ach', accountOwnerName: 'Ada Tools', details: { routingNumber: '021000021', accountNumber: '000123456789' } },
    });
    expect(account.status, await account.clone().text()).toBe(201);
    const bankAccountId = (await json<{ bank_account_id: string }>(account)).bank_account_id;
    await faucet('eip155:4217', employee.account.address, '20');

    const args = { employeeId: employee.id, amount: '5', destinationType: 'ach', bankAccountId };
    const offramp = await paidA('bridge_offramp', args, () => ({ 'X-Identity-Token': employee.token }));
    expect(statusOf(offramp), textOf(offramp)).toBe(200);
    expect(JSON.parse(textOf(offramp))).toMatchObject({ success: true, status: 'awaiting_funds', amount: '5.000000', destination_type: 'ach' });

    // The card (spec 4.1.5): McpClient.wrap with mppx's stock stripe method buys a $0.50 card
    // credit; the credit pays the next call, named in the Payment-Credit HTTP header.
    const wrapped = new Client({ name: 'mppx-card', version: '1.0.0' });
    await wrapped.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${await bearer()}`, 'X-Identity-Token': employee.token } } }),
    );
    let creditId: string;
    try {
      const createToken = async (token: { amount: string; currency: string; expiresAt: number; paymentMethod?: string }) =>
        (await json<{ spt: string }>(await t.request('POST', '/api/dev/card/token', { body: { payment_method: token.paymentMethod, amount: token.amount, currency: token.currency, expires_at: token.expiresAt } }))).spt;
      McpClient.wrap(wrapped, { methods: [stripe({ paymentMethod: 'pm_card_visa', createToken })] });
      const bought = (await wrapped.callTool({ name: name('bridge_offramp'), arguments: { ...args, amount: '2' } })) as CallToolResult & { receipt?: unknown };
      expect(statusOf(bought), textOf(bought)).toBe(200);
      expect(bought.receipt).toMatchObject({ method: 'stripe', status: 'success' });
      const receipts = bought._meta?.['payment/receipts'] as Record<string, string>;
      expect(receipts['Payment-Credit-Remaining']).toBe('0.250000');
      creditId = receipts['Payment-Credit']!;
    } finally {
      await wrapped.close();
    }
    const drawn = await call('bridge_offramp', { ...args, amount: '1' }, { headers: { 'X-Identity-Token': employee.token, 'Payment-Credit': creditId } });
    expect(statusOf(drawn), textOf(drawn)).toBe(200);
    expect((drawn._meta?.['payment/receipts'] as Record<string, string>)['Payment-Credit-Remaining']).toBe('0.000000');
  });
});

describe('the dispatch', () => {
  it('sends the route exactly the path, query and body bytes of the arguments, the payment and identity headers, and never the bearer', async () => {
    // The MCP routes over an app whose every other route echoes what it received.
    const app = new OpenAPIHono<AppEnv>();
    app.use('*', async (c, next) => {
      c.set('requestId', 'req-echo');
      c.set('log', createLogger('silent'));
      await next();
    });
    app.route('/', mcpRoutes({ config: t.config, oauth: { authenticate: async () => ({ userId: 'u', clientId: 'c', scopes: ['mcp:tools'], familyId: randomUUID() }) }, appFetch: (request, env) => app.fetch(request, env) }));
    app.all('/api/*', async (c) =>
      c.req.path === '/api/mcp'
        ? c.json({ error: 'no SSE stream' }, 405)
        : c.json({ method: c.req.method, url: c.req.url, headers: Object.fromEntries(c.req.raw.headers), body: await c.req.text() }),
    );
    const echo = await serveOnLoopback(app.fetch);
    const headers: Record<string, string> = {};
    const client = new Client({ name: 'echo-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${echo.url}/api/mcp`), {
        requestInit: { headers: { Authorization: 'Bearer the-mcp-token' } },
        fetch: (url, init) => {
          const merged = new Headers(init?.headers);
          for (const [k, v] of Object.entries(headers)) merged.set(k, v);
          return fetch(url, { ...init, headers: merged });
        },
      }),
    );
    try {
      const echoed = async (suffix: string, args: Json, meta?: Json) =>
        JSON.parse(textOf((await client.callTool({ name: `svc_${suffix}`, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult)) as {
          method: string;
          url: string;
          headers: Record<string, string>;
          body: string;
        };

      Object.assign(headers, {
        'X-Agent-Identifier': 'agent-1',
        'X-Agent-Timestamp': '1700000000',
        'X-Agent-Signature': '0xabc',
        'X-Identity-Token': 'idp-jwt',
        'X-Agent-Key': 'sk_agent_x',
        'Idempotency-Key': 'idem-1',
        'X-Payment-Authorization': 'Payment credential-A',
        'X-Request-Id': 'outer',
        Cookie: 'session=1',
      });
      const args = { reference: null, amount: '1.50', employer_id: randomUUID(), recipient_wallet: '0x52908400098527886E0F7030069857D2E4169EE7' };
      const pay = await echoed('agent_pay', args);
      expect(pay.method).toBe('POST');
      expect(pay.url).toBe(`${new URL(t.config.publicBaseUrl).origin}/api/mpp/agent/pay`);
      expect(pay.body).toBe(JSON.stringify(args));
      expect(pay.headers).toMatchObject({
        authorization: 'Payment credential-A',
        'x-agent-identifier': 'agent-1',
        'x-agent-timestamp': '1700000000',
        'x-agent-signature': '0xabc',
        'x-identity-token': 'idp-jwt',
        'x-agent-key': 'sk_agent_x',
        'idempotency-key': 'idem-1',
        'content-type': 'application/json',
        'x-request-id': 'req-echo',
      });
      expect(pay.headers.cookie).toBeUndefined();
      expect(pay.headers['x-payment-authorization']).toBeUndefined();

      // Per-call _meta replaces the HTTP layer's payment.
      const viaMeta = await echoed('memo_decode', { memo: `0x${'00'.repeat(32)}` }, { 'x402/payment': { x402Version: 2, payload: { a: 1 } } });
      expect(viaMeta.headers.authorization).toBeUndefined();
      expect(JSON.parse(Buffer.from(viaMeta.headers['x-payment']!, 'base64').toString())).toEqual({ x402Version: 2, payload: { a: 1 } });

      for (const key of Object.keys(headers)) delete headers[key];
      const profile = await echoed('agents_profile', { id: 'erc8004:eip155:4217:42' });
      expect(profile.method).toBe('GET');
      expect(new URL(profile.url).pathname).toBe('/api/agents/profile/erc8004%3Aeip155%3A4217%3A42');
      expect(profile.headers.authorization).toBeUndefined();
      const id = randomUUID();
      const history = await echoed('employee_history', { limit: 7, id });
      expect(new URL(history.url).pathname + new URL(history.url).search).toBe(`/api/mpp/employee/${id}/history?limit=7`);
      expect(history.body).toBe('');
      // Defaults are the route's business: an argument not given is not sent.
      expect(new URL((await echoed('agents_directory', {})).url).search).toBe('');
      // Arguments the route's schema refuses are never sent (the echo would have answered 200).
      const refused = (await client.callTool({ name: 'svc_memo_decode', arguments: { memo: '0x12' } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.parse(textOf(refused))).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    } finally {
      await client.close();
      await echo.close();
    }
  });
});
