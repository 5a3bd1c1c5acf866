import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { rateLimited, type RateLimits } from '../../http/rate-limits.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent, rateLimitedContent } from '../../http/validation.js';
import { requirePaidCaller } from '../../http/paid-caller.js';
import { formatUsd } from '../../money.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute, registerSessionManagement } from '../../payments/routes.js';
import type { PaidCallers } from '../employers/index.js';
import { PaidIdentityHeaders } from '../employers/index.js';
import { AdvanceBody, AdvanceResponse, BalanceStreamQuery, BalanceTickSchema, SalaryStreamParams, SalaryStreamSchema } from './schema.js';
import { balanceTick, type AdvanceClaim, type StreamBasis, type WagesService } from './service.js';

export interface WagesRouteDeps {
  wages: WagesService;
  /** The employee's own, free view of their stream (the portal's live balance). */
  requireUser: MiddlewareHandler<AppEnv>;
  paidCallers: PaidCallers;
  gate: Gate;
  idempotency: MiddlewareHandler<AppEnv>;
  /** Free advances are limited per employee (`freeAdvances`): each claim is a transaction the service pays gas for. */
  rateLimits: RateLimits;
  /** Milliseconds between ticks (1,000; tests may not change it, benchmarks may). */
  tickMs?: number;
  /** Aborted when the server shuts down: open streams end (AppDependencies.shutdown). */
  shutdown?: AbortSignal;
}

type Gate = (route: PaidRoute) => MiddlewareHandler<AppEnv>;

/**
 * Free for the employee themselves: what the paid tick stream computes from, so the portal can
 * show the balance accruing without paying per second. Starts the stream on first use. Its
 * middleware (`requireUser`) is added where the route is mounted.
 */
const salaryStream = createRoute({
  method: 'get',
  path: '/api/employees/{id}/salary-stream',
  tags: ['Wages'],
  summary: "The employee's salary stream: rate, accrual start and wallet balance (the employee)",
  security: [{ bearerAuth: [] }],
  request: { params: SalaryStreamParams },
  responses: { 200: jsonContent(SalaryStreamSchema, 'The stream.'), ...errorResponses(400, 401, 404, 409, 422) },
});

const ADVANCE_REFUSALS = {
  409: jsonContent(
    ErrorSchema,
    '`WALLET_UNDER_REVIEW` / `WALLET_REVIEW_REJECTED` (a changed wallet is paid nothing until the employer approves it), `ADVANCE_IN_PROGRESS` ' +
      '(a concurrent advance is being claimed), `AMBIGUOUS_ADDRESS`, `WALLET_STREAMED_BY_ANOTHER_EMPLOYER`, `STREAM_STOPPED` or `STREAM_STOPPING` ' +
      '(the wallet changed meanwhile).',
  ),
  422: jsonContent(ErrorSchema, '`NOTHING_ACCRUED` (with the reason), `NO_SALARY`, `NO_WALLET`, `STREAM_NEEDS_ADMIN_WALLET`.'),
};

/**
 * The portal's advance: free for the employee themselves (the paid route below is the agents').
 * Its middleware (`requireUser`, `idempotency`) is added where the route is mounted.
 */
const ownAdvance = createRoute({
  method: 'post',
  path: '/api/employees/{id}/advance',
  tags: ['Wages'],
  summary: 'The employee claims their accrued salary to their wallet (free; the employee only)',
  description:
    'Claims what the salary stream has accrued to the employee\'s Tempo wallet; the next payroll run deducts it. One advance a minute per ' +
    'employee (429). Send an `Idempotency-Key` to make a retry safe: the same key answers with the first claim.',
  security: [{ bearerAuth: [] }],
  request: { params: SalaryStreamParams },
  responses: {
    200: jsonContent(AdvanceResponse, 'Claimed on chain.'),
    ...errorResponses(400, 401, 404),
    ...ADVANCE_REFUSALS,
    429: rateLimitedContent('one advance a minute per employee'),
  },
});

// The paid routes: their gate and paid-caller middleware come from the app's dependencies.
const balanceStream = (gate: Gate, paidCaller: MiddlewareHandler<AppEnv>) =>
  createRoute(
    paidRoute(PAID.balanceStream, gate, {
      middleware: [paidCaller],
      request: { headers: PaidIdentityHeaders, query: BalanceStreamQuery },
      description:
        'Server-sent events, one per second, each a salary balance tick (spec 2.10), billed per event through an MPP session. ' +
        'Callers: the employee (X-Identity-Token), or their employer\'s owner or agent key. The stream ends when the client leaves, ' +
        'or when the session has no voucher for the next tick 20 s after asking for one. When the server shuts down the stream ends ' +
        "with the session's final `event: payment-receipt` (what was charged); reconnect to go on (another instance answers).",
      responses: {
        200: { description: 'A `text/event-stream` of `SalaryBalanceTick` JSON events.', content: { 'text/event-stream': { schema: BalanceTickSchema } } },
        ...errorResponses(400, 401, 404, 409),
        422: jsonContent(ErrorSchema, 'No stream can run: `NO_WALLET`, `NO_SALARY` or `STREAM_NEEDS_ADMIN_WALLET`.'),
      },
    }),
  );

const employeeAdvance = (gate: Gate, paidCaller: MiddlewareHandler<AppEnv>) =>
  createRoute(
    paidRoute(PAID.employeeAdvance, gate, {
      middleware: [paidCaller],
      request: { headers: PaidIdentityHeaders, body: jsonBody(AdvanceBody) },
      description:
        "Claims the employee's accrued streamed salary to their wallet on the Tempo chain. Callers: the employee, or their employer's owner or agent key. " +
        'A 409 or 422 refusal comes after the fee, which is kept (< 500).',
      responses: {
        200: jsonContent(AdvanceResponse, 'Claimed on chain.'),
        ...errorResponses(400, 401, 404, 415),
        ...ADVANCE_REFUSALS,
      },
    }),
  );

