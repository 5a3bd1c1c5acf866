import { createRoute, z } from '@hono/zod-openapi';
import { privateKeyToAccount } from 'viem/accounts';
import type { Chains } from '../../chains/index.js';
import type { Database } from '../../db/client.js';
import { errorResponse } from '../../http/errors.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { clientKey, rateLimited, type RateLimits } from '../../http/rate-limits.js';
import { errorResponses, rateLimitedContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import type { Faucet } from '../dev/faucet.js';
import { runTour, type DemoEvent, type LiveWallet } from './agent.js';
import { DatabaseSpendBudget, UNCAPPED } from './spend-budget.js';

export interface DemoLimits {
  runTimeoutMs: number;
  stepTimeoutMs: number;
}

export const DEFAULT_DEMO_LIMITS: DemoLimits = { runTimeoutMs: 60_000, stepTimeoutMs: 15_000 };

export interface DemoAgentRouteDeps {
  mode: 'local' | 'live';
  /** Local mode: funds each run's fresh wallet. */
  faucet: Faucet | null;
  chains: Chains;
  /** Live mode: the wallet demos pay from; without it the route does not exist. */
  liveWallet: LiveWallet | null;
  /** Behind a reverse proxy that appends the client's address to X-Forwarded-For. Default false. */
  trustProxy?: boolean;
  limits?: Partial<DemoLimits>;
  /** Aborted when the server shuts down: open runs stop and their streams end (AppDependencies.shutdown). */
  shutdown?: AbortSignal;
  /** Runs per client IP (`demoRuns`) and one run at a time per client IP, on all instances together. */
  rateLimits: RateLimits;
  /** Keeps the live wallet's spending. */
  database: Database;
  /** The whole app's fetch: the tour pays the paid routes of other features' sub-apps. */
  appFetch: (request: Request) => Response | Promise<Response>;
}

const RunAgentBody = z
  .object({ scenario: z.enum(['tour']).default('tour').openapi({ description: 'The only scenario: the paid-route tour.' }) })
  .openapi('DemoRunAgentRequest');

const DemoStepEvent = z
  .object({
    step: z.number().int().openapi({ description: '1, 2, 3, ... in order.' }),
    kind: z.enum(['info', 'request', 'payment', 'result', 'error']),
    message: z.string().openapi({ description: 'Human narration.' }),
    route: z.string().optional().openapi({ example: 'GET /api/mpp/treasury/yield-rates' }),
    rail: z.enum(['A', 'B', 'C']).optional(),
    status: z.number().int().optional().openapi({ description: 'HTTP status: 402 on the unpaid call and on the offer being paid, then the paid answer.' }),
    amount_usd: z.string().optional().openapi({ example: '0.010000', description: "The amount from the 402's offer (6 decimals)." }),
    reference: z.string().optional().openapi({ description: 'A transaction hash or signature: the faucet funding, the Payment-Receipt reference (A) or the x402 settlement (B, C).' }),
    data: z.unknown().optional().openapi({ description: 'Small JSON: the offers of a 402, a shortened response.' }),
  })
  .openapi('DemoStepEvent');

const DemoDoneEvent = z
  .object({
    steps: z.number().int(),
    spent_usd: z.string().openapi({ example: '0.070000', description: 'Sum of the charged calls (those answered with a receipt).' }),
    calls: z.number().int().openapi({ description: 'Paid calls that were charged.' }),
  })
  .openapi('DemoDoneEvent');

/**
 * `POST /api/demo/run-agent`: a server-sent-event stream of the demo agent paying this server's paid
 * routes. Not registered (so 404) in live mode without a wallet, or in local mode without a faucet.
 */
export function demoAgentRoutes(deps: DemoAgentRouteDeps): FeatureApp {
  const app = featureApp();
  if (deps.mode === 'live' ? !deps.liveWallet : !deps.faucet) return app;
  const limits = { ...DEFAULT_DEMO_LIMITS, ...deps.limits };
  const runs = deps.rateLimits.rules.demoRuns;
  // Live: the wallet's spending in the database; local runs each pay from their own fresh wallet.
  const { liveWallet } = deps;
  const budget = liveWallet ? new DatabaseSpendBudget(deps.database, privateKeyToAccount(liveWallet.privateKey).address, liveWallet.spendCapUsd) : UNCAPPED;

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/demo/run-agent',
      tags: ['Demo'],
      summary: 'Run the demo agent: a live narration of it paying this server over HTTP 402 (SSE)',
      description:
        'No authentication; the agent pays from its own wallet (local mode: a fresh one funded by the dev faucet; live mode: the configured ' +
        'wallet, rail A only, within a spend cap). The stream sends `event: step` events (`DemoStepEvent`) and ends with one `event: done` ' +
        '(`DemoDoneEvent`). The tour: fund the wallet, call `GET /api/mpp/treasury/yield-rates` unpaid (402), pay it on rail A, ' +
        '`POST /api/mpp/memo/decode` on rail B, `POST /api/mpp/compliance/check` on rail C, then a summary. The run stops when the client ' +
        `disconnects, after ${limits.runTimeoutMs / 1000} s in all or ${limits.stepTimeoutMs / 1000} s on one step, or when the server shuts down ` +
        '(then a last `step` of kind `error` says so, and `event: done` still ends the stream). ' +
        `Each client IP may start ${runs.points === 0 ? 'any number of' : runs.points} runs per ${runs.durationSeconds / 60} minutes, one at a time ` +
        '(counted over all instances).',
      request: { body: { required: false, content: { 'application/json': { schema: RunAgentBody } } } },
      responses: {
        200: {
          description: '`text/event-stream`: `event: step` with a `DemoStepEvent`, repeated, then `event: done` with a `DemoDoneEvent`.',
          content: { 'text/event-stream': { schema: z.union([DemoStepEvent, DemoDoneEvent]) } },
        },
        ...errorResponses(400, 415),
        429: rateLimitedContent('too many runs from this address, or one is still running'),
      },
    }),
    async (c) => {
      const client = `ip:${clientKey(c, deps.trustProxy ?? false)}`;
      // The lease outlives a run that overran its deadline by the time the stream takes to end.
      const slot = await deps.rateLimits.lease('demoRunning', client, Math.ceil(limits.runTimeoutMs / 1000) + 5);
      if (!slot.ok) return errorResponse(c, rateLimited('A demo run from this address is still running', slot.retryAfterSeconds));
      const quota = await deps.rateLimits.consume('demoRuns', client);
      if (!quota.ok) {
        await slot.release();
        return errorResponse(c, rateLimited('Too many demo runs from this address', quota.retryAfterSeconds));
      }
      const log = c.var.log;
      const stream = eventStream(c.req.raw.signal, deps.shutdown, limits, async (emit, signal) => {
        try {
          return await runTour({
            mode: deps.mode,
            faucet: deps.faucet,
            chains: deps.chains,
            liveWallet: deps.liveWallet,
            budget,
            appFetch: (request) => deps.appFetch(request),
            origin: new URL(c.req.url).origin,
            signal,
            stepTimeoutMs: limits.stepTimeoutMs,
            emit,
            log,
          });
        } catch (error) {
          log.error({ err: error }, 'demo agent failed');
          emit({ kind: 'error', message: 'The demo agent failed unexpectedly.' });
          return { spent: 0n, calls: 0 };
        } finally {
          await slot.release().catch((error: unknown) => log.warn({ err: error }, 'demo run lease not released; it expires by itself'));
        }
      });
      return new Response(stream, {
        headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
      });
    },
  );
  return app;
}

