import { randomBytes, randomUUID } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { agentProofHeaders } from '../../support/agents.js';
import type { TestApp } from '../../support/app.js';
import type { PayingFetch } from '../../support/pay.js';
import { notify } from '../../../src/features/notifications/service.js';
import { TreasuryService } from '../../../src/features/treasury/service.js';

/**
 * Shared by the fuzz and tenant-isolation reliability tests: the OpenAPI document walked as data
 * (operations, parameters, body schemas), a seeded PRNG, plausible values from a schema, the id
 * kind behind each id slot, a bounded in-process sender, and a seeded tenant with one object of
 * every kind that has an id in a route.
 */

// ---- The OpenAPI document as data ---------------------------------------------------------------

export interface SchemaObject {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean | number;
  minItems?: number;
  maxItems?: number;
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  additionalProperties?: boolean | SchemaObject;
  anyOf?: SchemaObject[];
  oneOf?: SchemaObject[];
  allOf?: SchemaObject[];
  example?: unknown;
  default?: unknown;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: SchemaObject;
}

export interface OperationObject {
  parameters?: ParameterObject[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: SchemaObject }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
  security?: Record<string, string[]>[];
  'x-payment'?: { price: string; rails: string[]; unit: string };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, SchemaObject> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** One operation (path x method) of the document, with what the generators need to know about it. */
export interface Operation {
  method: string;
  /** The template, e.g. /api/employers/{id}/team. */
  path: string;
  op: OperationObject;
  params: ParameterObject[];
  /** The JSON (or form) body schema, resolved; undefined when the route declares none. */
  body: SchemaObject | undefined;
  bodyType: 'json' | 'form' | 'none';
  /** Answers 402 until paid (the `x-payment` extension). */
  paid: boolean;
  /** Declares the agent identity proof headers. */
  agentSigned: boolean;
  /** Security scheme names (bearerAuth, mcpOAuth). */
  security: string[];
  /** Its 200 is a server-sent event stream. */
  eventStream: boolean;
}

/** Deletes, revokes or removes: fuzzed after the rest, so the objects the others point at stay alive meanwhile. */
export function isDestructive(operation: Operation): boolean {
  return operation.method === 'DELETE' || operation.body?.properties?.remove !== undefined;
}

export function listOperations(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const content = op.requestBody?.content ?? {};
      const json = content['application/json']?.schema;
      const form = content['application/x-www-form-urlencoded']?.schema;
      const params = op.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        op,
        params,
        body: json ? deref(doc, json) : form ? deref(doc, form) : undefined,
        bodyType: json ? 'json' : form ? 'form' : 'none',
        paid: op['x-payment'] !== undefined,
        agentSigned: params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-agent-signature'),
        security: (op.security ?? []).flatMap((s) => Object.keys(s)),
        eventStream: Object.values(op.responses).some((r) => r.content !== undefined && 'text/event-stream' in r.content),
      });
    }
  }
  return operations;
}

