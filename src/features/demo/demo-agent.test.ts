import { OpenAPIHono } from '@hono/zod-openapi';
import { inArray } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { payments } from '../../payments/tables.js';
import type { AppEnv } from '../../http/context.js';
import { RateLimits } from '../../http/rate-limits.js';
import { createLogger } from '../../log.js';
import { formatUsd } from '../../money.js';
import { findPaidRoute } from '../../payments/prices.js';
import { Faucet } from '../dev/faucet.js';
import { runTour, type DemoEvent } from './agent.js';
import { demoAgentRoutes } from './routes.js';
import { DemoAgentService } from './service.js';
import { DatabaseSpendBudget, UNCAPPED } from './spend-budget.js';
import { readSseEvents } from '../../../test/support/sse.js';

/**
 * The demo agent end to end: it pays the app's own paid routes through the real payment gate
 * (mppx on rail A, @x402/fetch on B and C) and the stream narrates it. Each test calls from its own
 * client address (the Node server's socket address, given as the app's env) so limits do not mix.
 */
let t: TestApp;

const PATH = '/api/demo/run-agent';
const TOUR = [
  { rail: 'A', route: 'GET /api/mpp/treasury/yield-rates' },
  { rail: 'B', route: 'POST /api/mpp/memo/decode' },
  { rail: 'C', route: 'POST /api/mpp/compliance/check' },
] as const;
const price = (route: string) => {
  const [method, path] = route.split(' ');
  return findPaidRoute(method!, path!)!.price;
};
const TOUR_PRICE = TOUR.reduce((sum, call) => sum + price(call.route), 0n);

interface Step extends DemoEvent {
  step: number;
}
interface Done {
  steps: number;
  spent_usd: string;
  calls: number;
}
type SseEvent = { event: 'step'; data: Step } | { event: 'done'; data: Done };

/** What @hono/node-server hands the app: the socket getConnInfo reads the client address from. */
const fromAddress = (address: string) => ({ incoming: { socket: { remoteAddress: address, remotePort: 40000, remoteFamily: 'IPv4' } } });

function runAgent(address: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(t.app.request(PATH, { method: 'POST', ...init }, fromAddress(address)));
}

/** Reads SSE events until the stream ends or `stop` says so (then cancels the body). */
async function readEvents(response: Response, stop: (event: SseEvent) => boolean = () => false): Promise<SseEvent[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events = (await readSseEvents(reader, (event) => stop(event as SseEvent))) as SseEvent[];
  await reader.cancel();
  return events;
}

const steps = (events: SseEvent[]) => events.flatMap((e) => (e.event === 'step' ? [e.data] : []));
const payerAddresses = (events: SseEvent[]) => {
  const wallet = steps(events).find((s) => s.kind === 'info' && (s.data as { evm?: string } | undefined)?.evm);
  const { evm, solana } = wallet!.data as { evm: string; solana: string };
  return [evm.toLowerCase(), solana];
};
/** The server's payment rows (any status) paid by these addresses. */
const paymentsOf = async (payers: string[]) =>
  (await t.database.db.select().from(payments)).filter((p) => p.payer !== null && (payers.includes(p.payer) || payers.includes(p.payer.toLowerCase())));

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  // As app.ts does in local mode (unless it already has).
  if (!t.app.routes.some((r) => r.path === PATH)) {
    t.app.route('/', demoAgentRoutes({ demo: new DemoAgentService({ mode: 'local', faucet: new Faucet({ chains: t.embeddedChains! }), chains: t.chains!, liveWallet: null, database: t.database }), rateLimits: new RateLimits(t.database), appFetch: (request) => t.app.fetch(request) }));
  }
});
afterAll(() => t?.close());

