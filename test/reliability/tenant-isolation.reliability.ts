import { afterAll, beforeAll, expect, it } from 'vitest';
import { agentProofHeaders } from '../support/agents.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../support/http.js';
import { card, railA, railASession } from '../support/pay.js';
import { reportFigure } from './figures.js';
import {
  fieldIdKind,
  flatten,
  GLOBAL_ID_KINDS,
  inProcess,
  isDestructive,
  listOperations,
  missingIdLike,
  OMIT,
  pathIdKind,
  Rng,
  sampleValue,
  seedTenant,
  send,
  type Fetcher,
  type IdKind,
  type OpenApiDocument,
  type Operation,
  type Outgoing,
  type SchemaObject,
  type Sent,
  type Tenant,
} from './support/openapi-fuzz.js';

/**
 * Issue 12, tenant isolation: every operation of the OpenAPI document with an id of a tenant's
 * object (in its path, query or body) is called as tenant A's owner and A's employee with tenant
 * B's ids, and again with fresh ids that exist nowhere. "Authorisation before existence": the two
 * answers must be identical (status, code and text, ids masked), never 2xx for a path id, and
 * never carry any of B's ids, emails or names. Paid routes are paid for (rail A), since their 402
 * comes before anything. Afterwards B's rows and B's own reads are unchanged.
 */
const SEED = 1212;

/** Id-like fields that name no tenant's object: TIP-403 policies and OAuth clients are global, `id` is a JSON-RPC message id. */
const GLOBAL_FIELDS = new Set(['tip403_policy_id', 'policyId', 'client_id', 'id']);
const ID_LIKE = /(^id$|_id$|Id$|^ids$)/;
/** Escrow existence is public (spec 4.4: any paying caller reads an escrow's status; deliver answers the worker). */
const PUBLIC_ESCROW_ROUTES = new Set(['GET /api/mpp/escrow/{id}/status', 'POST /api/mpp/escrow/deliver', 'POST /api/mpp/escrow/deliver-signed']);

let t: TestApp;
let server: LoopbackServer;
let doc: OpenApiDocument;
let A: Tenant;
let B: Tenant;
let pay: Fetcher;
/** The per-tick balance stream takes only MPP session payments. */
let payBySession: Fetcher;