/** The schema behind a `$ref` (following chains; refs nested inside are resolved where they are walked). */
export function deref(doc: OpenApiDocument, schema: SchemaObject): SchemaObject {
  let current = schema;
  for (let hops = 0; current.$ref && hops < 20; hops++) {
    const name = current.$ref.split('/').pop()!;
    const target = doc.components.schemas[name];
    if (!target) throw new Error(`unresolved $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

/** allOf merged into one object schema (zod-openapi emits allOf for `.extend()`). */
export function flatten(doc: OpenApiDocument, schema: SchemaObject): SchemaObject {
  const s = deref(doc, schema);
  if (!s.allOf) return s;
  const parts = s.allOf.map((part) => flatten(doc, part));
  return {
    ...s,
    allOf: undefined,
    type: 'object',
    properties: Object.assign({}, s.properties, ...parts.map((p) => p.properties ?? {})),
    required: [...(s.required ?? []), ...parts.flatMap((p) => p.required ?? [])],
  };
}

// ---- Seeded PRNG --------------------------------------------------------------------------------

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++) out += this.int(256).toString(16).padStart(2, '0');
    return out;
  }

  /** A UUID (v4 layout) from this generator, so a run is reproducible from its seed. */
  uuid(): string {
    const h = this.hex(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** A derived generator (one per operation), so adding a route does not reshuffle the others. */
  fork(label: string): Rng {
    let h = this.state ^ 0x9e3779b9;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new Rng(h);
  }
}

// ---- Id slots: which kind of object an id in a route names -----------------------------------------

export type IdKind =
  | 'employer'
  | 'employee'
  | 'payrollRun'
  | 'decision'
  | 'blocklistEntry'
  | 'authorization'
  | 'escrow'
  | 'notification'
  | 'bankAccount'
  | 'announcement'
  | 'agentProfile'
  | 'reputationSubject'
  | 'cardCredit';

/** Kinds that belong to no tenant: announcements (platform-wide), the public agent directory, public reputation. */
export const GLOBAL_ID_KINDS: ReadonlySet<IdKind> = new Set(['announcement', 'agentProfile', 'reputationSubject']);

/** The kind behind a path parameter, from its name and the segment before it; undefined when unknown. */
export function pathIdKind(path: string, name: string): IdKind | undefined {
  const segments = path.split('/');
  const at = segments.indexOf(`{${name}}`);
  const before = at > 0 ? segments[at - 1] : undefined;
  if (name === 'employer_id' || name === 'employerId') return 'employer';
  if (name === 'employeeId') return 'employee';
  if (name === 'runId') return 'payrollRun';
  if (name === 'entryId') return 'blocklistEntry';
  if (name === 'authorization_id') return 'authorization';
  if (name === 'creditId') return 'cardCredit';
  if (name === 'address' && before === 'reputation') return 'reputationSubject';
  if (name !== 'id') return undefined;
  switch (before) {
    case 'employers':
      return 'employer';
    case 'employees':
    case 'employee':
      return 'employee';
    case 'escrow':
    case 'escrows':
      return 'escrow';
    case 'announcements':
      return 'announcement';
    case 'profile':
      return 'agentProfile';
    case 'card-credits':
      return 'cardCredit';
    default:
      return undefined;
  }
}

/** The kind behind an id field of a body or query, from its name; undefined when it names no object. */
export function fieldIdKind(name: string): IdKind | undefined {
  switch (name) {
    case 'employer_id':
    case 'employerId':
      return 'employer';
    case 'employee_id':
    case 'employeeId':
      return 'employee';
    case 'payrollRunId':
    case 'payroll_run_id':
      return 'payrollRun';
    case 'decision_id':
      return 'decision';
    case 'escrow_id':
      return 'escrow';
    case 'ids':
      return 'notification';
    case 'bankAccountId':
      return 'bankAccount';
    default:
      return undefined;
  }
}

// ---- Plausible values from a schema ------------------------------------------------------------------

/** What a generator fills in by field name before falling back to the schema (ids, wallets, tokens); OMIT leaves the field out. */
export type FieldValues = (name: string, schema: SchemaObject) => unknown;
export const OMIT = Symbol('omit');

const KNOWN_PATTERNS: [RegExp, (rng: Rng) => string][] = [
  [/^\^0x\[0-9a-fA-F\]\{40\}\$$/, (rng) => `0x${rng.hex(20)}`],
  [/^\^0x\[0-9a-fA-F\]\{64\}\$$/, (rng) => `0x${rng.hex(32)}`],
  [/^\^\(0\|\[1-9\]/, (rng) => `${1 + rng.int(20)}.${rng.int(100).toString().padStart(2, '0')}`],
  [/^\^\\d\{4\}-\\d\{2\}-\\d\{2\}\$$/, () => '2026-11-01'],
  [/^\^\[1-9\]\\d/, (rng) => String(100 + rng.int(900))],
  [/^\^\[\\x21-\\x7e\]/, (rng) => `agent-${rng.hex(6)}`],
  [/^\^\[a-z0-9\]\[a-z0-9-\]/, (rng) => `skill-${rng.hex(3)}`],
];

/** A random base58 Solana address (32 random bytes). */
export function solanaAddress(rng: Rng): string {
  return getBase58Decoder().decode(Uint8Array.from(Buffer.from(rng.hex(32), 'hex')));
}

/**
 * A value the schema accepts (as far as formats and the known patterns go): the example or
 * default first, then by type. `fields` fills in values by property name first.
 */
export function sampleValue(doc: OpenApiDocument, schema: SchemaObject, rng: Rng, fields?: FieldValues, name = '', depth = 0): unknown {
  const s = flatten(doc, schema);
  if (name && fields) {
    const given = fields(name, s);
    if (given !== undefined && given !== OMIT) return given;
  }
  if (s.anyOf?.[0]) return sampleValue(doc, s.anyOf[0], rng, fields, name, depth);
  if (s.oneOf?.[0]) return sampleValue(doc, s.oneOf[0], rng, fields, name, depth);
  if (s.enum && s.enum.length > 0) return rng.pick(s.enum);
  if (s.example !== undefined && typeof s.example !== 'object') return s.example;
  if (s.default !== undefined && s.default !== null) return s.default;
  const type = s.type ?? (s.properties ? 'object' : s.items ? 'array' : 'string');
  switch (type) {
    case 'string': {
      if (s.format === 'uuid') return rng.uuid();
      if (s.format === 'date-time') return new Date(Date.now() + 3_600_000).toISOString();
      if (s.format === 'date') return '2026-11-01';
      const known = s.pattern ? KNOWN_PATTERNS.find(([p]) => p.test(s.pattern!)) : undefined;
      if (known) return known[1](rng);
      const text = `text ${rng.hex(3)}`;
      return text.padEnd(s.minLength ?? 0, 'x').slice(0, s.maxLength ?? 200);
    }
    case 'integer':
    case 'number': {
      const min = s.minimum ?? 1;
      const max = Math.min(s.maximum ?? min + 100, min + 100);
      return min + rng.int(Math.max(1, max - min + 1));
    }
    case 'boolean':
      return true;
    case 'array': {
      if (depth > 6 || !s.items) return [];
      const count = Math.max(1, s.minItems ?? 1);
      // Items carry no field name: `fields` answers for the array as a whole.
      return Array.from({ length: count }, () => sampleValue(doc, s.items!, rng, fields, '', depth + 1));
    }
    case 'object': {
      if (depth > 6) return {};
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(s.properties ?? {})) {
        const required = s.required?.includes(key) ?? false;
        const given = fields?.(key, flatten(doc, child));
        if (given === OMIT) continue;
        const value = sampleValue(doc, child, rng, fields, key, depth + 1);
        // Optional fields only when named by `fields`, or now and then.
        if (required || given !== undefined || rng.chance(0.3)) out[key] = value;
      }
      return out;
    }
    default:
      return null;
  }
}

// ---- Sending one request, bounded in time --------------------------------------------------------------

export interface Sent {
  status: number;
  /** At most the first 4 KB of the body. */
  body: string;
  contentType: string;
  ms: number;
  /** The app did not answer (or its body did not end) within the timeout. */
  timedOut: boolean;
  /** app.request rejected or the body stream errored: the app failed without an HTTP answer. */
  error?: string;
  /** The answer carries a payment receipt (MPP or x402): the request was paid for and reached the handler. */
  charged?: boolean;
}

export interface Outgoing {
  method: string;
  /** Path with query, already encoded as it should go on the wire. */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** A header value as a Node server would pass it on: bytes as latin1, without CR, LF and NUL (which the parser refuses). */
function headerSafe(value: string): string {
  return Buffer.from(value, 'utf8').toString('latin1').replace(/[\r\n\0]/g, '');
}

/** Where a request goes: `inProcess(t)` (app.request, no socket) or a paying client's fetch over loopback. */
export type Fetcher = (url: string, init: RequestInit) => Promise<Response> | Response;

export const inProcess = (t: TestApp): Fetcher => (url, init) => t.app.request(url, init);

/**
 * Sends one request. An event stream is read for `streamMs` and then cancelled (the client
 * leaving); anything else is read to its end, within `timeoutMs`.
 */
export async function send(fetcher: Fetcher, request: Outgoing, { timeoutMs = 15_000, streamMs = 300 } = {}): Promise<Sent> {
  const started = performance.now();
  const abort = new AbortController();
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) headers.set(name, headerSafe(value));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const answered = await Promise.race([
      Promise.resolve(fetcher(request.url, { method: request.method, headers, body: request.body ?? null, signal: abort.signal })),
      deadline,
    ]);
    if (answered === 'timeout') {
      abort.abort();
      return { status: 0, body: '', contentType: '', ms: elapsed(), timedOut: true };
    }
    const contentType = answered.headers.get('content-type') ?? '';
    const stream = contentType.includes('text/event-stream');
    const reader = answered.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    let timedOut = false;
    if (reader) {
      let streamTimer: NodeJS.Timeout | undefined;
      const until = stream ? new Promise<'timeout'>((resolve) => (streamTimer = setTimeout(() => resolve('timeout'), streamMs))) : deadline;
      for (;;) {
        const next = await Promise.race([reader.read(), until]);
        if (next === 'timeout') {
          timedOut = !stream;
          await reader.cancel().catch(() => {});
          abort.abort();
          break;
        }
        if (next.done) break;
        if (size < 4096) chunks.push(next.value);
        size += next.value.byteLength;
      }
      clearTimeout(streamTimer);
    }
    const body = Buffer.concat(chunks).toString('utf8').slice(0, 4096);
    const charged = ['payment-receipt', 'payment-response', 'x-payment-response'].some((name) => answered.headers.has(name));
    return { status: answered.status, body, contentType, ms: elapsed(), timedOut, charged };
  } catch (error) {
    return { status: 0, body: '', contentType: '', ms: elapsed(), timedOut: false, error: describeError(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** An error with its causes (undici's "fetch failed" says why only in `cause`: a reset, a closed socket). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current = error; current instanceof Error && parts.length < 4; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    parts.push(`${current.name}: ${current.message}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  return parts.join(' <- ') || String(error);
}

/** Runs `work` over `items` with at most `concurrency` in flight, stopping new work after `deadline` (ms epoch). */
export async function pool<T>(items: readonly T[], concurrency: number, deadline: number, work: (item: T) => Promise<void>): Promise<number> {
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length && Date.now() < deadline) {
      const item = items[next++]!;
      await work(item);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}

// ---- A seeded tenant ------------------------------------------------------------------------------

export interface TenantEmployee {
  id: string;
  sub: string;
  email: string;
  fullName: string;
  wallet: string;
  solanaWallet: string;
  token: string;
}

export interface Tenant {
  label: string;
  owner: { sub: string; email: string; token: string };
  employerId: string;
  employerName: string;
  employees: TenantEmployee[];
  authorization: { id: string; identifier: string; label: string; hmacSecret: string };
  agentKey: string;
  blocklistEntryId: string;
  payrollRunId: string;
  decisionId: string;
  notificationId: string;
  /** Present when the sandbox bridge approved KYC in time. */
  bankAccountId: string | null;
  /** Present when a paying client was given. */
  escrowId: string | null;
  escrowWorker: string | null;
  /** Every id of this tenant by kind (for substitution) and every string that must never reach another tenant. */
  ids: Partial<Record<IdKind, string>>;
  secrets: string[];
}

const json = async <T>(response: Response, what: string, expected: number[]): Promise<T> => {
  const text = await response.text();
  if (!expected.includes(response.status)) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
};

/**
 * A tenant with one object of every kind that appears in a route: an owner, an employer with a
 * funded treasury, two employees who signed in, an agent authorization and agent key, a blocklist
 * entry, a payroll run and an agent decision, a notification, a bank account (if KYC clears in
 * time) and a card, and, with `pay`, an escrow posted by its agent.
 */
export async function seedTenant(t: TestApp, label: string, options: { pay?: PayingFetch; card?: PayingFetch; fundUsd?: string } = {}): Promise<Tenant> {
  const tag = randomBytes(4).toString('hex');
  const owner = { sub: `owner-${label}-${tag}`, email: `owner-${label}-${tag}@tenant-${label}.example`, token: '' };
  owner.token = await t.token(owner.sub, owner.email);
  const employerName = `Tenant ${label} Holdings ${tag}`;
  const employer = await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner.token, body: { name: employerName } }), 'create employer', [200, 201]);
  const employerId = employer.id;

  const employees: TenantEmployee[] = [];
  for (const name of ['Ada', 'Grace']) {
    const fullName = `${name} ${label}-${tag}`;
    const email = `${name.toLowerCase()}-${label}-${tag}@tenant-${label}.example`;
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const solanaWallet = getBase58Decoder().decode(randomBytes(32));
    const created = await json<{ id: string }>(
      await t.request('POST', `/api/employers/${employerId}/team`, {
        token: owner.token,
        body: { email, full_name: fullName, wallet_address: wallet, solana_wallet_address: solanaWallet, annual_salary_usd: '120000', department: `Dept ${label}`, cost_centre: `CC-${label}` },
      }),
      'add employee',
      [201],
    );
    const sub = `employee-${name.toLowerCase()}-${label}-${tag}`;
    // Signing in with the invited email links the user to the employee record.
    const token = await t.token(sub, email);
    await json(await t.request('GET', '/api/session', { token }), 'employee session', [200]);
    employees.push({ id: created.id, sub, email, fullName, wallet, solanaWallet, token });
  }

  const fundUsd = options.fundUsd ?? '1000';
  const treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  await json(await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: fundUsd } }), 'faucet', [200]);
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(employerId), BigInt(fundUsd) * 1_000_000n);
  // The service's Solana float funds escrow custody.
  const solana = t.chains!.solana;
  await json(await t.request('POST', '/api/dev/faucet', { body: { network: solana.network, address: solana.serviceAddress, amount: '100' } }), 'solana faucet', [200]);

  const authLabel = `Agent ${label}-${tag}`;
  const authorization = await json<{ id: string; agent_identifier: string; hmac_secret: string }>(
    await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, {
      token: owner.token,
      body: { label: authLabel, agent_identifier: `agent-${label}-${tag}`, per_tx_cap_usd: '50', per_day_cap_usd: '500', velocity_per_minute: 600 },
    }),
    'authorize agent',
    [201],
  );
  const agentKey = (await json<{ agent_key: string }>(await t.request('POST', `/api/employers/${employerId}/agent-key`, { token: owner.token }), 'agent key', [201])).agent_key;
  const blocklistEntry = await json<{ id: string }>(
    await t.request('POST', `/api/employers/${employerId}/blocklist`, { token: owner.token, body: { wallet_address: `0x${randomBytes(20).toString('hex')}`, reason: `Fraud seen by ${label}-${tag}` } }),
    'blocklist entry',
    [200, 201],
  );
  const run = await json<{ payroll_run_id: string }>(
    await t.request('POST', `/api/employers/${employerId}/payroll`, {
      token: owner.token,
      body: { items: employees.map((e) => ({ employee_id: e.id, amount_usd: '10.50' })), pay_period_start: '2026-11-01', pay_period_end: '2026-11-30' },
    }),
    'prepare payroll',
    [201],
  );
  const decision = await json<{ decision_id?: string; id?: string }>(
    await t.request('POST', `/api/employers/${employerId}/payroll/decisions`, {
      token: owner.token,
      body: { items: employees.map((e) => ({ employee_id: e.id, amount_usd: '1.25', chain: 'tempo' })), agent_identifier: authorization.agent_identifier },
    }),
    'payroll decision',
    [201],
  );
  const decisionId = decision.decision_id ?? decision.id;
  if (!decisionId) throw new Error(`payroll decision without an id: ${JSON.stringify(decision)}`);
  const notificationTitle = `Notice for ${label}-${tag}`;
  await notify(t.database.db, { employerId, type: 'reliability_seed', severity: 'info', title: notificationTitle, dedupeKey: `seed:${employerId}` });
  const notifications = await json<{ notifications: { id: string }[] }>(await t.request('GET', `/api/employers/${employerId}/notifications`, { token: owner.token }), 'notifications', [200]);
  const notificationId = notifications.notifications[0]?.id;
  if (!notificationId) throw new Error('the seeded notification is not listed');

  const bankAccountId = await bankAccount(t, owner.token, employees[0]!, label);
  await json(await t.request('POST', `/api/employees/${employees[0]!.id}/card`, { token: owner.token }), 'issue card', [200, 201]);
  const escrow = options.pay ? await postEscrow(t, options.pay, employerId, authorization, label, tag) : null;
  const cardCredit = options.card && bankAccountId ? await buyCardCredit(t, options.card, employees[0]!, bankAccountId) : null;

  const ids: Partial<Record<IdKind, string>> = {
    employer: employerId,
    employee: employees[0]!.id,
    payrollRun: run.payroll_run_id,
    decision: decisionId,
    blocklistEntry: blocklistEntry.id,
    authorization: authorization.id,
    notification: notificationId,
    ...(bankAccountId ? { bankAccount: bankAccountId } : {}),
    ...(escrow ? { escrow: escrow.id } : {}),
    ...(cardCredit ? { cardCredit } : {}),
  };
  const secrets = [
    ...Object.values(ids),
    ...employees.flatMap((e) => [e.id, e.email, e.fullName, e.wallet, e.wallet.toLowerCase(), e.solanaWallet]),
    owner.email,
    owner.sub,
    employerName,
    authLabel,
    authorization.agent_identifier,
    authorization.hmac_secret,
    agentKey,
    notificationTitle,
    `Fraud seen by ${label}-${tag}`,
    ...(escrow ? [escrow.worker] : []),
  ];
  return {
    label,
    owner,
    employerId,
    employerName,
    employees,
    authorization: { id: authorization.id, identifier: authorization.agent_identifier, label: authLabel, hmacSecret: authorization.hmac_secret },
    agentKey,
    blocklistEntryId: blocklistEntry.id,
    payrollRunId: run.payroll_run_id,
    decisionId,
    notificationId,
    bankAccountId,
    escrowId: escrow?.id ?? null,
    escrowWorker: escrow?.worker ?? null,
    ids,
    secrets: [...new Set(secrets)],
  };
}

