import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.js';
import { stripeApiClient, stripeCardRail, type StripeOptions } from './stripe.js';

/**
 * The live card adapter against a local server that answers like Stripe's API for the two
 * endpoints we call (POST /v1/payment_intents, POST /v1/refunds): idempotency keys replay the
 * first answer (`idempotent-replayed: true`), a second refund of a charge is refused with
 * `charge_already_refunded`, and each test scripts how the next attempts misbehave.
 */
const SECRET = 'sk_test_never_in_an_error_0123456789';
const TIMEOUT_MS = 300;

type Misbehaviour = 'slow' | 'reset' | 400 | 429 | 500;
let script: Misbehaviour[] = [];
/** Every request the server saw: path, idempotency key, form body, headers. */
let seen: { path: string; key: string | undefined; form: URLSearchParams; headers: IncomingMessage['headers'] }[] = [];
/** Stripe's idempotency store and its refunds (payment intent -> refund id). */
const replies = new Map<string, { status: number; body: string }>();
const refunds = new Map<string, string>();
/** The payment intent of every refund Stripe made (one entry per refund, duplicates included). */
const refunded: string[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((request, response) => void answer(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);
beforeEach(() => {
  script = [];
  seen = [];
});

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  const key = request.headers['idempotency-key'] as string | undefined;
  seen.push({ path: request.url!, key, form: new URLSearchParams(text), headers: request.headers });
  const misbehaviour = script.shift();
  if (misbehaviour === 'reset') return void request.socket.destroy();
  if (typeof misbehaviour === 'number') return send(response, misbehaviour, { error: { type: 'api_error', message: `scripted ${misbehaviour}` } });
  // Stripe does the work; this answer arrives after the client gave up.
  if (misbehaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
  if (request.headers.authorization !== `Basic ${Buffer.from(`${SECRET}:`).toString('base64')}`) return send(response, 401, { error: { message: 'bad key' } });
  const earlier = key ? replies.get(key) : undefined;
  if (earlier) return send(response, earlier.status, JSON.parse(earlier.body), { 'idempotent-replayed': 'true' });
  const [status, body] = perform(request.url!, new URLSearchParams(text));
  if (key) replies.set(key, { status, body: JSON.stringify(body) });
  send(response, status, body);
}

function perform(path: string, form: URLSearchParams): [number, object] {
  if (path === '/v1/payment_intents') return [200, { id: `pi_${seen.length}_${form.get('amount')}`, object: 'payment_intent', status: 'succeeded' }];
  const paymentIntent = form.get('payment_intent')!;
  if (refunds.has(paymentIntent)) return [400, { error: { type: 'invalid_request_error', code: 'charge_already_refunded', message: 'Charge has already been refunded.' } }];
  const id = `re_${refunds.size + 1}`;
  refunds.set(paymentIntent, id);
  refunded.push(paymentIntent);
  return [200, { id, object: 'refund', status: 'succeeded', payment_intent: paymentIntent }];
}

function send(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

const options = (): StripeOptions => ({ secretKey: SECRET, networkId: 'internal', timeoutMs: TIMEOUT_MS, maxAttempts: 3, apiBaseUrl: baseUrl, backoffMs: 10 });
const refund = (paymentIntent: string) => stripeCardRail(options()).refund(paymentIntent);
const keys = () => [...new Set(seen.map((request) => request.key))];

describe('card refunds', () => {
  it('send an idempotency key derived from the charge', async () => {
    await refund('pi_plain');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.key).toBe('refund_pi_plain');
    expect(refunds.get('pi_plain')).toBeDefined();
  });

  it('retry a slow answer after the timeout with the same key, and refund once', async () => {
    script = ['slow'];
    const started = Date.now();
    await refund('pi_slow');
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 2);
    expect(seen).toHaveLength(2);
    expect(keys()).toEqual(['refund_pi_slow']);
    // The first attempt did refund (Stripe finished it); the retry replayed it.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
    expect(refunded.filter((pi) => pi === 'pi_slow')).toHaveLength(1);
  });

  it('retry a 500, a 429 and a dropped connection with the same key', async () => {
    script = [500, 429, 'reset'];
    await expect(refund('pi_flaky')).rejects.toThrow(/pi_flaky.*3 attempts/);
    expect(seen).toHaveLength(3);
    script = [500];
    await refund('pi_flaky');
    expect(keys()).toEqual(['refund_pi_flaky']);
    expect(refunded.filter((pi) => pi === 'pi_flaky')).toHaveLength(1);
  });

  it('do not retry a 400, and never quote the secret key', async () => {
    script = [400];
    const failure = await refund('pi_bad').then(
      () => null,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/400/);
    expect(failure?.message).not.toContain(SECRET);
    expect(seen).toHaveLength(1);
  });

  it('take a charge Stripe already refunded as refunded', async () => {
    await refund('pi_twice');
    replies.clear(); // the idempotency key expired (Stripe keeps them 24 hours)
    await expect(refund('pi_twice')).resolves.toBeUndefined();
  });

  it('stop within the attempts and their timeouts when Stripe never answers', async () => {
    script = ['slow', 'slow', 'slow'];
    const started = Date.now();
    await expect(refund('pi_hung')).rejects.toThrow(/timed out|aborted/i);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 3 + 500);
    expect(keys()).toEqual(['refund_pi_hung']);
  });
});

