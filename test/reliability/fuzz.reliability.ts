import { afterAll, beforeAll, expect, it } from 'vitest';
import { agentProofHeaders } from '../support/agents.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../support/http.js';
import { railA, x402, type PayingFetch } from '../support/pay.js';
import { reportFigure } from './figures.js';
import { OAuthFlow } from './support/auth-oauth.js';
import {
  listOperations,
  malformedCase,
  pathIdKind,
  fieldIdKind,
  inProcess,
  isDestructive,
  pool,
  Rng,
  seedTenant,
  send,
  solanaAddress,
  type FuzzCase,
  type Fetcher,
  type FuzzContext,
  type IdKind,
  type OpenApiDocument,
  type Operation,
  type Sent,
  type Tenant,
} from './support/openapi-fuzz.js';

/**
 * Issue 12, fuzz: every operation of the OpenAPI document gets 200 malformed requests from a
 * seeded PRNG (wrong types, missing and extra fields, huge strings, bad JSON, content types,
 * unicode, junk path/query/header values, junk and forged payment proofs), mostly with a real
 * owner's token and real ids, so they reach validation behind auth. None may answer 5xx, hang,
 * or fail without an answer.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261212);
const PER_ROUTE = 200;
/** Malformed requests per paid route that are also paid for, so they get past the 402 to validation. */
const PAID_PER_ROUTE = 20;
const PAYERS = 4;
const CONCURRENCY = 8;
/** Stops sending new requests after this; the test then fails (a route left out is not silently skipped). */
const BUDGET_MS = 150_000;
const ADMIN = 'fuzz-admin';

let t: TestApp;
let server: LoopbackServer;
let doc: OpenApiDocument;
/** Phase 1's tenant and context (in process); phase 2 gets a fresh tenant, since phase 1 deletes and removes things. */
let tenant: Tenant;
let ctx: FuzzContext;
let paidTenant: Tenant;
let paidCtx: FuzzContext;

/** What the generator may use of a tenant: its tokens, ids, and field values that make a valid skeleton. */
function contextFor(of: Tenant, shared: { admin: string; mcp: string; announcementId: string; offers: FuzzContext['offers'] }): FuzzContext {
  const ids: Partial<Record<IdKind, string>> = { ...of.ids, announcement: shared.announcementId, reputationSubject: solanaAddress(new Rng(SEED)) };
  const employee = of.employees[0]!;
  return {
    tokens: { owner: of.owner.token, employee: employee.token, admin: shared.admin, mcp: shared.mcp },
    agentKey: of.agentKey,
    idFor: (kind) => ids[kind],
    // So that a single mutation is what the route sees.
    fields: (name) => {
      if (name === 'employeeAddress' || name === 'recipient_wallet') return employee.wallet;
      if (name === 'worker_wallet_address' || name === 'recipientAddress') return employee.solanaWallet;
      const kind = fieldIdKind(name);
      const id = kind && ids[kind];
      if (!id) return undefined;
      return name === 'ids' ? [id] : id;
    },
    offers: shared.offers,
  };
}

beforeAll(async () => {
  // Step 0: the sandbox bridge clears KYC at once, so bank accounts exist to point at.
  t = await startTestApp({ ADMIN_USER_IDS: ADMIN, BRIDGE_SANDBOX_STEP_SECONDS: '0' }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  const { pay } = await railA(t, server.url, '10');
  tenant = await seedTenant(t, 'F', { pay });
  paidTenant = await seedTenant(t, 'P', { pay });
  const admin = await t.token(ADMIN, 'admin@fuzz.example');
  const announcement = await t.request('POST', '/api/admin/announcements', {
    token: admin,
    body: { title: 'Fuzz maintenance', body: 'Nothing happens.', severity: 'info', audience: 'all', publish_now: true },
  });
  expect(announcement.status, await announcement.clone().text()).toBe(201);
  const announcementId = ((await announcement.json()) as { id: string }).id;
  // The MCP endpoint's access token, from a real grant (/api/mcp checks that its family is live).
  const mcp = (await new OAuthFlow(t, tenant.owner.token).grant()).tokens.access_token;

  const documentResponse = await t.request('GET', '/api/openapi.json');
  expect(documentResponse.status).toBe(200);
  doc = (await documentResponse.json()) as OpenApiDocument;

  // A real 402 per paid route: forged proofs carry its challenge and offered requirements.
  const offers: FuzzContext['offers'] = new Map();
  for (const operation of listOperations(doc).filter((o) => o.paid)) {
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => tenant.ids[pathIdKind(operation.path, name) ?? 'employer'] ?? 'x');
    const response = await t.request(operation.method, path, operation.method === 'GET' ? {} : { body: {} });
    expect(response.status, `${operation.method} ${operation.path} unpaid`).toBe(402);
    offers.set(`${operation.method} ${operation.path}`, { wwwAuthenticate: response.headers.get('www-authenticate'), paymentRequired: response.headers.get('payment-required') });
    await response.text();
  }
  ctx = contextFor(tenant, { admin, mcp, announcementId, offers });
  paidCtx = contextFor(paidTenant, { admin, mcp, announcementId, offers });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
});