beforeAll(async () => {
  // Step 0: the sandbox bridge clears KYC at once, so both tenants have bank accounts.
  t = await startTestApp({ BRIDGE_SANDBOX_STEP_SECONDS: '0' }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  const payer = await railA(t, server.url, '80');
  A = await seedTenant(t, 'A', { pay: payer.pay, card: card(server.url) });
  B = await seedTenant(t, 'B', { pay: payer.pay, card: card(server.url) });
  pay = (url, init) =>
    payer.pay(url, { method: init.method ?? 'GET', headers: Object.fromEntries(new Headers(init.headers).entries()), ...(typeof init.body === 'string' ? { body: init.body } : {}) });
  const session = await railASession(t, server.url, '0.2');
  payBySession = (url, init) => session.fetch(`${server.url}${url}`, init);
  const response = await t.request('GET', '/api/openapi.json');
  expect(response.status).toBe(200);
  doc = (await response.json()) as OpenApiDocument;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
});

interface Slot {
  where: 'path' | 'query' | 'body';
  name: string;
  kind: IdKind;
  /** Where in the body (for body slots). */
  at: (string | number)[];
}

/** A body that passes validation, so the request reaches authorisation: the tenant's own ids, and plausible values by field name. */
function fieldsOf(tenant: Tenant) {
  const plausible: Record<string, unknown> = {
    name: 'Renamed Holdings',
    full_name: 'Renamed Person',
    email: 'new.hire@isolation.example',
    department: 'Operations',
    reason: 'Reliability check',
    label: 'Renamed',
    per_tx_cap_usd: '5',
    per_day_cap_usd: '50',
    velocity_per_minute: 5,
    destinationType: 'ach',
    accountOwnerName: 'Ada Example',
    details: { routingNumber: '021000021', accountNumber: '000123456789' },
    amount: '1.00',
    amount_usd: '1.00',
    verdict: 'approved',
    reasoning: 'The deliverable meets the rubric.',
    tx_hash: `0x${'ab'.repeat(32)}`,
    walletAddress: tenant.employees[0]!.wallet,
    wallet_address: `0x${'cd'.repeat(20)}`,
    action: 'balance',
    question: 'How much is idle?',
    headers: ['Email', 'Name'],
    agent_identifier: tenant.authorization.identifier,
    deliverable_uri: 'data:text/plain;base64,bGVkZ2Vy',
    startNonce: '0',
    chain: 'tempo',
    // Never sent: they would remove, clear or reshape the caller's own objects.
    remove: OMIT,
    all: OMIT,
    payroll_paused: OMIT,
    manual_review: OMIT,
    tip403_policy_id: OMIT,
    allowed_recipients: OMIT,
    elevated_per_tx_cap_usd: OMIT,
    elevated_per_day_cap_usd: OMIT,
    solana_wallet_address: OMIT,
    annual_salary_usd: OMIT,
    cost_centre: OMIT,
  };
  return (name: string): unknown => {
    const kind = fieldIdKind(name);
    if (kind) {
      const id = tenant.ids[kind];
      return id === undefined ? undefined : name === 'ids' ? [id] : id;
    }
    return plausible[name];
  };
}

/** Id-like property names anywhere in a schema. */
function idLikeNames(schema: SchemaObject | undefined, out = new Set<string>(), depth = 0): Set<string> {
  if (!schema || depth > 6) return out;
  const s = flatten(doc, schema);
  for (const [name, child] of Object.entries(s.properties ?? {})) {
    if (ID_LIKE.test(name)) out.add(name);
    idLikeNames(child, out, depth + 1);
    const items = flatten(doc, child).items;
    if (items) idLikeNames(items, out, depth + 1);
  }
  return out;
}

/** Where a sampled body carries ids of a tenant's objects. */
function bodySlots(value: unknown, at: (string | number)[] = [], out: Slot[] = []): Slot[] {
  if (Array.isArray(value)) value.forEach((item, i) => bodySlots(item, [...at, i], out));
  else if (value && typeof value === 'object') {
    for (const [name, child] of Object.entries(value)) {
      const kind = fieldIdKind(name);
      if (kind && typeof child === 'string') out.push({ where: 'body', name, kind, at: [...at, name] });
      else if (kind && Array.isArray(child) && typeof child[0] === 'string') out.push({ where: 'body', name, kind, at: [...at, name, 0] });
      else bodySlots(child, [...at, name], out);
    }
  }
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[path.at(-1)!] = value;
  return copy;
}

interface Plan {
  operation: Operation;
  name: string;
  slots: Slot[];
  body: unknown;
  query: [string, string][];
}

/** Every operation's id slots, walked from the document; what cannot be classified is returned, not skipped. */
function plan(operations: Operation[]): { plans: Plan[]; unclassified: string[]; global: string[] } {
  const plans: Plan[] = [];
  const unclassified: string[] = [];
  const global: string[] = [];
  const fields = fieldsOf(A);
  for (const operation of operations) {
    const name = `${operation.method} ${operation.path}`;
    const rng = new Rng(SEED).fork(name);
    const slots: Slot[] = [];
    for (const param of operation.params) {
      if (param.in === 'path') {
        const kind = pathIdKind(operation.path, param.name);
        if (!kind) unclassified.push(`${name} path ${param.name}`);
        else if (GLOBAL_ID_KINDS.has(kind)) global.push(`${name} (${kind})`);
        else slots.push({ where: 'path', name: param.name, kind, at: [] });
      } else if (param.in === 'query' && ID_LIKE.test(param.name)) {
        const kind = fieldIdKind(param.name);
        if (kind) slots.push({ where: 'query', name: param.name, kind, at: [] });
        else if (!GLOBAL_FIELDS.has(param.name)) unclassified.push(`${name} query ${param.name}`);
      }
    }
    for (const field of idLikeNames(operation.body)) {
      if (!fieldIdKind(field) && !GLOBAL_FIELDS.has(field)) unclassified.push(`${name} body ${field}`);
    }
    const body = operation.body && operation.method !== 'GET' ? sampleValue(doc, operation.body, rng, fields) : undefined;
    slots.push(...bodySlots(body));
    if (slots.length === 0) continue;
    const query: [string, string][] = operation.params
      .filter((p) => p.in === 'query' && p.required && !slots.some((s) => s.where === 'query' && s.name === p.name))
      .map((p) => [p.name, String(sampleValue(doc, p.schema ?? { type: 'string' }, rng, fields, p.name))]);
    plans.push({ operation, name, slots, body, query });
  }
  return { plans, unclassified, global };
}

type Caller = 'owner' | 'employee' | 'agentKey';

/** The request as `caller` of tenant `own`, with `ids` in the slots (by slot index) and the caller's own ids elsewhere. */
async function build(p: Plan, caller: Caller, own: Tenant, ids: Map<number, string>): Promise<Outgoing> {
  const value = (slot: Slot, i: number) => ids.get(i) ?? own.ids[slot.kind]!;
  let path = p.operation.path;
  const query = [...p.query];
  let body = p.body;
  p.slots.forEach((slot, i) => {
    if (slot.where === 'path') path = path.replace(`{${slot.name}}`, encodeURIComponent(value(slot, i)));
    else if (slot.where === 'query') query.push([slot.name, value(slot, i)]);
    else body = setAt(body, slot.at, value(slot, i));
  });
  const url = `${path}${query.length > 0 ? `?${new URLSearchParams(query).toString()}` : ''}`;
  const text = body === undefined ? undefined : JSON.stringify(body);
  const token = caller === 'employee' ? own.employees[0]!.token : own.owner.token;
  const headers: Record<string, string> = text === undefined ? {} : { 'content-type': 'application/json' };
  if (!p.operation.paid) headers.authorization = `Bearer ${token}`;
  else if (caller === 'agentKey') headers['x-agent-key'] = own.agentKey;
  else headers['x-identity-token'] = token;
  if (p.operation.agentSigned) {
    Object.assign(headers, await agentProofHeaders(own.authorization.identifier, { hmac: own.authorization.hmacSecret }, { method: p.operation.method, path: url, body: text ?? '' }));
  }
  return { method: p.operation.method, url, headers, ...(text === undefined ? {} : { body: text }) };
}

const call = (p: Plan, request: Outgoing): Promise<Sent> =>
  send(!p.operation.paid ? inProcess(t) : p.operation.op['x-payment']!.unit === 'tick' ? payBySession : pay, request);

/**
 * The answer with the ids the caller sent, ids the server just made (a new decision's), request
 * ids and timestamps masked: what two equivalent calls must share. A's own ids stay (they are
 * the same in both calls); B's other ids are caught by the secrets check on the raw answer.
 */
function masked(sent: Sent, ids: string[]): string {
  let text = sent.body;
  for (const id of ids) text = text.replaceAll(id, '<id>').replaceAll(encodeURIComponent(id), '<id>');
  const own = new Set(A.secrets);
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (uuid) => (own.has(uuid) ? uuid : '<uuid>'))
    .replace(/"request_?[iI]d":"[^"]*"/g, '"request_id":"<x>"')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>');
}