/** KYC through the sandbox bridge (approved after a few polls), then a bank account; null if KYC does not clear in 5 s. */
async function bankAccount(t: TestApp, ownerToken: string, employee: TenantEmployee, label: string): Promise<string | null> {
  await json(await t.request('POST', `/api/employees/${employee.id}/kyc`, { token: ownerToken }), 'kyc', [200]);
  const body = { destinationType: 'ach', accountOwnerName: employee.fullName, details: { routingNumber: '021000021', accountNumber: `0001${label.charCodeAt(0)}3456789` }, label: `Checking ${label}` };
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    const response = await t.request('POST', `/api/employees/${employee.id}/bank-accounts`, { token: employee.token, body });
    if (response.status === 201) return json<{ bank_account_id: string }>(response, 'bank account', [201]).then((account) => account.bank_account_id);
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

/** A card credit held by the employee: an off-ramp of theirs paid by card (a $0.50 top-up; $0.25 left). */
async function buyCardCredit(t: TestApp, card: PayingFetch, employee: TenantEmployee, bankAccountId: string): Promise<string> {
  await json(await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: employee.wallet, amount: '5' } }), 'faucet', [200]);
  const response = await card('/api/mpp/bridge/offramp', {
    method: 'POST',
    body: { employeeId: employee.id, amount: '1', destinationType: 'ach', bankAccountId },
    headers: { 'X-Identity-Token': employee.token },
  });
  await json(response, 'off-ramp by card', [200]);
  return response.headers.get('Payment-Credit')!;
}

