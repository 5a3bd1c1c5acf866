import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Chains } from '../../chains/index.js';
import type { AppEnv } from '../../http/context.js';
import { ErrorSchema, errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import type { Faucet } from '../dev/faucet.js';
import { runTour, SpendBudget, type DemoEvent, type LiveWallet } from './agent.js';

export interface DemoLimits {
  /** Runs each client IP may start per window (a token bucket refilling evenly over the window). */
  runsPerWindow: number;
  windowMs: number;
  runTimeoutMs: number;
  stepTimeoutMs: number;
}

export const DEFAULT_DEMO_LIMITS: DemoLimits = { runsPerWindow: 3, windowMs: 10 * 60_000, runTimeoutMs: 60_000, stepTimeoutMs: 15_000 };

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

/** Requests whose socket address is unknown (no Node server behind the app) share one bucket. */
const UNKNOWN_CLIENT = 'unknown';

/**
 * `POST /api/demo/run-agent`: a server-sent-event stream of the demo agent paying this server's paid
 * routes. Not registered (so 404) in live mode without a wallet, or in local mode without a faucet.
 */
export function registerDemoAgentRoutes(app: OpenAPIHono<AppEnv>, deps: DemoAgentRouteDeps): void {
  if (deps.mode === 'live' ? !deps.liveWallet : !deps.faucet) return;
  const limits = { ...DEFAULT_DEMO_LIMITS, ...deps.limits };
  const limiter = new RunLimiter(limits.runsPerWindow, limits.windowMs);
  // Live spend counts from process start; local runs each pay from their own fresh wallet.
  const liveBudget = deps.liveWallet ? new SpendBudget(deps.liveWallet.spendCapUsd) : null;

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
        `Each client IP may start ${limits.runsPerWindow} runs per ${limits.windowMs / 60_000} minutes, one at a time.`,
      request: { body: { required: false, content: { 'application/json': { schema: RunAgentBody } } } },
      responses: {
        200: {
          description: '`text/event-stream`: `event: step` with a `DemoStepEvent`, repeated, then `event: done` with a `DemoDoneEvent`.',
          content: { 'text/event-stream': { schema: z.union([DemoStepEvent, DemoDoneEvent]) } },
        },
        ...errorResponses(400, 415),
        429: {
          ...jsonContent(ErrorSchema, '`RATE_LIMITED`: too many runs from this address, or one is still running; see `Retry-After`.'),
          headers: z.object({ 'Retry-After': z.string().openapi({ description: 'Seconds.' }) }),
        },
      },
    }),
    (c) => {
      const slot = limiter.acquire(clientKey(c, deps.trustProxy ?? false), Date.now() + limits.runTimeoutMs);
      if (!slot.ok) {
        return c.json(
          { error: `Too many demo runs from this address; try again in ${slot.retryAfterSeconds} s.`, code: 'RATE_LIMITED' },
          429,
          { 'Retry-After': String(slot.retryAfterSeconds) },
        );
      }
      const log = c.var.log;
      const stream = eventStream(c.req.raw.signal, deps.shutdown, limits, async (emit, signal) => {
        try {
          return await runTour({
            mode: deps.mode,
            faucet: deps.faucet,
            chains: deps.chains,
            liveWallet: deps.liveWallet,
            budget: liveBudget ?? new SpendBudget(null),
            appFetch: (request) => app.fetch(request),
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
          slot.release();
        }
      });
      return new Response(stream, {
        headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
      });
    },
  );
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

/**
 * The key a run is limited by: the socket's peer address. X-Forwarded-For is believed only with
 * `trustProxy`, and then only its last entry (the one our proxy appended; earlier ones are the
 * client's to write).
 */
function clientKey(c: Context<AppEnv>, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header('X-Forwarded-For')?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  try {
    return getConnInfo(c).remote.address ?? UNKNOWN_CLIENT;
  } catch {
    // Not behind @hono/node-server (app.request in tests, other runtimes).
    return UNKNOWN_CLIENT;
  }
}

type Slot = { ok: true; release(): void } | { ok: false; retryAfterSeconds: number };

/**
 * Per-key token buckets (capacity `runs`, refilled evenly over `windowMs`) and one run at a time
 * per key. In process: each instance limits on its own, which is enough for a demo.
 */
export class RunLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Keys with a run in progress, and when that run must have ended. */
  private readonly running = new Map<string, number>();
  private readonly perMs: number;

  constructor(
    private readonly runs: number,
    windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = runs / windowMs;
  }

  acquire(key: string, deadline: number): Slot {
    const now = this.now();
    const busyUntil = this.running.get(key);
    if (busyUntil !== undefined) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((busyUntil - now) / 1000)) };
    this.prune(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.runs, at: now };
    const tokens = Math.min(this.runs, bucket.tokens + (now - bucket.at) * this.perMs);
    if (tokens < 1) {
      this.buckets.set(key, { tokens, at: now });
      return { ok: false, retryAfterSeconds: Math.ceil((1 - tokens) / this.perMs / 1000) };
    }
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    this.running.set(key, deadline);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.running.delete(key);
      },
    };
  }

  /** Full buckets say nothing a missing one would not: drop them so the map stays small. */
  private prune(now: number): void {
    if (this.buckets.size < 1024) return;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.runs) this.buckets.delete(key);
    }
  }
}