/** A 400 from schema validation on a field other than the ids themselves: the body was wrong, so the call never reached authorisation. */
function schemaRefusal(sent: Sent, slotNames: string[]): boolean {
  if (sent.status !== 400) return false;
  try {
    const body = JSON.parse(sent.body) as { code?: string; field?: string };
    const field = body.field ?? '';
    return body.code === 'VALIDATION_ERROR' && !slotNames.some((name) => field === name || field.split('.').includes(name));
  } catch {
    return false;
  }
}

/** B's rows in every table that has an employer_id or employee_id column, plus B's employer row. */
async function rowsOf(tenant: Tenant): Promise<Map<string, string>> {
  const { rows: columns } = await t.database.pool.query<{ table_name: string; column_name: string }>(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name IN ('employer_id', 'employee_id') ORDER BY table_name, column_name",
  );
  const tables = new Map<string, string[]>();
  for (const { table_name, column_name } of columns) tables.set(table_name, [...(tables.get(table_name) ?? []), column_name]);
  const employees = tenant.employees.map((e) => e.id);
  const out = new Map<string, string>();
  for (const [table, cols] of [...tables, ['employers', ['id']] as const]) {
    const where = cols.map((c) => (c === 'employee_id' ? `${c}::text = ANY($2::text[])` : `${c}::text = $1::text`)).join(' OR ');
    // Both parameters typed even where a table uses one of them.
    const { rows } = await t.database.pool.query(`SELECT * FROM "${table}" WHERE (${where}) AND $1::text IS NOT NULL AND $2::text[] IS NOT NULL`, [tenant.employerId, employees]);
    out.set(table, JSON.stringify(rows.map((row) => JSON.stringify(row)).sort()));
  }
  return out;
}