/** An escrow posted (and paid, rail A) by the tenant's own HMAC agent. */
async function postEscrow(t: TestApp, pay: PayingFetch, employerId: string, agent: { agent_identifier: string; hmac_secret: string }, label: string, tag: string): Promise<{ id: string; worker: string }> {
  const worker = `worker-${label}-${tag}`;
  const body = JSON.stringify({
    employer_id: employerId,
    worker_wallet_address: getBase58Decoder().decode(randomBytes(32)),
    worker_agent_identifier: worker,
    amount_usdc: '2.00',
    rubric_prompt: `A note for ${label}.\nmust include: ledger`,
  });
  const proof = await agentProofHeaders(agent.agent_identifier, { hmac: agent.hmac_secret }, { method: 'POST', path: '/api/mpp/escrow/post', body });
  const response = await pay('/api/mpp/escrow/post', { method: 'POST', body, headers: proof });
  const posted = await json<{ escrow_id: string }>(response, 'escrow post', [200]);
  return { id: posted.escrow_id, worker };
}

/** A fresh random id shaped like `like` (what a missing object's id looks like): a UUID, or the same letters/digits pattern. */
export function missingIdLike(like: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(like)) return randomUUID();
  const hex = randomBytes(like.length).toString('hex');
  let i = 0;
  return like.replace(/[0-9a-zA-Z]/g, (c) => {
    const n = parseInt(hex.slice(2 * i++, 2 * i), 16);
    if (/[0-9]/.test(c)) return String(n % 10);
    const letter = String.fromCharCode(97 + (n % 26));
    return c === c.toUpperCase() ? letter.toUpperCase() : letter;
  });
}

// ---- Malformed requests ------------------------------------------------------------------------------

/** What the generator needs from the running app: tokens, real ids, and real payment offers to tamper with. */
export interface FuzzContext {
  tokens: { owner: string; employee: string; admin: string; mcp: string };
  agentKey: string;
  /** A real id for a kind, where the tenant has one. */
  idFor(kind: IdKind): string | undefined;
  /** Values by field name that make an otherwise valid body (ids of the tenant, wallets). */
  fields: FieldValues;
  /** The real 402 of a paid route: its `WWW-Authenticate` and `PAYMENT-REQUIRED` headers. */
  offers: Map<string, { wwwAuthenticate: string | null; paymentRequired: string | null }>;
}

export interface FuzzCase extends Outgoing {
  /** What was malformed, for the failure report. */
  mutation: string;
  /** Sign the request (as sent) with the tenant agent's proof headers before sending. */
  agentProof: boolean;
}

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** A 1 MB string is built once; JSON around it goes over the body limit (413). */
const MEGABYTE = 'm'.repeat(1024 * 1024);
const HUNDRED_KB = 'k'.repeat(100 * 1024);

/** Malformed JSON values: wrong types, boundaries, huge and odd strings, unicode, injection-looking text. */
const JUNK: ((rng: Rng) => unknown)[] = [
  () => null,
  () => true,
  () => false,
  () => 0,
  () => -1,
  () => 1.5,
  () => -0.000001,
  () => 1e308,
  () => -1e308,
  () => Number.MAX_SAFE_INTEGER + 2,
  () => 2 ** 64,
  () => 5e-324,
  () => '',
  () => ' ',
  () => '\t\r\n',
  () => HUNDRED_KB,
  () => 'é'.repeat(60_000),
  () => '\u0000',
  () => 'abc\u0000def',
  () => '\u202eevil\u202c.exe',
  () => '\u200f\u05de\u05e9\u05db\u05d5\u05e8\u05ea\u200e',
  () => '\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645',
  () => '\ud800',
  () => 'x\udfff\ud800y',
  () => '💸🧾👩‍💻🏳️‍🌈',
  () => 'Z\u0337\u0322\u0349a\u0336l\u0338g\u0335o\u0334',
  () => '\ufeffBOM',
  () => 'line\u2028sep\u2029',
  () => '\uff46\uff55\uff4c\uff4c\uff11\uff12\uff13',
  () => '\u0661\u0662\u0663\u066b\u0664\u0665',
  () => '-1',
  () => '1e400',
  () => '0x10',
  () => '1,000.00',
  () => '00012.50',
  () => '.5',
  () => '5.',
  () => '1.0000001',
  () => '99999999999999999999999999999999999999',
  () => '-0.00',
  () => ' 10 ',
  () => '10 USD',
  () => '$10',
  () => 'NaN',
  () => 'Infinity',
  () => '1_000',
  () => 'not-a-uuid',
  () => '00000000-0000-0000-0000-000000000000',
  (rng) => rng.uuid().toUpperCase(),
  (rng) => `{${rng.uuid()}}`,
  (rng) => rng.uuid().replaceAll('-', ''),
  (rng) => `${rng.uuid()}x`,
  () => 'ffffffff-ffff-ffff-ffff-ffffffffffff',
  (rng) => rng.uuid(),
  () => "' OR '1'='1",
  () => "1; DROP TABLE employers; --",
  () => '<script>alert(1)</script>',
  () => '"><img src=x onerror=alert(1)>',
  () => '{{7*7}}${7*7}<%= 7*7 %>',
  () => '../../../../etc/passwd',
  () => '%00%2e%2e%2f',
  () => 'javascript:alert(1)',
  () => 'http://169.254.169.254/latest/meta-data/',
  () => 'file:///etc/passwd',
  () => 'data:text/html,<script>1</script>',
  () => '0x',
  () => `0x${'g'.repeat(40)}`,
  () => `0x${'f'.repeat(41)}`,
  () => `0X${'A'.repeat(40)}`,
  () => '0x0000000000000000000000000000000000000000',
  () => '1'.repeat(44),
  () => 'O0Il'.repeat(11),
  () => '2026-02-30',
  () => '2026-13-01T00:00:00Z',
  () => '9999-12-31T23:59:59Z',
  () => '0000-01-01',
  () => '2026-11-01T25:61:61Z',
  () => '+275760-09-13T00:00:00.001Z',
  () => [],
  () => [null],
  () => [[[]]],
  () => ({}),
  () => ({ $ne: null }),
  () => ({ $gt: '' }),
  () => ({ constructor: { prototype: { polluted: true } } }),
  () => ['a', 1, null, {}],
  () => Array.from({ length: 5000 }, (_, i) => i),
  () => Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i])),
];

