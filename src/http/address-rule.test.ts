import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS, requestInit, startTestApp, type TestApp } from '../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../test/support/http.js';
import { railA, railASession, x402, type PayingFetch } from '../../test/support/pay.js';
import { EVM_ADDRESS_PATTERN } from '../chains/evm/address.js';

/**
 * The EVM address rule (#33) on every route that takes an address: the sweep reads the OpenAPI
 * document, so a new route or field is covered without being listed here. A field is an address by
 * the pattern `evmAddressSchema` publishes or by an address as its example (allowlist entries, which
 * may also be Solana keys); agent identifiers (X-Agent-Identifier, `agent_identifier`, or an
 * `erc8004:` example) may be addresses and are swept too. Routes behind a bearer token get the platform admin's (who may call
 * every internal route), paid routes are paid (rail A, else B; a per-tick route through an MPP
 * session): both run before validation.
 */
const GOOD = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const BAD_CHECKSUM = '0x5fbDB2315678afecb367f032d93F642f64180aa3'; // GOOD with one letter's case flipped

interface Schema {
  $ref?: string;
  pattern?: string;
  example?: unknown;
  format?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  'x-payment'?: Payment;
}
interface Payment {
  rails: string[];
  unit: string;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
/** One request of the sweep: the address field `field` (as a 400 names it) carries a bad checksum. */
interface Probe {
  operation: string;
  field: string;
  path: string;
  init: RequestInit;
  payment: Payment | null;
}

let t: TestApp;
let server: LoopbackServer;
let document: OpenApiDocument;
let adminToken: string;
const payers: Record<string, PayingFetch> = {};

beforeAll(async () => {
  t = await startTestApp(NO_RATE_LIMITS, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  document = (await (await t.request('GET', '/api/openapi.json')).json()) as OpenApiDocument;
  adminToken = await t.token('demo-admin', 'admin@address-rule.example');
  payers.A = (await railA(t, server.url, '20')).pay;
  payers.B = (await x402(t, server.url, 'B', '20')).pay;
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

const isAddressField = (name: string, schema: Schema) =>
  schema.pattern === EVM_ADDRESS_PATTERN.source ||
  (typeof schema.example === 'string' && (EVM_ADDRESS_PATTERN.test(schema.example) || schema.example.startsWith('erc8004:'))) ||
  /agent[-_]identifier$/.test(name);

const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(document.components.schemas[schema.$ref.split('/').pop()!]!) : schema);

/** The dotted paths of a body's address fields (a list by its first item, as zod names it). */
function addressPaths(schema: Schema, name = '', prefix: string[] = []): string[][] {
  const resolved = resolve(schema);
  if (resolved.items) return addressPaths(resolved.items, name, [...prefix, '0']);
  if (resolved.properties) return Object.entries(resolved.properties).flatMap(([key, value]) => addressPaths(value, key, [...prefix, key]));
  return prefix.length > 0 && isAddressField(name, resolved) ? [prefix] : [];
}

function setPath(target: Record<string, unknown>, [head, ...rest]: string[], value: string): void {
  if (rest.length === 0) {
    target[head!] = value;
    return;
  }
  target[head!] ??= rest[0] === '0' ? [] : {};
  setPath(target[head!] as Record<string, unknown>, rest, value);
}

/** A body with every address field valid but the one probed (none: null). */
function bodyProbing(paths: string[][], probed: string | null): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const path of paths) setPath(body, path, path.join('.') === probed ? BAD_CHECKSUM : GOOD);
  return body;
}

/** A value validation accepts for a parameter that is not probed. */
const plainValue = (schema: Schema): string => {
  const resolved = resolve(schema);
  if (resolved.format === 'uuid') return randomUUID();
  return String(resolved.example ?? resolved.enum?.[0] ?? 'x');
};

function probesOf(path: string, method: string, op: Operation): Probe[] {
  const parameters = op.parameters ?? [];
  const addressParams = parameters.filter((p) => isAddressField(p.name, resolve(p.schema)));
  const bodySchema = op.requestBody?.content['application/json']?.schema;
  const bodyPaths = bodySchema ? addressPaths(bodySchema) : [];
  const request = (probed: Parameter | null, body: Record<string, unknown> | undefined) => {
    let url = path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const p of parameters) {
      const value = p === probed ? BAD_CHECKSUM : isAddressField(p.name, resolve(p.schema)) ? GOOD : plainValue(p.schema);
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(value));
      else if (p.in === 'query' && (p.required || p === probed)) query.set(p.name, value);
      else if (p.in === 'header' && p === probed) headers[p.name] = value;
    }
    const search = query.size > 0 ? `?${query}` : '';
    const init = requestInit(method.toUpperCase(), { headers, ...(op['x-payment'] ? {} : { token: adminToken }), ...(body && { body }) });
    return { operation: `${method.toUpperCase()} ${path}`, path: url + search, init, payment: op['x-payment'] ?? null };
  };
  const validBody = bodySchema ? bodyProbing(bodyPaths, null) : undefined;
  return [
    // zod sees header names in lower case.
    ...addressParams.map((p) => ({ ...request(p, validBody), field: p.in === 'header' ? p.name.toLowerCase() : p.name })),
    ...bodyPaths.map((path) => path.join('.')).map((field) => ({ ...request(null, bodyProbing(bodyPaths, field)), field })),
  ];
}

function allProbes(): Probe[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, op]) => (typeof op === 'object' && op !== null && 'responses' in op ? probesOf(path, method, op) : [])),
  );
}

interface Answer {
  status: number;
  body: { code?: string; issues?: { field: string; message: string }[] };
}

const answerOf = async (response: Response): Promise<Answer> => ({ status: response.status, body: (await response.json().catch(() => ({}))) as Answer['body'] });

async function send(probe: Probe): Promise<Answer> {
  if (probe.payment === null) return answerOf(await t.app.request(probe.path, probe.init));
  if (probe.payment.unit === 'tick') {
    const session = await railASession(t, server.url);
    const answer = await answerOf(await session.fetch(`${server.url}${probe.path}`, probe.init));
    await session.close();
    return answer;
  }
  const pay = payers[probe.payment.rails.includes('A') ? 'A' : 'B']!;
  const headers = probe.init.headers as Record<string, string>;
  return answerOf(await pay(probe.path, { method: probe.init.method!, headers, ...(probe.init.body !== undefined && { body: probe.init.body as string }) }));
}

describe('the EVM address rule on every route (#33)', () => {
  it('finds the address fields of the document, the reported agent/pay recipient among them', () => {
    const fields = allProbes().map((p) => `${p.operation} ${p.field}`);
    expect(fields).toEqual(
      expect.arrayContaining([
        'POST /api/mpp/agent/pay recipient_wallet',
        'POST /api/mpp/agent/pay x-agent-identifier',
        'POST /api/employers/{employer_id}/agents/authorizations allowed_recipients.0',
      ]),
    );
  });

  it('refuses a mixed-case address with a wrong checksum with 400 naming the field, wherever it is taken', async () => {
    const refusedWrongly: unknown[] = [];
    for (const probe of allProbes()) {
      const { status, body } = await send(probe);
      const named = body.issues?.find((issue) => issue.field === probe.field);
      if (status !== 400 || body.code !== 'VALIDATION_ERROR' || !named?.message.includes('EIP-55')) {
        refusedWrongly.push({ operation: probe.operation, field: probe.field, status, body });
      }
    }
    expect(refusedWrongly).toEqual([]);
  });
});