/** B's own reads: every free GET with B's ids in its slots, as B's owner and B's employee. */
async function readsOf(plans: Plan[], tenant: Tenant): Promise<Map<string, Sent>> {
  const out = new Map<string, Sent>();
  for (const p of plans.filter((x) => x.operation.method === 'GET' && !x.operation.paid)) {
    for (const caller of ['owner', 'employee'] as const) out.set(`${caller} ${p.name}`, await call(p, await build(p, caller, tenant, new Map())));
  }
  return out;
}

/** Top-level keys whose values differ between two reads with nothing changed in between (clocks, balances read "as of"). */
function volatileKeys(first: Sent, second: Sent): Set<string> {
  const keys = new Set<string>();
  const walk = (a: unknown, b: unknown, key: string) => {
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], k);
    } else if (JSON.stringify(a) !== JSON.stringify(b)) keys.add(key);
  };
  try {
    walk(JSON.parse(first.body), JSON.parse(second.body), '');
  } catch {
    if (first.body !== second.body) keys.add('*');
  }
  return keys;
}

const withoutKeys = (sent: Sent, keys: Set<string>) => {
  try {
    return `${sent.status} ${JSON.stringify(JSON.parse(sent.body), (k, v: unknown) => (keys.has(k) ? '<volatile>' : v))}`;
  } catch {
    return `${sent.status} ${sent.body}`;
  }
};