/** A junk value, sometimes chosen for the schema (the wrong type, just past a bound, not in the enum). */
function junkFor(doc: OpenApiDocument, schema: SchemaObject | undefined, rng: Rng): unknown {
  const s = schema ? flatten(doc, schema) : {};
  if (rng.chance(0.5)) {
    const type = s.type ?? (s.properties ? 'object' : undefined);
    const boundary: unknown[] = [];
    if (type === 'string') {
      boundary.push(123, true, ['x'], { x: 1 }, null);
      if (s.maxLength !== undefined) boundary.push('y'.repeat(s.maxLength + 1));
      if (s.minLength) boundary.push('y'.repeat(s.minLength - 1));
      if (s.enum) boundary.push(String(s.enum[0]).toUpperCase(), `${String(s.enum[0])} `, 'other');
      if (s.pattern) boundary.push(`${String(sampleValue(doc, s, rng))}0`, String(sampleValue(doc, s, rng)).slice(1));
      if (s.format === 'uuid') boundary.push(rng.uuid().slice(0, 35), `${rng.uuid()} `);
      if (s.format === 'date-time') boundary.push('yesterday', '2026-11-01', '1970-01-01T00:00:00Z');
    } else if (type === 'integer' || type === 'number') {
      boundary.push('1', 1.5, -1, 0, 1e21, -1e21, Number.MAX_SAFE_INTEGER + 1, null, [], true);
      if (s.minimum !== undefined) boundary.push(s.minimum - 1, s.minimum - 0.5);
      if (s.maximum !== undefined) boundary.push(s.maximum + 1, s.maximum + 0.5);
    } else if (type === 'boolean') {
      boundary.push('true', 1, 0, 'yes', null);
    } else if (type === 'array') {
      boundary.push({}, 'a,b', null, [[]], Array.from({ length: (s.maxItems ?? 100) + 1 }, () => (s.items ? sampleValue(doc, s.items, rng) : 1)));
    } else if (type === 'object') {
      boundary.push([], 'object', 1, null, { unexpected: true });
    }
    if (boundary.length > 0) return rng.pick(boundary);
  }
  return rng.pick(JUNK)(rng);
}

type JsonPath = (string | number)[];

/** Every place in a value (objects' keys, arrays' items), so a mutation can land anywhere in it. */
function pathsOf(value: unknown, prefix: JsonPath = [], out: JsonPath[] = [], depth = 0): JsonPath[] {
  if (depth > 8 || out.length > 500) return out;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([...prefix, i]);
      pathsOf(item, [...prefix, i], out, depth + 1);
    });
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      out.push([...prefix, key]);
      pathsOf(child, [...prefix, key], out, depth + 1);
    }
  }
  return out;
}

/** The schema at a path of the body (following properties and items). */
function schemaAt(doc: OpenApiDocument, schema: SchemaObject | undefined, path: JsonPath): SchemaObject | undefined {
  let current = schema;
  for (const step of path) {
    if (!current) return undefined;
    const s = flatten(doc, current);
    current = typeof step === 'number' ? s.items : (s.properties?.[step] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined));
  }
  return current;
}

function setAt(root: unknown, path: JsonPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[path.at(-1)!] = value;
  return copy;
}

function deleteAt(root: unknown, path: JsonPath): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (Array.isArray(node)) node.splice(Number(last), 1);
  else delete node[last];
  return copy;
}

/** Required keys anywhere in the sample, as paths. */
function requiredPaths(doc: OpenApiDocument, schema: SchemaObject, value: unknown, prefix: JsonPath = []): JsonPath[] {
  const s = flatten(doc, schema);
  const out: JsonPath[] = [];
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of s.required ?? []) if (key in value) out.push([...prefix, key]);
    for (const [key, child] of Object.entries(s.properties ?? {})) {
      const inner = (value as Record<string, unknown>)[key];
      if (inner !== undefined) out.push(...requiredPaths(doc, child, inner, [...prefix, key]));
    }
  } else if (Array.isArray(value) && s.items) {
    value.forEach((item, i) => out.push(...requiredPaths(doc, s.items!, item, [...prefix, i])));
  }
  return out;
}

/** JSON text that no parser should accept, or accepts only with surprises. */
const BAD_JSON: ((valid: string, rng: Rng) => string | Uint8Array)[] = [
  (valid, rng) => valid.slice(0, rng.int(Math.max(1, valid.length))),
  (valid) => `${valid}}`,
  (valid) => `${valid} trailing`,
  (valid) => `\ufeff${valid}`,
  (valid) => valid.replaceAll('"', "'"),
  (valid) => valid.replace(/}$/, ',}'),
  (valid) => `/* comment */${valid}`,
  (valid) => valid.replace('{', '{"dup":1,"dup":2,'),
  (valid) => valid.replace('{', '{"__proto__":{"isAdmin":true},'),
  () => 'NaN',
  () => '{"a":NaN}',
  () => '{"amount":1e999999}',
  () => '{"amount":-}',
  () => '{"x":"\u0001\u0002"}',
  () => '{"x":"\\ud800"}',
  () => '{"x":"\\u00"}',
  () => '',
  () => '   ',
  () => 'null',
  () => '"string"',
  () => '[]',
  () => '12345678901234567890123456789',
  () => 'true',
  () => `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  () => `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
  () => `{"deep":${'['.repeat(5_000)}${']'.repeat(5_000)}}`,
  () => Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x80, 0xc0, 0xaf, 0x22, 0x7d]),
  () => Uint8Array.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc]),
  (valid) => Uint8Array.from(Buffer.from(valid, 'utf16le')),
  (valid) => valid.replaceAll(':', ': \u0000'),
  () => `{"x":"${MEGABYTE}"}`,
  (valid) => `${valid}\n${valid}`,
  () => '<?xml version="1.0"?><a>1</a>',
  () => 'a=1&b=2',
];

const CONTENT_TYPES = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'multipart/form-data',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/jsonx',
  'application/xml',
  'application/merge-patch+json',
  '*/*',
  '',
  `application/json; ${'p=1; '.repeat(2000)}`,
  'application/json, text/plain',
];

const PATH_JUNK: ((rng: Rng) => string)[] = [
  () => 'not-a-uuid',
  () => '0',
  () => '-1',
  () => '1e9',
  () => 'null',
  () => 'undefined',
  () => '%2F',
  () => '..%2F..%2Fapi%2Fadmin',
  () => '%2e%2e',
  () => '%2e',
  () => '%252F',
  () => '%00',
  () => '%',
  () => '%ZZ',
  () => '%E0%A4%A',
  () => '%C0%AF',
  () => '%FF%FE',
  (rng) => encodeURIComponent(`\u202e${rng.uuid()}`),
  () => encodeURIComponent('💸'),
  () => '%ED%A0%80',
  () => 'x'.repeat(10_000),
  () => encodeURIComponent("' OR 1=1--"),
  () => encodeURIComponent('<script>alert(1)</script>'),
  (rng) => rng.uuid().toUpperCase(),
  (rng) => rng.uuid().replaceAll('-', ''),
  () => '00000000-0000-0000-0000-000000000000',
  (rng) => rng.uuid(),
  (rng) => `${rng.uuid()}%20`,
  (rng) => `${rng.uuid()};x=1`,
  () => '{id}',
  () => ':id',
  () => '%20',
  () => '~',
  () => '*',
  () => '%0d%0aSet-Cookie:%20x=1',
  () => encodeURIComponent('١٢٣'),
  () => '1'.repeat(44),
];