interface Failure {
  operation: string;
  request: FuzzCase;
  sent: Sent;
}

/** The request and the answer, trimmed, for a failure message someone can act on. */
function describeFailure({ operation, request, sent }: Failure): string {
  const body = request.body === undefined ? '(none)' : typeof request.body === 'string' ? request.body : `bytes ${Buffer.from(request.body).toString('hex')}`;
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, v.length > 120 ? `${v.slice(0, 120)}... (${v.length} chars)` : v]));
  return [
    `${operation} [${request.mutation}]`,
    `  -> ${request.method} ${request.url.slice(0, 300)}`,
    `  headers ${JSON.stringify(headers)}`,
    `  body ${body.slice(0, 600)}${body.length > 600 ? `... (${body.length} chars)` : ''}`,
    `  <- ${sent.timedOut ? 'no answer in time' : sent.error ? `no answer: ${sent.error}` : sent.status} ${sent.body.slice(0, 800)}`,
  ].join('\n');
}

/** A paying client (mppx or @x402/fetch over loopback) as a Fetcher; bytes go as latin1 text (its wrapper takes strings). */
function paying(pay: PayingFetch): Fetcher {
  return (url, init) => {
    const body = init.body === null || init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(init.body as Uint8Array).toString('latin1');
    return pay(url, { method: init.method ?? 'GET', headers: Object.fromEntries(new Headers(init.headers).entries()), ...(body === undefined ? {} : { body }) });
  };
}