describe('POST /api/demo/run-agent (local mode)', () => {
  it('streams the tour: a 402, then three calls paid on rails A, B and C and settled by the server', async () => {
    const response = await runAgent('192.0.2.1', { body: JSON.stringify({ scenario: 'tour' }), headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const events = await readEvents(response);

    // Numbered steps in order, then one done event that counts them.
    const all = steps(events);
    expect(events.at(-1)!.event).toBe('done');
    expect(events.slice(0, -1).every((e) => e.event === 'step')).toBe(true);
    expect(all.map((s) => s.step)).toEqual(all.map((_, i) => i + 1));
    expect(all.filter((s) => s.kind === 'error'), JSON.stringify(all, null, 1)).toEqual([]);

    // Funding: one faucet credit per network, each with its transaction.
    const funded = all.filter((s) => s.kind === 'info' && s.reference);
    expect(funded.map((s) => (s.data as { network: string }).network)).toEqual([t.chains!.tempo.network, t.chains!.base.network, t.chains!.solana.network]);

    // The unpaid call: 402 with its price and all three rails' offers.
    const probe = all.findIndex((s) => s.kind === 'request' && s.status === 402);
    expect(all[probe]).toMatchObject({ route: TOUR[0].route, amount_usd: formatUsd(price(TOUR[0].route)), data: { rails: ['A', 'B', 'C'] } });
    expect((all[probe]!.data as { offers: { rail: string }[] }).offers.map((o) => o.rail).sort()).toEqual(['A', 'B', 'C']);

    // Each paid call: the offer approved at the 402's price, then the 200 with its settlement reference.
    const paid = all.filter((s) => s.kind === 'payment');
    const results = all.filter((s) => s.kind === 'result');
    expect(paid.map((s) => [s.rail, s.route, s.amount_usd])).toEqual(TOUR.map((c) => [c.rail, c.route, formatUsd(price(c.route))]));
    expect(results.map((s) => [s.rail, s.route, s.status, s.amount_usd])).toEqual(TOUR.map((c) => [c.rail, c.route, 200, formatUsd(price(c.route))]));
    expect(paid.every((p) => p.step > all[probe]!.step)).toBe(true);
    for (const [i, result] of results.entries()) {
      expect(result.step).toBeGreaterThan(paid[i]!.step);
      expect(result.reference).toMatch(/\S{20,}/);
    }
    expect((results[1]!.data as { fields: { type: string } }).fields.type).toBe('salary');
    expect((results[2]!.data as { result: string }).result).toBe('CLEAR');

    expect(events.at(-1)!.data).toEqual({ steps: all.length, spent_usd: formatUsd(TOUR_PRICE), calls: 3 });

    // The server's records: exactly these three payments, settled, at the table's prices.
    const rows = await t.database.db.select().from(payments).where(inArray(payments.reference, results.map((r) => r.reference!)));
    expect(rows.map((r) => [r.rail, r.route, r.status, r.amount]).sort()).toEqual(
      TOUR.map((c) => [c.rail, c.route, 'served', price(c.route)]).sort(),
    );
    expect((await paymentsOf(payerAddresses(events))).map((p) => p.status)).toEqual(['served', 'served', 'served']);
  });

  it('is listed in the OpenAPI document under Demo, not as a paid route', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { tags: string[]; 'x-payment'?: unknown; responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const operation = document.paths[PATH]!.post!;
    expect(operation.tags).toEqual(['Demo']);
    expect(operation['x-payment']).toBeUndefined();
    expect(Object.keys(operation.responses[200]!.content!)).toEqual(['text/event-stream']);
    expect(operation.responses[429]).toBeDefined();
  });

  it('allows 3 runs per address per 10 minutes: the 4th answers 429 with Retry-After, whatever X-Forwarded-For says', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await runAgent('192.0.2.3');
      expect(response.status).toBe(200);
      expect((await readEvents(response)).at(-1)!.event).toBe('done');
    }
    const limited = await runAgent('192.0.2.3');
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ code: 'RATE_LIMITED', error: expect.any(String) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Without trustProxy the header is the client's to write, so it changes nothing.
    const spoofed = await runAgent('192.0.2.3', { headers: { 'X-Forwarded-For': '198.51.100.77' } });
    expect(spoofed.status).toBe(429);
  });

  it('runs one at a time per address', async () => {
    const first = await runAgent('192.0.2.4');
    expect(first.status).toBe(200);
    const second = await runAgent('192.0.2.4');
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await readEvents(first)).at(-1)).toMatchObject({ event: 'done', data: { calls: 3 } });
  });

  it('runs one at a time per address across instances, and counts runs over both', async () => {
    const second = t.anotherInstance();
    const first = await runAgent('192.0.2.7');
    expect(first.status).toBe(200);
    const elsewhere = await second.request(PATH, { method: 'POST' }, fromAddress('192.0.2.7'));
    expect(elsewhere.status).toBe(429);
    expect(await elsewhere.json()).toMatchObject({ code: 'RATE_LIMITED', error: expect.stringMatching(/still running/) });
    expect((await readEvents(first)).at(-1)).toMatchObject({ event: 'done' });
    // Run 2 of 3 on the other instance; run 3 here; the 4th is refused by the other.
    for (const app of [second, t.app]) {
      const response = await app.request(PATH, { method: 'POST' }, fromAddress('192.0.2.7'));
      expect(response.status).toBe(200);
      await readEvents(response);
    }
    const fourth = await second.request(PATH, { method: 'POST' }, fromAddress('192.0.2.7'));
    expect(fourth.status).toBe(429);
    expect(await fourth.json()).toMatchObject({ code: 'RATE_LIMITED', error: expect.stringMatching(/Too many demo runs/) });
  });

  it('stops paying when the client disconnects', async () => {
    const client = new AbortController();
    const response = await runAgent('192.0.2.5', { signal: client.signal });
    const events = await readEvents(response, (e) => e.event === 'step' && e.data.kind === 'result');
    client.abort();
    const payers = payerAddresses(events);
    // Let a payment already in flight land, then check that none follows.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const atAbort = await paymentsOf(payers);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const later = await paymentsOf(payers);
    expect(later).toHaveLength(atAbort.length);
    expect(atAbort.length).toBeGreaterThanOrEqual(1);
    expect(atAbort.length).toBeLessThan(3);
  });

  it('rejects an unknown scenario with 400 naming the field', async () => {
    const response = await runAgent('192.0.2.6', { body: JSON.stringify({ scenario: 'heist' }), headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'scenario' });
  });
});