it("answers tenant A's calls with tenant B's ids exactly like calls with missing ids, and leaves B unchanged", async ({ task }) => {
  const started = Date.now();
  const operations = listOperations(doc);
  const { plans, unclassified, global } = plan(operations);
  // A new id slot must be classified here, not silently left out.
  expect(unclassified).toEqual([]);
  const kinds = new Set(plans.flatMap((p) => p.slots.map((s) => s.kind)));
  for (const kind of kinds) expect({ kind, a: A.ids[kind] !== undefined, b: B.ids[kind] !== undefined }).toEqual({ kind, a: true, b: true });
  const checked = plans;

  const rowsBefore = await rowsOf(B);
  const readsBefore = await readsOf(plans, B);
  const readsAgain = await readsOf(plans, B);

  const leaks: string[] = [];
  const validationErrors: string[] = [];
  const statuses = new Map<string, number>();
  let calls = 0;
  let paidCalls = 0;
  let publicEscrowCalls = 0;
  const bSecrets = B.secrets.map((s) => s.toLowerCase());
  for (const p of checked) {
    const callers: Caller[] = p.operation.paid ? ['owner', 'employee', 'agentKey'] : ['owner', 'employee'];
    // All of B's ids at once, and (with several slots) each alone next to A's own ids.
    const variants = p.slots.length > 1 ? [p.slots.map((_, i) => i), ...p.slots.map((_, i) => [i])] : [[0]];
    for (const caller of callers) {
      for (const variant of variants) {
        const bIds = new Map(variant.map((i) => [i, B.ids[p.slots[i]!.kind]!]));
        const missingIds = new Map(variant.map((i) => [i, missingIdLike(B.ids[p.slots[i]!.kind]!)]));
        const withB = await call(p, await build(p, caller, A, bIds));
        const withMissing = await call(p, await build(p, caller, A, missingIds));
        calls++;
        if (p.operation.paid) paidCalls++;
        const label = `${caller} ${p.name} [B's ${variant.map((i) => p.slots[i]!.name).join(', ')}]`;
        statuses.set(`${withB.status}`, (statuses.get(`${withB.status}`) ?? 0) + 1);
        if (schemaRefusal(withMissing, variant.map((i) => p.slots[i]!.name))) validationErrors.push(`${label}: ${withMissing.body.slice(0, 200)}`);
        const sent = [...bIds.values()].map((id) => id.toLowerCase());
        const found = bSecrets.filter((secret) => !sent.includes(secret) && withB.body.toLowerCase().includes(secret));
        if (found.length > 0) leaks.push(`${label}: the answer carries B's ${found.join(', ')}: ${withB.body.slice(0, 300)}`);
        if (PUBLIC_ESCROW_ROUTES.has(p.name) && p.slots.every((s) => s.kind === 'escrow')) {
          publicEscrowCalls++;
          continue;
        }
        const pathSlot = variant.some((i) => p.slots[i]!.where === 'path');
        if (pathSlot && withB.status >= 200 && withB.status < 300) leaks.push(`${label}: ${withB.status} ${withB.body.slice(0, 300)}`);
        else if (withB.status !== withMissing.status || masked(withB, [...bIds.values()]) !== masked(withMissing, [...missingIds.values()])) {
          leaks.push(`${label}: B's ids answered ${withB.status} ${withB.body.slice(0, 200)}; missing ids answered ${withMissing.status} ${withMissing.body.slice(0, 200)}`);
        }
      }
    }
  }

  // B afterwards: the same rows, and B's own reads answer as before (keys that change between two idle reads aside).
  const rowsAfter = await rowsOf(B);
  const changedTables = [...rowsBefore].filter(([table, rows]) => rowsAfter.get(table) !== rows).map(([table]) => table);
  const readsAfter = await readsOf(plans, B);
  const changedReads: string[] = [];
  for (const [key, before] of readsBefore) {
    const volatile = volatileKeys(before, readsAgain.get(key)!);
    if (withoutKeys(before, volatile) !== withoutKeys(readsAfter.get(key)!, volatile)) changedReads.push(`${key}: ${withoutKeys(before, volatile).slice(0, 200)} -> ${withoutKeys(readsAfter.get(key)!, volatile).slice(0, 200)}`);
  }
  const rowCounts = [...rowsBefore.values()].map((rows) => (JSON.parse(rows) as unknown[]).length);
  const rowCount = rowCounts.reduce((sum, n) => sum + n, 0);
  const tablesWithRows = rowCounts.filter((n) => n > 0).length;

  // Control: A's own ids answer differently from missing ids on every route (paid first, deletes
  // last, since these calls change A), so the identical answers above are authorisation at work,
  // not requests that never reached it.
  // Not for platform-admin routes (403 to every tenant) and deliver-signed (its signed transaction
  // is checked before the escrow is looked up; escrow ids are public there anyway).
  const controlled = checked.filter((p) => !p.operation.path.startsWith('/api/admin') && p.name !== 'POST /api/mpp/escrow/deliver-signed');
  const ordered = [...controlled.filter((p) => p.operation.paid), ...controlled.filter((p) => !p.operation.paid && !isDestructive(p.operation)), ...controlled.filter((p) => !p.operation.paid && isDestructive(p.operation))];
  const indistinct: string[] = [];
  for (const p of ordered) {
    const callers: Caller[] = ['owner', 'employee'];
    let distinct = false;
    let lastOwn = '';
    let lastMissing = '';
    for (const caller of callers) {
      const missingIds = new Map(p.slots.map((slot, i) => [i, missingIdLike(A.ids[slot.kind]!)]));
      const withMissing = await call(p, await build(p, caller, A, missingIds));
      const withOwn = await call(p, await build(p, caller, A, new Map()));
      if (withOwn.status !== withMissing.status || masked(withOwn, []) !== masked(withMissing, [...missingIds.values()])) distinct = true;
      for (const [what, sent] of [['own', withOwn], ['missing', withMissing]] as const) {
        const found = bSecrets.filter((secret) => sent.body.toLowerCase().includes(secret));
        if (found.length > 0) leaks.push(`${caller} ${p.name} with ${what} ids: the answer carries B's ${found.join(', ')}`);
      }
      lastOwn = `${withOwn.status} ${withOwn.body.slice(0, 150)}`;
      lastMissing = `${withMissing.status} ${withMissing.body.slice(0, 150)}`;
    }
    if (!distinct) indistinct.push(`${p.name}: ${lastOwn} / ${lastMissing}`);
  }
  // A's reads without ids (lists, summaries, the session, public directories) carry none of B's data either.
  const idFree = operations.filter((o) => o.method === 'GET' && !o.paid && !o.params.some((x) => x.in === 'path') && !plans.some((p) => p.operation === o));
  for (const operation of idFree) {
    const rng = new Rng(SEED).fork(operation.path);
    const query = operation.params.filter((x) => x.in === 'query' && x.required).map((x): [string, string] => [x.name, String(sampleValue(doc, x.schema ?? { type: 'string' }, rng, fieldsOf(A), x.name))]);
    for (const caller of [A.owner.token, A.employees[0]!.token]) {
      const sent = await send(inProcess(t), { method: 'GET', url: `${operation.path}${query.length > 0 ? `?${new URLSearchParams(query).toString()}` : ''}`, headers: { authorization: `Bearer ${caller}` } });
      const found = bSecrets.filter((secret) => sent.body.toLowerCase().includes(secret));
      if (found.length > 0) leaks.push(`GET ${operation.path} as A: the answer carries B's ${found.join(', ')}`);
    }
  }
  const seconds = Math.round((Date.now() - started) / 1000);

  const ok = [...statuses].filter(([status]) => status.startsWith('2')).reduce((sum, [, n]) => sum + n, 0);
  const statusList = [...[...statuses].filter(([status]) => !status.startsWith('2')), ['2xx', ok] as const]
    .filter(([, n]) => n > 0)
    .sort(([, a], [, b]) => b - a)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  const notTenantData = [...new Set(global.map((g) => g.replace(/^.* \((\w+)\)$/, '$1')))].join(', ');
  reportFigure(task, {
    check: 'tenant-isolation',
    summary:
      `${checked.length} routes with tenant ids (path, query or body) x 2-3 callers (A's owner, A's employee; A's agent key on paid routes) = ${calls} calls with tenant B's ids as tenant A, ` +
      `${paidCalls} of them paid for (rail A; an MPP session for the per-tick stream): ${leaks.length} leaks (each answered like the same call with missing ids: ${statusList}, ` +
      `the 2xx on filters and the escrow status; escrow ids are public by spec 4.4, so ${publicEscrowCalls} escrow-route calls were checked for B's data only); ` +
      `B's data unchanged (${rowCount} rows in ${tablesWithRows} tables, ${readsBefore.size} of B's own reads); ` +
      `control: A's own ids answer unlike missing ids on ${ordered.length - indistinct.length} of ${ordered.length} routes, and no answer to A (nor A's reads of ${idFree.length} id-free GET routes) carries B's data; ` +
      `not tenant data, left out: ${global.length} routes with ids of ${notTenantData}; ${seconds} s`,
  });
  if (leaks.length > 0) console.log(`${leaks.length} leaks:\n${leaks.join('\n')}`);

  expect(validationErrors, 'bodies must pass validation so the calls reach authorisation').toEqual([]);
  expect(leaks).toEqual([]);
  expect(changedTables).toEqual([]);
  expect(changedReads).toEqual([]);
  expect(calls).toBeGreaterThan(80);
  expect(indistinct, "routes where A's own ids answer like missing ids (the check above would prove nothing there)").toEqual([]);
});