describe('card charges (the client mppx calls)', () => {
  const create = (key: string) =>
    stripeApiClient(options()).paymentIntents.create(
      {
        amount: 100,
        currency: 'usd',
        confirm: true,
        automatic_payment_methods: { allow_redirects: 'never', enabled: true },
        metadata: { route: 'POST /x' },
        shared_payment_granted_token: 'spt_test',
      },
      { idempotencyKey: key, apiVersion: '2026-01-01.preview' },
    );

  it("send mppx's parameters form-encoded with its idempotency key and API version", async () => {
    const intent = await create('mpp_a');
    expect(intent).toMatchObject({ status: 'succeeded', lastResponse: { headers: {} } });
    const [request] = seen;
    expect(request!.key).toBe('mpp_a');
    expect(request!.headers['stripe-version']).toBe('2026-01-01.preview');
    expect(Object.fromEntries(request!.form)).toEqual({
      amount: '100',
      currency: 'usd',
      confirm: 'true',
      'automatic_payment_methods[allow_redirects]': 'never',
      'automatic_payment_methods[enabled]': 'true',
      'metadata[route]': 'POST /x',
      shared_payment_granted_token: 'spt_test',
    });
  });

  it('retry a timed-out charge with the same key, and report the charge as new (not a replay)', async () => {
    script = ['slow'];
    const intent = await create('mpp_slow');
    expect(keys()).toEqual(['mpp_slow']);
    expect(intent.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    // A later call with the same key (the credential presented again) is a replay.
    const again = await create('mpp_slow');
    expect(again.id).toBe(intent.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it("carry mppx's stripe method through a lost first answer, and still refuse a credential presented again", async () => {
    const method = stripeCardRail(options()).method as unknown as { verify(input: object): Promise<{ reference: string }> };
    const input = {
      credential: { challenge: { id: 'ch_lost', expires: new Date(Date.now() + 60_000).toISOString() }, payload: { spt: 'spt_lost' } },
      request: { amount: '1.50', currency: 'usd', decimals: 2, networkId: 'internal', paymentMethodTypes: ['card'] },
    };
    script = ['slow'];
    const receipt = await method.verify(input);
    expect(receipt.reference).toMatch(/^pi_/);
    expect(keys()).toEqual(['mpp_ch_lost_spt_lost']);
    expect(seen[0]!.form.get('amount')).toBe('150');
    await expect(method.verify(input)).rejects.toThrow(/already been processed/);
  });

  it("throw Stripe's message on a refusal, without retrying it", async () => {
    script = [400];
    await expect(create('mpp_refused')).rejects.toThrow(/scripted 400/);
    expect(seen).toHaveLength(1);
  });
});

describe('STRIPE_TIMEOUT_MS and STRIPE_MAX_ATTEMPTS', () => {
  it('default to 10 s and 3 attempts, and refuse what cannot work', () => {
    expect(loadConfig({ STRIPE_SECRET_KEY: SECRET }).live.stripe).toMatchObject({ timeoutMs: 10_000, maxAttempts: 3 });
    expect(loadConfig({ STRIPE_SECRET_KEY: SECRET, STRIPE_TIMEOUT_MS: '2500', STRIPE_MAX_ATTEMPTS: '1' }).live.stripe).toMatchObject({ timeoutMs: 2500, maxAttempts: 1 });
    for (const env of [{ STRIPE_TIMEOUT_MS: '0' }, { STRIPE_MAX_ATTEMPTS: '0' }, { STRIPE_MAX_ATTEMPTS: 'many' }]) {
      expect(() => loadConfig({ STRIPE_SECRET_KEY: SECRET, ...env })).toThrow(ConfigError);
    }
  });
});