describe('time bounds', () => {
  it('abandons a step that takes too long, and pays nothing after it', async () => {
    const events: DemoEvent[] = [];
    const result = await runTour({
      mode: 'local',
      faucet: new Faucet({ chains: t.embeddedChains! }),
      chains: t.chains!,
      liveWallet: null,
      budget: UNCAPPED,
      appFetch: (request) => t.app.fetch(request),
      origin: 'http://localhost',
      signal: AbortSignal.timeout(15_000),
      stepTimeoutMs: 1,
      emit: (event) => events.push(event),
      log: createLogger('silent'),
    });
    expect(result).toEqual({ spent: 0n, calls: 0 });
    expect(events.at(-1)).toMatchObject({ kind: 'error', message: expect.stringMatching(/took longer than/) });
    expect(events.some((e) => e.kind === 'payment')).toBe(false);
  });

  it('ends a run that is out of time with an error step and the done event', async () => {
    const app = new OpenAPIHono<AppEnv>();
    app.use(async (c, next) => {
      c.set('log', createLogger('silent'));
      await next();
    });
    app.route('/', demoAgentRoutes({
      demo: new DemoAgentService({ mode: 'local', faucet: new Faucet({ chains: t.embeddedChains! }), chains: t.chains!, liveWallet: null, database: t.database }),
      limits: { runTimeoutMs: 1 },
      rateLimits: new RateLimits(t.database),
      appFetch: (request) => app.fetch(request),
    }));
    const events = await readEvents(await app.request(PATH, { method: 'POST' }));
    expect(events.at(-2)).toMatchObject({ event: 'step', data: { kind: 'error', message: expect.stringMatching(/run took longer than/) } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { steps: events.length - 1, spent_usd: '0.000000', calls: 0 } });
  });
});

describe('live mode', () => {
  it('without a wallet the route does not exist (404)', async () => {
    const app = new OpenAPIHono<AppEnv>();
    app.route('/', demoAgentRoutes({ demo: new DemoAgentService({ mode: 'live', faucet: null, chains: t.chains!, liveWallet: null, database: t.database }), rateLimits: new RateLimits(t.database), appFetch: (request) => app.fetch(request) }));
    expect(app.routes.some((r) => r.path === PATH)).toBe(false);
    expect((await app.request(PATH, { method: 'POST' })).status).toBe(404);
  });

  it('refuses, before signing, a payment that would take demo spending above the cap', async () => {
    const events: DemoEvent[] = [];
    const privateKey = generatePrivateKey();
    const budget = new DatabaseSpendBudget(t.database, privateKeyToAccount(privateKey).address, price(TOUR[0].route) - 1n);
    const before = (await t.database.db.select().from(payments)).length;
    const result = await runTour({
      mode: 'live',
      faucet: null,
      chains: t.chains!,
      liveWallet: { privateKey, spendCapUsd: budget.cap },
      budget,
      appFetch: (request) => t.app.fetch(request),
      origin: 'http://localhost',
      signal: AbortSignal.timeout(15_000),
      stepTimeoutMs: 15_000,
      emit: (event) => events.push(event),
      log: createLogger('silent'),
    });
    expect(result).toEqual({ spent: 0n, calls: 0 });
    expect(events.filter((e) => e.kind === 'payment')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ kind: 'error', message: expect.stringMatching(/above the cap/) });
    expect(events.some((e) => e.kind === 'request' && e.status === 402)).toBe(true);
    expect(await budget.spent()).toBe(0n);
    expect((await t.database.db.select().from(payments)).length).toBe(before);
  });
});
