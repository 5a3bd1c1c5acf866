/**
 * The service side of the payment benchmarks (bench/payments.ts), in its own process: the full app
 * with embedded chains on an in-memory PGlite (as the tests build it), plus two routes with the
 * same trivial handler, one free and one behind the real payment gate ($0.001, rails A, B and C),
 * and POST /bench/fund-treasury `{"employerId", "usd"}` (faucet to the service wallet, then a
 * deposit into that employer's treasury on Tempo, as the tests do in process).
 * With BENCH_TRACE=1 it also times, per request, the whole answer by route and the part of it spent
 * in its fee settlement on Base (rail B, group-committed), every chain write of the Tempo and Base
 * operators (execution), and how busy the main thread (event loop) and the whole
 * process (CPU) were; GET /bench/trace hands the samples over and starts afresh (bench/agent-pay.ts).
 * Prints `{"port": N}` on stdout once listening on 127.0.0.1; exits on SIGTERM.
 *
 *   node --import tsx bench/payments-server.ts
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'hono';
import type { EvmConnection } from '../src/chains/evm/connection.js';
import { TreasuryService } from '../src/features/treasury/service.js';
import { parseUsd } from '../src/money.js';
import type { PaidRoute } from '../src/payments/prices.js';
import { Eip3009SettlementBatcher } from '../src/payments/x402/settlement-batcher.js';
import { startTestApp } from '../test/support/app.js';
import { serveOnLoopback } from '../test/support/http.js';

const BENCH_PAID_ROUTE: PaidRoute = {
  method: 'GET',
  path: '/bench/paid',
  price: 1_000n,
  rails: ['A', 'B', 'C'],
  unit: 'charge',
  card: false,
  effect: 'reads',
  summary: 'bench',
};

const t = await startTestApp({}, { chains: true });
const handler = (c: Context) => c.json({ served: true });
// Registered before the first request, like the gate tests' routes.
t.app.get('/bench/free', handler);
t.app.get(BENCH_PAID_ROUTE.path, t.payments!.gate(BENCH_PAID_ROUTE), handler);

const tempo = t.chains!.tempo;
const treasury = new TreasuryService({ tempo, employers: t.services.employers });
t.app.post('/bench/fund-treasury', async (c) => {
  const { employerId, usd } = await c.req.json<{ employerId: string; usd: string }>();
  const units = parseUsd(usd);
  if (units === null) return c.json({ error: 'usd must be a decimal string' }, 400);
  const funded = await t.request('POST', '/api/dev/faucet', { body: { network: tempo.network, address: tempo.serviceAddress, amount: usd } });
  if (funded.status !== 200) return c.json({ error: `faucet answered ${funded.status}: ${await funded.text()}` }, 500);
  const accountId = await treasury.accountId(employerId);
  await tempo.depositToTreasury(accountId, units);
  return c.json({ accountId: accountId.toString() });
});

/** BENCH_TRACE=1: per-route answer times, and each operator write's execution (ms). */
interface RequestSample {
  totalMs: number;
  /** From the request's arrival to its first Base write (the fee settlement), and that write's whole time; null without one. */
  beforeBaseMs: number | null;
  baseMs: number | null;
}
const trace = process.env.BENCH_TRACE === '1' ? newTrace() : null;
function newTrace() {
  return { requests: {} as Record<string, RequestSample[]>, writes: { tempo: [] as { execMs: number }[], base: [] as { execMs: number }[] } };
}
/** The request a settlement was made for (its first fee settlement's start and end). */
const inRequest = new AsyncLocalStorage<{ baseSubmitted?: number; baseEnded?: number }>();
/** Times every write through an operator connection (writes overlap: the nonce ledger does not queue them). */
function traceWrites(connection: EvmConnection, samples: { execMs: number }[]) {
  const write = connection.write.bind(connection);
  connection.write = async (call, options) => {
    const submitted = performance.now();
    try {
      return await write(call, options);
    } finally {
      samples.push({ execMs: performance.now() - submitted });
    }
  };
}
/**
 * Times each request's fee settlement on Base where the request asks for it: settlements share
 * transactions (group commit), so a write cannot be attributed to one request.
 */
function traceSettlements() {
  const settle = Eip3009SettlementBatcher.prototype.settle;
  Eip3009SettlementBatcher.prototype.settle = async function (this: Eip3009SettlementBatcher, settlement) {
    const request = inRequest.getStore();
    const first = request !== undefined && request.baseSubmitted === undefined;
    if (first) request.baseSubmitted = performance.now();
    try {
      return await settle.call(this, settlement);
    } finally {
      if (first) request.baseEnded = performance.now();
    }
  };
}
let fetchHandler: (request: Request) => Response | Promise<Response> = t.app.fetch;
if (trace) {
  const current = trace;
  traceWrites(tempo.connection, current.writes.tempo);
  traceWrites(t.embeddedChains!.base.connection, current.writes.base);
  traceSettlements();
  let loop = performance.eventLoopUtilization();
  let cpu = process.cpuUsage();
  t.app.get('/bench/trace', (c) => {
    const loopSince = performance.eventLoopUtilization(loop);
    const cpuSince = process.cpuUsage(cpu);
    loop = performance.eventLoopUtilization();
    cpu = process.cpuUsage();
    const taken = {
      requests: { ...current.requests },
      writes: { tempo: [...current.writes.tempo], base: [...current.writes.base] },
      mainThread: { activeMs: loopSince.active, idleMs: loopSince.idle },
      processCpuMs: (cpuSince.user + cpuSince.system) / 1000,
    };
    current.requests = {};
    current.writes.tempo.length = 0;
    current.writes.base.length = 0;
    return c.json(taken);
  });
  fetchHandler = async (request) => {
    const started = performance.now();
    const writes: { baseSubmitted?: number; baseEnded?: number } = {};
    const response = await inRequest.run(writes, () => t.app.fetch(request));
    const key = `${request.method} ${new URL(request.url).pathname}`;
    const { baseSubmitted, baseEnded } = writes;
    (current.requests[key] ??= []).push({
      totalMs: performance.now() - started,
      beforeBaseMs: baseSubmitted === undefined ? null : baseSubmitted - started,
      baseMs: baseSubmitted === undefined || baseEnded === undefined ? null : baseEnded - baseSubmitted,
    });
    return response;
  };
}

const server = await serveOnLoopback(fetchHandler);
process.stdout.write(`${JSON.stringify({ port: Number(new URL(server.url).port) })}\n`);

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  // Bounded: if closing hangs, leave anyway (with a failure code).
  setTimeout(() => process.exit(1), 15_000).unref();
  void (async () => {
    await server.close();
    await t.close();
    process.exit(0);
  })().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
});