/**
 * The SSE body: `event: step` per narrated step, then `event: done`. The run's signal fires when the
 * client leaves (request aborted or body cancelled), when the run's time is up or at shutdown.
 */
function eventStream(
  requestSignal: AbortSignal,
  shutdown: AbortSignal | undefined,
  limits: DemoLimits,
  run: (emit: (event: DemoEvent) => void, signal: AbortSignal) => Promise<{ spent: bigint; calls: number }>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const client = new AbortController();
  const deadline = AbortSignal.timeout(limits.runTimeoutMs);
  const signal = AbortSignal.any([requestSignal, client.signal, deadline, ...(shutdown ? [shutdown] : [])]);
  const gone = () => requestSignal.aborted || client.signal.aborted;
  let steps = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (event: 'step' | 'done', data: object) => {
        if (!gone()) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      };
      const emit = (event: DemoEvent) => send('step', { step: ++steps, ...event });
      void run(emit, signal).then(({ spent, calls }) => {
        if (deadline.aborted) emit({ kind: 'error', message: `The run took longer than ${limits.runTimeoutMs / 1000} s and was stopped.` });
        else if (shutdown?.aborted) emit({ kind: 'error', message: 'The server is shutting down: the run was stopped.' });
        send('done', { steps, spent_usd: formatUsd(spent), calls });
        // A cancelled body is closed already.
        if (!client.signal.aborted) controller.close();
      });
    },
    cancel() {
      client.abort(new Error('the client disconnected'));
    },
  });
}
