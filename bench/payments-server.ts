/**
 * The service side of the payment benchmarks (bench/payments.ts), in its own process: the full app
 * with embedded chains on an in-memory PGlite (as the tests build it), plus two routes with the
 * same trivial handler, one free and one behind the real payment gate ($0.001, rails A, B and C).
 * Prints `{"port": N}` on stdout once listening on 127.0.0.1; exits on SIGTERM.
 *
 *   node --import tsx bench/payments-server.ts
 */
import type { Context } from 'hono';
import type { PaidRoute } from '../src/payments/prices.js';
import { startTestApp } from '../test/support/app.js';
import { serveOnLoopback } from '../test/support/http.js';

const BENCH_PAID_ROUTE: PaidRoute = {
  method: 'GET',
  path: '/bench/paid',
  price: 1_000n,
  rails: ['A', 'B', 'C'],
  unit: 'charge',
  card: false,
  summary: 'bench',
};

const t = await startTestApp({}, { chains: true });
const handler = (c: Context) => c.json({ served: true });
// Registered before the first request, like the gate tests' routes.
t.app.get('/bench/free', handler);
t.app.get(BENCH_PAID_ROUTE.path, t.payments!.gate(BENCH_PAID_ROUTE), handler);

const server = await serveOnLoopback(t.app.fetch);
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