/** Header values (latin1 only: a Node server hands non-ASCII bytes on as latin1). */
const HEADER_JUNK: ((rng: Rng) => string)[] = [
  () => '',
  () => ' ',
  () => 'x'.repeat(20_000),
  () => 'null',
  () => '-1',
  () => '1e20',
  () => '1.5',
  () => 'NaN',
  () => '0x',
  () => `0x${'z'.repeat(130)}`,
  (rng) => `0x${rng.hex(65)}`,
  () => '\u00ff\u00fe',
  () => '💸ñ\u202e',
  () => 'erc8004:tempo:99999999999999999999999999',
  () => 'erc8004:tempo:-1',
  () => 'solana:111',
  (rng) => `sk_agent_${base64url(rng.hex(32)).slice(0, 43)}`,
  () => 'sk_agent_',
  () => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  (rng) => base64(rng.hex(40)),
  () => "' OR 1=1 --",
  () => '<script>',
  () => '9999999999999999999',
  () => String(Math.floor(Date.now() / 1000) - 3600),
  () => String(Math.floor(Date.now() / 1000) + 3600),
];

const JSON_RPC_METHODS = [
  'eth_chainId',
  'eth_blockNumber',
  'eth_getBalance',
  'eth_call',
  'eth_estimateGas',
  'eth_sendRawTransaction',
  'eth_getTransactionReceipt',
  'eth_getTransactionByHash',
  'eth_getLogs',
  'eth_getTransactionCount',
  'eth_getBlockByNumber',
  'eth_getCode',
  'eth_gasPrice',
  'getLatestBlockhash',
  'getBalance',
  'getAccountInfo',
  'sendTransaction',
  'simulateTransaction',
  'getSignatureStatuses',
  'getTokenAccountBalance',
  'getSlot',
  'getMinimumBalanceForRentExemption',
  'tools/list',
  'tools/call',
  'initialize',
  'notifications/initialized',
  'ping',
  'resources/list',
  'no_such_method',
];

/** A JSON-RPC call (or batch) with junk where it can hurt: the shape routes without a body schema but with a JSON-RPC body get. */
function jsonRpcJunk(rng: Rng, doc: OpenApiDocument): unknown {
  const call = () => {
    const method = rng.pick(JSON_RPC_METHODS);
    const params = rng.chance(0.5)
      ? Array.from({ length: rng.int(4) }, () => (rng.chance(0.5) ? `0x${rng.hex(rng.pick([20, 32, 100]))}` : junkFor(doc, undefined, rng)))
      : rng.pick<unknown>([{ name: rng.pick(['svc_memo_decode', 'svc_agents_profile', 'svc_reputation_get', 'nope']), arguments: { memo: junkFor(doc, undefined, rng), id: junkFor(doc, undefined, rng), address: junkFor(doc, undefined, rng) } }, junkFor(doc, undefined, rng), undefined]);
    const message: Record<string, unknown> = { jsonrpc: rng.chance(0.85) ? '2.0' : junkFor(doc, undefined, rng), id: rng.chance(0.8) ? rng.int(1000) : junkFor(doc, undefined, rng), method };
    if (params !== undefined) message.params = params;
    if (method === 'initialize') message.params = { protocolVersion: rng.pick(['2025-06-18', '1999-01-01', junkFor(doc, undefined, rng)]), capabilities: junkFor(doc, undefined, rng), clientInfo: { name: junkFor(doc, undefined, rng), version: '1' } };
    return message;
  };
  return rng.chance(0.2) ? Array.from({ length: rng.pick([0, 1, 3, 101]) }, call) : call();
}

/** Percent-encodes the UTF-8 bytes (a lone surrogate becomes U+FFFD, as a client's encoder would send it). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** Query pairs; a value starting with RAW_QUERY goes on the wire as is (malformed percent-encoding included). */
const RAW_QUERY = '\u0000raw:';
function encodeQuery(pairs: [string, string][]): string {
  if (pairs.length === 0) return '';
  return `?${pairs.map(([k, v]) => `${percentEncode(k)}=${v.startsWith(RAW_QUERY) ? v.slice(RAW_QUERY.length) : percentEncode(v)}`).join('&')}`;
}

/** A tampered payment proof: junk, junk base64, junk JSON, or a real offer's challenge with a forged payload. */
function paymentJunk(rng: Rng, offer: { wwwAuthenticate: string | null; paymentRequired: string | null } | undefined): [string, string, string] {
  const challenge = offer?.wwwAuthenticate ? realChallenge(offer.wwwAuthenticate, rng) : null;
  const accepts = offer?.paymentRequired ? realAccepts(offer.paymentRequired) : [];
  const forgedMpp = (): string => {
    const payloads: unknown[] = [
      { type: 'hash', hash: `0x${rng.hex(32)}` },
      { type: 'hash', hash: rng.pick(JUNK)(rng) },
      { type: 'transaction', signature: `0x76${rng.hex(rng.pick([1, 40, 200]))}` },
      { type: 'transaction', signature: rng.pick(JUNK)(rng) },
      { type: 'session', action: 'voucher', channelId: `0x${rng.hex(32)}`, cumulativeAmount: '1', signature: `0x${rng.hex(65)}` },
      {},
      rng.pick(JUNK)(rng),
    ];
    const tampered = challenge && rng.chance(0.3) ? { ...challenge, ...rng.pick<Record<string, unknown>>([{ id: 'x' }, { expires: '2000-01-01T00:00:00Z' }, { request: base64url('{"amount":"0"}') }, { method: 'stripe' }, { intent: 'session' }, { realm: rng.pick(JUNK)(rng) }]) } : challenge;
    const credential = { challenge: tampered ?? rng.pick(JUNK)(rng), payload: rng.pick(payloads), ...(rng.chance(0.3) ? { source: rng.pick([`did:pkh:eip155:4217:0x${rng.hex(20)}`, 'did:junk']) } : {}) };
    return base64url(JSON.stringify(credential));
  };
  const forgedX402 = (version: 1 | 2): string => {
    const accepted = accepts.length > 0 ? rng.pick(accepts) : {};
    const evmPayload = {
      signature: rng.chance(0.7) ? `0x${rng.hex(65)}` : rng.pick(JUNK)(rng),
      authorization: { from: `0x${rng.hex(20)}`, to: (accepted as { payTo?: string }).payTo ?? `0x${rng.hex(20)}`, value: rng.pick(['10000', '0', '-1', '1e30', rng.pick(JUNK)(rng)]), validAfter: '0', validBefore: rng.pick(['9999999999', '0', 'x']), nonce: `0x${rng.hex(32)}` },
    };
    const svmPayload = { transaction: rng.chance(0.6) ? base64(rng.hex(rng.pick([10, 300, 1200]))) : rng.pick(JUNK)(rng) };
    const payload = rng.pick<unknown>([evmPayload, svmPayload, {}, rng.pick(JUNK)(rng)]);
    const body = version === 2
      ? { x402Version: 2, accepted: rng.chance(0.8) ? accepted : rng.pick(JUNK)(rng), payload, ...(rng.chance(0.3) ? { resource: rng.pick(JUNK)(rng) } : {}) }
      : { x402Version: 1, scheme: rng.pick(['exact', 'upto', '']), network: rng.pick(['base', 'solana', 'eip155:8453', (accepted as { network?: string }).network ?? 'x']), payload };
    return base64(JSON.stringify(body));
  };
  const mppValues = [
    () => '',
    () => 'junk',
    () => base64url(rng.hex(48)),
    () => base64url(JSON.stringify(rng.pick(JUNK)(rng))),
    () => base64url('{"challenge":{},"payload":{}}'),
    forgedMpp,
    forgedMpp,
    forgedMpp,
    () => `${forgedMpp()}, Payment ${forgedMpp()}`,
    () => 'x'.repeat(20_000),
  ];
  const x402Values = [
    () => 'not base64!',
    () => base64('not json'),
    () => base64('[]'),
    () => base64('{"x402Version":3}'),
    () => base64(JSON.stringify(rng.pick(JUNK)(rng))),
    () => forgedX402(1),
    () => forgedX402(2),
    () => forgedX402(2),
    () => forgedX402(2),
    () => base64('x'.repeat(20_000)),
    () => `${base64('{"x402Version":2}')}=====`,
  ];
  switch (rng.int(5)) {
    case 0:
      return ['authorization', `Payment ${rng.pick(mppValues)()}`, 'Authorization: Payment'];
    case 1:
      return ['authorization', `${rng.pick(['mpp', 'MPP', 'payment'])} ${rng.pick(mppValues)()}`, 'Authorization: mpp/payment'];
    case 2:
      return ['x-payment', rng.pick(x402Values)(), 'X-PAYMENT'];
    case 3:
      return ['payment-signature', rng.pick(x402Values)(), 'PAYMENT-SIGNATURE'];
    default:
      return ['authorization', `Payment ${rng.pick(mppValues)()}`, 'Authorization: Payment'];
  }
}