const showSalaryStream =
  (wages: WagesService): RouteHandler<typeof salaryStream, AppEnv> =>
  async (c) => {
    const basis = await wages.streamBasis(await wages.employeeFor({ kind: 'user', caller: c.var.caller }, { employeeId: c.req.valid('param').id }, { selfOnly: true }));
    c.header('Cache-Control', 'no-store');
    return c.json(
      {
        employee_id: basis.employeeId,
        wallet_address: basis.wallet,
        active: basis.ratePerSecond > 0n,
        rate_per_second: basis.ratePerSecond.toString(),
        salary_per_second_usd: formatUsd(basis.ratePerSecond),
        accruing_since: basis.accruingSince.toString(),
        wallet_balance: basis.walletBalance.toString(),
        as_of: new Date(wages.nowMs()).toISOString(),
      },
      200,
    );
  };

const streamBalance =
  (deps: WagesRouteDeps): RouteHandler<ReturnType<typeof balanceStream>, AppEnv> =>
  async (c) => {
    const query = c.req.valid('query');
    const employee = await deps.wages.employeeFor(c.var.paidCaller, query);
    c.var.payment.attribute(employee.employerId);
    const basis = await deps.wages.streamBasis(employee);
    return new Response(balanceEvents(deps.wages, basis, deps.tickMs ?? 1000, deps.shutdown), {
      headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform' },
    });
  };

const presentClaim = (claim: AdvanceClaim) => ({
  success: true,
  employee_address: claim.wallet,
  tx_hash: claim.txHash,
  claimed_at: claim.claimedAt.toISOString(),
  amount: claim.amount.toString(),
  amount_usd: formatUsd(claim.amount),
});

const claimAdvance =
  (wages: WagesService): RouteHandler<ReturnType<typeof employeeAdvance>, AppEnv> =>
  async (c) => {
    const { employeeAddress } = c.req.valid('json');
    const employee = await wages.employeeFor(c.var.paidCaller, { address: employeeAddress });
    c.var.payment.attribute(employee.employerId);
    return c.json(presentClaim(await wages.advance(employee, c.var.payment)), 200);
  };

const claimOwnAdvance =
  (deps: WagesRouteDeps): RouteHandler<typeof ownAdvance, AppEnv> =>
  async (c) => {
    const employee = await deps.wages.employeeFor({ kind: 'user', caller: c.var.caller }, { employeeId: c.req.valid('param').id }, { selfOnly: true });
    // Counted after the caller is known to be the employee: nobody else can use up their minute.
    const verdict = await deps.rateLimits.consume('freeAdvances', `employee:${employee.id}`);
    if (!verdict.ok) throw rateLimited('One advance a minute', verdict.retryAfterSeconds);
    return c.json(presentClaim(await deps.wages.advance(employee)), 200);
  };

export function wagesRoutes(deps: WagesRouteDeps): FeatureApp {
  const app = featureApp();
  const paidCaller = requirePaidCaller(deps.paidCallers);
  app.openapi({ ...salaryStream, middleware: [deps.requireUser] }, showSalaryStream(deps.wages));
  // mppx session clients POST vouchers, top-ups and closes to the stream's own URL.
  registerSessionManagement(app, PAID.balanceStream, deps.gate);
  app.openapi(balanceStream(deps.gate, paidCaller), streamBalance(deps));
  app.openapi(employeeAdvance(deps.gate, paidCaller), claimAdvance(deps.wages));
  app.openapi({ ...ownAdvance, middleware: [deps.requireUser, deps.idempotency] }, claimOwnAdvance(deps));
  return app;
}

/**
 * One SSE event per `tickMs`, computed in memory from the basis: an open stream holds a timer and
 * a few numbers, and reads the chain again only when this process claims or re-rates its stream.
 * Events are made when the reader asks (high-water mark 0), so a reader held up waiting for a
 * voucher gets a current tick afterwards, not a backlog.
 */
function balanceEvents(wages: WagesService, initial: StreamBasis, tickMs: number, shutdown?: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let basis = initial;
  let tick = 0;
  let due = Date.now(); // the ticks' pace is real time (a duration), as is `wait` below
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake = () => {};
  let cancelled = false;
  const unsubscribe = wages.onStreamChange(basis.wallet, () => {
    wages.refreshedBasis(basis).then(
      (fresh) => (basis = fresh),
      () => {}, // the next change or a reconnect brings it up to date
    );
  });
  const stop = () => {
    if (cancelled) return;
    cancelled = true;
    clearTimeout(timer);
    wake();
    unsubscribe();
    shutdown?.removeEventListener('abort', stop);
  };
  // Shutdown ends the stream as the client's leaving does; the session metering wrapped around
  // it then sends its final receipt event.
  shutdown?.addEventListener('abort', stop, { once: true });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const wait = due - Date.now();
        if (wait > 0 && !cancelled) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, wait);
          });
        }
        if (shutdown?.aborted) {
          stop();
          controller.close();
          return;
        }
        if (cancelled) return;
        const now = Date.now(); // real time: it paces the ticks; the accrual is computed at the service's time
        tick += 1;
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(balanceTick(basis, tick, wages.nowMs()))}\n\n`));
        // On time: the next second. Late (the reader waited for a voucher): a second from now, no burst.
        due = due + tickMs > now ? due + tickMs : now + tickMs;
      },
      cancel: stop,
    },
    { highWaterMark: 0 },
  );
}
