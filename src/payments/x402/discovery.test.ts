import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import type { Network, PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { extractDiscoveryInfo, validateDiscoveryExtension, validateDiscoveryExtensionSpec, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { PAID, PRICE_TABLE, type PaidRoute } from '../prices.js';
import { exampleOf, operationSchemas, patternExample } from './discovery.js';

/**
 * Issue 30: every paid route's x402 402 carries x402's discovery metadata (the `bazaar` extension),
 * its schemas the OpenAPI document's for the route, valid by @x402/extensions' own checks, and a
 * stock client still pays with it echoed back.
 */
let t: TestApp;
let server: LoopbackServer;
let document: object;
const X402_ROUTES = PRICE_TABLE.filter((route) => route.rails.includes('B') || route.rails.includes('C'));
const ID = '00000000-0000-4000-8000-000000000000';
/** Headers above this (Node's and undici's default limit for all of a message's headers) are refused. */
const NODE_HEADER_LIMIT = 16 * 1024;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  document = (await (await t.request('GET', '/api/openapi.json')).json()) as object;
});

afterAll(async () => {
  await server.close();
  await t.close();
});

/** The route's 402, unpaid (before any validation: an empty body is enough). */
async function unpaid(route: PaidRoute): Promise<Response> {
  const url = `${server.url}${route.path.replaceAll(/\{\w+\}/g, ID)}`;
  return fetch(url, route.method === 'POST' ? { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } } : {});
}

async function paymentRequired(route: PaidRoute): Promise<{ required: PaymentRequired; header: string; headerBytes: number }> {
  const response = await unpaid(route);
  expect(response.status).toBe(402);
  const header = response.headers.get('PAYMENT-REQUIRED')!;
  let headerBytes = 0;
  response.headers.forEach((value, name) => (headerBytes += name.length + value.length + 4));
  return { required: decodePaymentRequiredHeader(header), header, headerBytes };
}

const bazaarOf = (required: PaymentRequired) => required.extensions?.bazaar as DiscoveryExtension & { routeTemplate?: string };

describe('the discovery extension of every paid x402 route', () => {
  it('covers the routes offering rails B or C', () => {
    expect(X402_ROUTES.length).toBeGreaterThan(5);
  });

  it.each(X402_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))('%s: the OpenAPI schemas, valid', async (_, route) => {
    const { required, headerBytes } = await paymentRequired(route);
    const bazaar = bazaarOf(required);
    expect(required.resource.description).toBe(route.summary);

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {}); // Ajv on OpenAPI formats it does not know
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    warn.mockRestore();
    expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>)).toEqual({ valid: true });

    const schemas = operationSchemas(document, route.method, route.path);
    const input = bazaar.schema.properties.input.properties as Record<string, unknown>;
    expect(bazaar.info.input).toMatchObject({ type: 'http', method: route.method });
    expect(input.method).toEqual({ type: 'string', enum: [route.method] });
    if (route.method === 'POST') {
      expect(schemas.body).toBeDefined();
      expect(input.body).toEqual(schemas.body);
      expect(bazaar.info.input).toMatchObject({ bodyType: 'json', body: exampleOf(schemas.body!) });
    } else {
      expect(input.queryParams).toEqual({ type: 'object', ...(schemas.query ?? { properties: {} }) });
    }
    expect(schemas.output).toBeDefined();
    const output = bazaar.schema.properties.output!.properties as Record<string, unknown>;
    expect(output.example).toEqual({ type: 'object', ...schemas.output });
    expect(bazaar.info.output).toEqual({ type: 'json', example: exampleOf(schemas.output!) });
    if (schemas.path) {
      expect(input.pathParams).toEqual({ type: 'object', ...schemas.path });
      expect(bazaar.routeTemplate).toBe(route.path.replaceAll(/\{(\w+)\}/g, ':$1'));
    } else {
      expect(bazaar.routeTemplate).toBeUndefined();
    }
    // The largest route's 402 is about 7 KB of headers.
    expect(headerBytes).toBeLessThan(NODE_HEADER_LIMIT / 2);
  });

  it('is one object per route: every 402 of a route carries the same extension', async () => {
    const escrow = PAID.escrowStatus;
    const first = await paymentRequired(escrow);
    const second = await paymentRequired(escrow);
    expect(second.header).toBe(first.header);
    // Another id: another resource, the same route's metadata.
    const other = await fetch(`${server.url}${escrow.path.replace('{id}', '11111111-1111-4111-8111-111111111111')}`);
    const otherRequired = decodePaymentRequiredHeader(other.headers.get('PAYMENT-REQUIRED')!);
    expect(otherRequired.resource.url).not.toBe(first.required.resource.url);
    expect(otherRequired.extensions).toEqual(first.required.extensions);
  });

  it('is absent from routes without rails B and C (the MPP challenge has no such field)', async () => {
    const response = await unpaid(PAID.payslip);
    expect(response.status).toBe(402);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
  });
});