const challengeCache = new Map<string, Record<string, unknown>[]>();
/** The parameters of the `Payment` challenges in a WWW-Authenticate header, as a credential carries them. */
function realChallenge(header: string, rng: Rng): Record<string, unknown> | null {
  let parsed = challengeCache.get(header);
  if (!parsed) {
    parsed = [];
    for (const part of header.split(/,\s*(?=Payment\s)/)) {
      const params: Record<string, unknown> = {};
      for (const match of part.matchAll(/(\w+)="([^"]*)"/g)) params[match[1]!] = match[2]!;
      if (Object.keys(params).length > 0) parsed.push(params);
    }
    challengeCache.set(header, parsed);
  }
  return parsed.length > 0 ? rng.pick(parsed) : null;
}

function realAccepts(header: string): unknown[] {
  try {
    const decoded = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { accepts?: unknown[] };
    return decoded.accepts ?? [];
  } catch {
    return [];
  }
}

type Auth = 'owner' | 'employee' | 'admin' | 'mcp' | 'none' | 'junk';

function authHeader(auth: Auth, ctx: FuzzContext, rng: Rng): string | undefined {
  switch (auth) {
    case 'owner':
      return `Bearer ${ctx.tokens.owner}`;
    case 'employee':
      return `Bearer ${ctx.tokens.employee}`;
    case 'admin':
      return `Bearer ${ctx.tokens.admin}`;
    case 'mcp':
      return `Bearer ${ctx.tokens.mcp}`;
    case 'none':
      return undefined;
    case 'junk': {
      const token = ctx.tokens.owner;
      const [header, payload] = token.split('.');
      return rng.pick([
        'Bearer',
        'Bearer ',
        'Bearer x.y.z',
        `Bearer ${token.slice(0, -2)}AA`,
        `Bearer ${header}.${base64url(JSON.stringify({ sub: 'admin', iss: 'someone-else' }))}.${token.split('.')[2]}`,
        `Bearer ${base64url('{"alg":"none","typ":"JWT"}')}.${payload}.`,
        `Bearer ${token} ${token}`,
        `bearer ${token}`,
        `Basic ${base64('user:pass')}`,
        `Bearer ${'A'.repeat(10_000)}`,
        `Bearer ${token}\u00ff`,
        'Bearer null',
        `Token ${token}`,
      ]);
    }
  }
}

/**
 * One malformed request for an operation: a valid skeleton (real ids, a sampled body, a real
 * token), then one primary mutation (body value, missing/extra field, whole-body junk, bad JSON,
 * content type, path param, query, header, method) and overlays (auth variant, payment junk on
 * paid routes, agent proof on agent-signed routes).
 */