const histogramOf = (statuses: Map<number, number>) =>
  [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status === 0 ? 'none' : status}: ${n}`).join(', ');

it('answers every malformed request to every OpenAPI operation without a 5xx, unpaid and paid', async ({ task }) => {
  const operations = listOperations(doc);
  expect(operations.length).toBeGreaterThan(90);
  const root = new Rng(SEED);
  const started = Date.now();
  const deadline = started + BUDGET_MS;
  const failures: Failure[] = [];
  const slow: { operation: string; ms: number }[] = [];
  let signed = 0;
  let charged = 0;
  const sendCase = async (fetcher: Fetcher, operation: Operation, request: FuzzCase, statuses: Map<number, number>, agent = tenant.authorization) => {
    // Bytes bodies are left unsigned: the proof signs text.
    if (request.agentProof && typeof request.body !== 'object') {
      Object.assign(request.headers, await agentProofHeaders(agent.identifier, { hmac: agent.hmacSecret }, { method: request.method, path: request.url, body: request.body ?? '' }));
      signed++;
    }
    const sent = await send(fetcher, request);
    if (sent.charged) charged++;
    statuses.set(sent.status, (statuses.get(sent.status) ?? 0) + 1);
    const name = `${operation.method} ${operation.path}`;
    if (sent.status >= 500 || sent.timedOut || sent.error) failures.push({ operation: name, request, sent });
    if (sent.ms > 2_000) slow.push({ operation: name, ms: sent.ms });
  };

  // Phase 1, in process: 200 per operation, most with a real owner's token and real ids; deletes
  // and removals last, so the objects the other routes point at exist while they are fuzzed.
  const cases: { operation: Operation; request: FuzzCase }[] = [];
  for (const operation of [...operations.filter((o) => !isDestructive(o)), ...operations.filter(isDestructive)]) {
    const rng = root.fork(`${operation.method} ${operation.path}`);
    for (let i = 0; i < PER_ROUTE; i++) cases.push({ operation, request: malformedCase(doc, operation, rng, ctx) });
  }
  const statuses = new Map<number, number>();
  const done = await pool(cases, CONCURRENCY, deadline, ({ operation, request }) => sendCase(inProcess(t), operation, request, statuses));

  // Phase 2, over loopback, as a fresh tenant: paid for (rail A; the x402-only route with rail B),
  // so the malformed request gets past the 402 to validation and the handler. One payer per lane
  // keeps its nonces apart.
  // The per-tick balance stream takes only session payments: phase 1 covers it unpaid.
  const paidOperations = operations.filter((o) => o.paid && o.op['x-payment']!.unit !== 'tick');
  const paidCases = paidOperations.flatMap((operation) => {
    const rng = root.fork(`paid ${operation.method} ${operation.path}`);
    return Array.from({ length: PAID_PER_ROUTE }, () => ({ operation, request: malformedCase(doc, operation, rng, paidCtx, { paying: true }) }));
  });
  const lanes: Fetcher[] = [];
  for (let i = 0; i < PAYERS; i++) lanes.push(paying((await railA(t, server.url, '40')).pay));
  lanes.push(paying((await x402(t, server.url, 'B', '10')).pay));
  const queues = lanes.map((): typeof paidCases => []);
  paidCases.forEach((item, i) => queues[item.operation.op['x-payment']!.rails.includes('A') ? i % PAYERS : PAYERS]!.push(item));
  const paidStatuses = new Map<number, number>();
  let paidDone = 0;
  await Promise.all(
    queues.map(async (queue, lane) => {
      for (const { operation, request } of queue) {
        if (Date.now() > deadline) return;
        await sendCase(lanes[lane]!, operation, request, paidStatuses, paidTenant.authorization);
        paidDone++;
      }
    }),
  );
  const seconds = Math.round((Date.now() - started) / 1000);

  const all = new Map(statuses);
  for (const [status, n] of paidStatuses) all.set(status, (all.get(status) ?? 0) + n);
  const fivexx = [...all].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
  const unanswered = failures.filter((f) => f.sent.timedOut || f.sent.error).length;
  const streams = operations.filter((o) => o.eventStream).map((o) => `${o.method} ${o.path}`);
  reportFigure(task, {
    check: 'fuzz',
    summary:
      `${operations.length} routes x ${PER_ROUTE} = ${cases.length} malformed requests in process (seed ${SEED}) plus ${paidOperations.length} paid routes x ${PAID_PER_ROUTE} = ${paidCases.length} ` +
      `paid for over loopback (${charged} charged, so past the 402): ${fivexx} answered 5xx, ${unanswered} unanswered; statuses ${histogramOf(all)}; ` +
      `none excluded (${streams.join(' and ')} read 0.3 s then cancelled, MCP with a real access token, ${signed} with agent proofs, ` +
      `paid routes also unpaid with junk and forged payment proofs; the per-tick stream not paid for); ${seconds} s`,
  });
  if (slow.length > 0) console.log(`slowest: ${slow.sort((a, b) => b.ms - a.ms).slice(0, 5).map((s) => `${s.operation} ${s.ms} ms`).join('; ')}`);
  if (failures.length > 0) console.log(`${failures.length} failures:\n${failures.slice(0, 200).map(describeFailure).join('\n\n')}`);

  expect(done, `only ${done} of ${cases.length} requests were sent within ${BUDGET_MS / 1000} s`).toBe(cases.length);
  expect(paidDone, `only ${paidDone} of ${paidCases.length} paid requests were sent in time`).toBe(paidCases.length);
  // Paying must have worked for most (a request mutated to another method or path meets no gate).
  expect(charged).toBeGreaterThan(paidCases.length / 2);
  expect(failures.map(describeFailure)).toEqual([]);
  expect(fivexx).toBe(0);
});