describe('paying a route with discovery metadata', () => {
  it('a stock @x402/fetch client pays, echoing the extension a facilitator catalogues', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const faucet = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:8453', address: payer.address, amount: '5' } });
    expect(faucet.status).toBe(200);
    const chains = t.embeddedChains!;
    const client = new x402Client()
      .setSpendControls({ allowedAssets: [{ network: 'eip155:8453' as Network, asset: chains.base.contracts.stablecoin!, maxAmountPerPayment: '1000000' }] })
      .register('eip155:8453', new ExactEvmScheme(payer));
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      // The client's Request may come from another copy of undici than the global one: no instanceof.
      const signature = (typeof input === 'object' && 'headers' in input ? input.headers : new Headers(init?.headers)).get('PAYMENT-SIGNATURE');
      if (signature) sent.push(signature);
      return fetch(input, init);
    };
    const memo = `0x${'00'.repeat(32)}`;
    const response = await wrapFetchWithPayment(recording, client)(`${server.url}${PAID.memoDecode.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ memo }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ memo, fields: null });
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeTruthy();

    expect(sent).toHaveLength(1);
    const payload = decodePaymentSignatureHeader(sent[0]!) as PaymentPayload;
    const { required } = await paymentRequired(PAID.memoDecode);
    expect(payload.extensions).toEqual(required.extensions);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const discovered = extractDiscoveryInfo(payload, payload.accepted);
    warn.mockRestore();
    expect(discovered).toMatchObject({
      resourceUrl: `${new URL(required.resource.url).origin}${PAID.memoDecode.path}`,
      description: PAID.memoDecode.summary,
      method: 'POST',
      discoveryInfo: { input: { type: 'http', method: 'POST', bodyType: 'json' } },
    });
  });
});

describe('examples from schemas', () => {
  it('match simple patterns at their shortest', () => {
    for (const pattern of ['^0x[0-9a-fA-F]{64}$', '^(0|[1-9]\\d{0,14})(\\.\\d{1,6})?$', '^[\\x21-\\x7e]{1,200}$', '^[a-z0-9][a-z0-9-]{0,39}$', '^(?:ab|c)+x?$']) {
      expect(patternExample(pattern)).toMatch(new RegExp(pattern));
    }
  });

  it('prefer the schema\'s own example, then the first non-null enum value; only required properties', () => {
    expect(exampleOf({ type: 'string', example: 'given' })).toBe('given');
    expect(exampleOf({ type: 'string', nullable: true, enum: [null, 'a'] })).toBe('a');
    expect(exampleOf({ type: 'object', properties: { a: { type: 'integer', minimum: 3 }, b: { type: 'string' } }, required: ['a'] })).toEqual({ a: 3 });
    expect(exampleOf({ type: 'string', format: 'uuid' })).toBe(ID);
    expect(exampleOf({ type: 'string', minLength: 8, maxLength: 10 })).toHaveLength(8);
  });

  it('refuse a pattern they cannot satisfy rather than guess', () => {
    expect(() => patternExample('^[^a]$')).toThrow(/negated/);
  });
});