export function malformedCase(doc: OpenApiDocument, operation: Operation, rng: Rng, ctx: FuzzContext, options: { paying?: boolean } = {}): FuzzCase {
  const mutations: string[] = [];
  let method = operation.method;
  const headers: Record<string, string> = {};

  // Path: real ids where the tenant has them.
  const pathParams = operation.params.filter((p) => p.in === 'path');
  const pathValues = new Map<string, string>();
  for (const param of pathParams) {
    const kind = pathIdKind(operation.path, param.name);
    pathValues.set(param.name, percentEncode((kind && ctx.idFor(kind)) ?? String(sampleValue(doc, param.schema ?? { type: 'string' }, rng, ctx.fields, param.name))));
  }
  // Query: valid values for required params and some optional ones.
  const queryParams = operation.params.filter((p) => p.in === 'query');
  let query: [string, string][] = [];
  for (const param of queryParams) {
    if (param.required || rng.chance(0.4)) query.push([param.name, String(sampleValue(doc, param.schema ?? { type: 'string' }, rng, ctx.fields, param.name))]);
  }
  // Declared headers: valid identity where it helps reach deeper code.
  for (const param of operation.params.filter((p) => p.in === 'header')) {
    const name = param.name.toLowerCase();
    if (name === 'x-identity-token' && rng.chance(0.6)) headers[name] = rng.chance(0.5) ? ctx.tokens.owner : ctx.tokens.employee;
    else if (name === 'x-agent-key' && !headers['x-identity-token'] && rng.chance(0.3)) headers[name] = ctx.agentKey;
  }

  // Body: a valid sample to start from.
  const isGet = method === 'GET' || method === 'HEAD';
  const rpcBody = operation.path.startsWith('/api/dev/rpc/');
  let bodyValue: unknown = operation.body ? sampleValue(doc, operation.body, rng, ctx.fields) : rpcBody ? jsonRpcJunk(rng, doc) : undefined;
  let bodyText: string | Uint8Array | undefined;
  let contentType: string | undefined = operation.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';

  const choices: [string, number][] = [];
  if (!isGet) {
    if (operation.body || rpcBody) choices.push(['body-value', 30], ['body-drop', 10], ['body-extra', 8], ['body-whole', 8], ['body-json', 12], ['content-type', 6], ['body-huge', 3]);
    else choices.push(['body-unexpected', 15]);
  }
  if (pathParams.length > 0) choices.push(['path', 25]);
  if (queryParams.length > 0) choices.push(['query', 15]);
  else choices.push(['query-unexpected', 4]);
  if (operation.params.some((p) => p.in === 'header')) choices.push(['header', 12]);
  choices.push(['headers-odd', 4], ['method', 3]);
  let roll = rng.next() * choices.reduce((sum, [, w]) => sum + w, 0);
  const primary = choices.find(([, w]) => (roll -= w) < 0)?.[0] ?? choices[0]![0];

  switch (primary) {
    case 'body-value': {
      const places = pathsOf(bodyValue);
      const target = places.length > 0 && rng.chance(0.85) ? rng.pick(places) : [];
      const schema = target.length === 0 ? operation.body : schemaAt(doc, operation.body, target);
      bodyValue = setAt(bodyValue, target, junkFor(doc, schema, rng));
      mutations.push(`body ${target.join('.') || '(root)'} = junk`);
      break;
    }
    case 'body-drop': {
      const required = operation.body ? requiredPaths(doc, operation.body, bodyValue) : [];
      const places = required.length > 0 ? required : pathsOf(bodyValue);
      if (places.length > 0) {
        const target = rng.pick(places);
        bodyValue = deleteAt(bodyValue, target);
        mutations.push(`body without ${target.join('.')}`);
      } else {
        bodyValue = undefined;
        mutations.push('no body');
      }
      break;
    }
    case 'body-extra': {
      const key = rng.pick(['extra', 'id', 'employer_id', 'isAdmin', 'role', 'status', 'amount', '__proto__', 'constructor', '', ' ', '\u0000', 'é', 'x'.repeat(1000)]);
      const places = pathsOf(bodyValue).filter((p) => {
        let node: unknown = bodyValue;
        for (const step of p) node = (node as Record<string | number, unknown>)[step];
        return node !== null && typeof node === 'object' && !Array.isArray(node);
      });
      const at = places.length > 0 && rng.chance(0.3) ? rng.pick(places) : [];
      const extra = junkFor(doc, undefined, rng);
      if (bodyValue && typeof bodyValue === 'object' && !Array.isArray(bodyValue)) {
        bodyValue = setAt(bodyValue, [...at, key], extra);
        // JSON.stringify drops a __proto__ key set by assignment: write it into the text instead.
        if (key === '__proto__') bodyText = JSON.stringify(bodyValue).replace('{', `{"__proto__":${JSON.stringify(extra) ?? 'null'},`);
      } else bodyValue = { [key]: extra };
      mutations.push(`body extra ${[...at, key].join('.').slice(0, 40)}`);
      break;
    }
    case 'body-whole':
      bodyValue = junkFor(doc, operation.body ? { type: 'object' } : undefined, rng);
      mutations.push('body = junk');
      break;
    case 'body-json': {
      const valid = JSON.stringify(bodyValue ?? {});
      bodyText = rng.pick(BAD_JSON)(valid, rng);
      mutations.push('bad JSON text');
      break;
    }
    case 'content-type':
      contentType = rng.pick(CONTENT_TYPES);
      mutations.push(`content-type ${String(contentType).slice(0, 40)}`);
      break;
    case 'body-huge': {
      const places = pathsOf(bodyValue);
      const target = places.length > 0 ? rng.pick(places) : [];
      bodyValue = setAt(bodyValue, target, rng.chance(0.3) ? MEGABYTE : HUNDRED_KB);
      mutations.push(`body ${target.join('.') || '(root)'} = huge string`);
      break;
    }
    case 'body-unexpected':
      bodyValue = rng.chance(0.5) ? junkFor(doc, undefined, rng) : jsonRpcJunk(rng, doc);
      if (rng.chance(0.3)) bodyText = rng.pick(BAD_JSON)('{}', rng);
      mutations.push('body on a route without one');
      break;
    case 'path': {
      const param = rng.pick(pathParams);
      const kind = pathIdKind(operation.path, param.name);
      // Sometimes a real id of another kind (an employee id where an employer id goes).
      const otherId = rng.chance(0.15) ? ctx.idFor(rng.pick<IdKind>(['employer', 'employee', 'payrollRun', 'authorization', 'escrow'])) : undefined;
      const junk = otherId && otherId !== (kind && ctx.idFor(kind)) ? otherId : rng.pick(PATH_JUNK)(rng);
      pathValues.set(param.name, junk);
      mutations.push(`path ${param.name} = ${junk.slice(0, 40)}`);
      break;
    }
    case 'query': {
      const param = rng.pick(queryParams);
      const variant = rng.int(6);
      if (variant === 0) query = query.filter(([k]) => k !== param.name);
      else if (variant === 1) query.push([param.name, String(junkFor(doc, undefined, rng))], [param.name, 'second']);
      else if (variant === 2) {
        query = query.filter(([k]) => k !== param.name);
        query.push([param.name, `${RAW_QUERY}${rng.pick(PATH_JUNK)(rng)}`]);
      } else {
        query = query.filter(([k]) => k !== param.name);
        const junk = junkFor(doc, param.schema, rng);
        query.push([param.name, typeof junk === 'string' ? junk : JSON.stringify(junk) ?? '']);
      }
      mutations.push(`query ${param.name} ${variant === 0 ? 'missing' : 'junk'}`);
      break;
    }
    case 'query-unexpected':
      query.push([rng.pick(['page', 'limit', 'id', 'x', '__proto__', '']), String(junkFor(doc, undefined, rng)).slice(0, 2000)]);
      mutations.push('unexpected query');
      break;
    case 'header': {
      const param = rng.pick(operation.params.filter((p) => p.in === 'header'));
      headers[param.name.toLowerCase()] = rng.pick(HEADER_JUNK)(rng);
      mutations.push(`header ${param.name} = junk`);
      break;
    }
    case 'headers-odd': {
      const name = rng.pick(['idempotency-key', 'accept', 'x-request-id', 'origin', 'x-forwarded-for', 'accept-encoding', 'x-agent-identifier', 'mcp-protocol-version', 'mcp-session-id']);
      headers[name] = rng.pick(HEADER_JUNK)(rng);
      mutations.push(`header ${name} = junk`);
      break;
    }
    case 'method': {
      method = rng.pick(['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'POST', 'GET'].filter((m) => m !== operation.method));
      mutations.push(`method ${method}`);
      break;
    }
  }

  // Auth overlay: mostly a real owner (the request then reaches validation behind auth).
  const adminRoute = operation.path.startsWith('/api/admin');
  const mcpRoute = operation.security.includes('mcpOAuth');
  let auth: Auth;
  const r = rng.next();
  // The employee's own routes get the employee as the usual caller (the owner reaches few of them).
  const employeeRoute = /^\/api\/(employees\/\{id\}|portal\/)/.test(operation.path);
  if (employeeRoute && r < 0.45) auth = 'employee';
  else if (r < 0.7) auth = adminRoute ? 'admin' : mcpRoute ? 'mcp' : 'owner';
  else if (r < 0.78) auth = 'employee';
  else if (r < 0.86) auth = 'none';
  else if (r < 0.92) auth = adminRoute ? 'owner' : 'admin';
  else auth = 'junk';
  // A paying client puts its credential in Authorization: identity then travels in X-Identity-Token alone.
  const authorization = options.paying ? undefined : authHeader(auth, ctx, rng);
  if (authorization) headers.authorization = authorization;
  if (!options.paying && auth !== 'owner' && auth !== 'admin' && auth !== 'mcp') mutations.push(`auth ${auth}`);
  if (mcpRoute && rng.chance(0.8)) headers.accept = 'application/json, text/event-stream';

  // Paid routes: a third carry a junk or forged payment proof (it replaces the bearer, as on the wire).
  if (operation.paid && !options.paying && rng.chance(0.35)) {
    const [name, value, label] = paymentJunk(rng, ctx.offers.get(`${operation.method} ${operation.path}`));
    headers[name] = value;
    mutations.push(`payment ${label}`);
  }
  const agentProof = operation.agentSigned && rng.chance(0.3);
  if (agentProof) mutations.push('agent proof');

  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValues.get(name) ?? 'x');
  if (method === 'GET' || method === 'HEAD') {
    bodyText = undefined;
    bodyValue = undefined;
  }
  let body: string | Uint8Array | undefined = bodyText;
  if (body === undefined && bodyValue !== undefined) {
    if (operation.bodyType === 'form' && bodyValue && typeof bodyValue === 'object' && !Array.isArray(bodyValue) && rng.chance(0.7)) {
      body = new URLSearchParams(Object.entries(bodyValue).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')])).toString();
    } else body = JSON.stringify(bodyValue);
  }
  if (body !== undefined && contentType !== undefined) headers['content-type'] = contentType;
  let url = `${path}${encodeQuery(query)}`;
  if (options.paying) {
    // Over a socket, Node's parser answers 431 past 16 KB of request line and headers (the paying
    // client adds a credential of a few KB): keep paid requests under it so they reach the app.
    url = url.slice(0, 4096);
    for (const [name, value] of Object.entries(headers)) headers[name] = value.slice(0, 4096);
  }
  return { method, url, headers, ...(body === undefined ? {} : { body }), mutation: mutations.join('; '), agentProof };
}
