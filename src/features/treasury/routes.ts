import { createRoute } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { Address } from 'viem';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { notFound } from '../../errors.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { requirePaidCaller } from '../../http/paid-caller.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import { PaidCallers } from '../employers/index.js';
import { EmployerIdParams, PaidIdentityHeaders } from '../employers/index.js';
import { formatUsd } from '../../money.js';
import type { BalanceHistory as History, TreasuryHistory } from './history.js';
import type { TreasuryOperations } from './operations.js';
import { BalanceHistory, BalanceHistoryQuery, OptimizeBody, Optimization, OwnerTreasury, SessionBody, SessionEnvelope, YieldRates, YieldRatesQuery, YieldSummary } from './schema.js';
import type { TreasuryService } from './service.js';

export interface TreasuryRouteDeps {
  treasury: TreasuryService;
  operations: TreasuryOperations;
  history: TreasuryHistory;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
  paidCallers: PaidCallers;
  requireUser: MiddlewareHandler<AppEnv>;
}

const security = [{ bearerAuth: [] }];

// The owner routes' bearer identity and the paid routes' gate and paid-caller middleware are added
// when the routes are built: they need the app's dependencies.

/** GET /api/mpp/treasury/yield-rates (PAID.yieldRates), less its gate. */
const yieldRatesRoute = {
  request: { query: YieldRatesQuery },
  responses: {
    200: jsonContent(YieldRates, 'The yield sources and the blended APY of the default allocation.'),
    ...errorResponses(400, 404),
  },
};

const ownerTreasury = createRoute({
  method: 'get',
  path: '/api/employers/{id}/treasury',
  tags: ['Employers'],
  summary: "The employer's available and locked treasury balances",
  security,
  request: { params: EmployerIdParams },
  responses: { 200: jsonContent(OwnerTreasury, 'Balances read from the treasury contract.'), ...errorResponses(400, 401, 404) },
});

const balanceHistory = createRoute({
  method: 'get',
  path: '/api/employers/{id}/treasury/history',
  tags: ['Employers'],
  summary: "The employer's treasury balance per UTC day, as the service observed it",
  description:
    'Owner only. The contract keeps only the current balance, so the service records one snapshot per day (the day\'s last ' +
    'observation of an hourly job); today\'s point is the balance read now, not stored. The history starts at `first_observed_day`; ' +
    'days without an observation have no point.',
  security,
  request: { params: EmployerIdParams, query: BalanceHistoryQuery },
  responses: { 200: jsonContent(BalanceHistory, 'Observed daily balances, oldest first.'), ...errorResponses(400, 401, 404) },
});

function presentHistory(history: History) {
  return {
    employer_id: history.employerId,
    days: history.days,
    first_observed_day: history.firstObservedDay,
    points: history.snapshots.map((s) => ({
      day: s.day,
      available_usd: formatUsd(s.available),
      locked_usd: formatUsd(s.locked),
      total_usd: formatUsd(s.available + s.locked),
      observed_at: s.observedAt.toISOString(),
    })),
  };
}

const yieldSummary = createRoute({
  method: 'get',
  path: '/api/yield',
  tags: ['Employers'],
  summary: "The caller's employer yield summary",
  security,
  responses: { 200: jsonContent(YieldSummary, 'Sources, allocation, blended APY and a year\'s projection.'), ...errorResponses(401, 404) },
});

/** POST /api/mpp/treasury/optimize (PAID.treasuryOptimize), less its gate and paid-caller middleware. */
const optimizeRoute = {
  description:
    'Identity: X-Identity-Token (the employer owner) or X-Agent-Key (its agent). A caller not acting for employerId gets 404, as for a missing employer; the fee is kept. ' +
    'The engine is deterministic; a configured AI provider may only reword the texts.',
  request: { headers: PaidIdentityHeaders, body: jsonBody(OptimizeBody) },
  responses: { 200: jsonContent(Optimization, 'Spec 2.9, plus the documented extras.'), ...errorResponses(400, 401, 404, 415) },
};

/** POST /api/mpp/agent/session/treasury (PAID.treasurySession), less its gate and paid-caller middleware. */
const sessionRoute = {
  description:
    'Identity: X-Identity-Token (the employer owner) or X-Agent-Key (its agent); otherwise 404 as for a missing employer (fee kept). ' +
    'rebalance takes percentages in allocation or params.targetAllocation and is audited.',
  request: { headers: PaidIdentityHeaders, body: jsonBody(SessionBody) },
  responses: { 200: jsonContent(SessionEnvelope, 'The action\'s result in the envelope.'), ...errorResponses(400, 401, 404, 409, 415) },
};

/**
 * The paid caller, if it acts for the employer; otherwise 404 exactly as for a missing employer
 * (after payment: the fee is kept, as for every answer below 500).
 */
function actingFor(c: Context<AppEnv>, employerId: string) {
  const paid = c.var.paidCaller;
  if (!PaidCallers.actsFor(paid, employerId)) throw notFound('Employer');
  c.var.payment.attribute(employerId);
  return paid;
}

export function treasuryRoutes(deps: TreasuryRouteDeps): FeatureApp {
  const app = featureApp();
  const { operations } = deps;
  const paidCaller = requirePaidCaller(deps.paidCallers);

  app.openapi(createRoute(paidRoute(PAID.yieldRates, deps.gate, yieldRatesRoute)), async (c) => {
    const { token } = c.req.valid('query');
    return c.json(await deps.treasury.yieldRates(token as Address | undefined), 200);
  });

  app.openapi({ ...ownerTreasury, middleware: [deps.requireUser] }, async (c) =>
    c.json(await operations.ownerTreasury(c.var.caller, c.req.valid('param').id), 200),
  );

  app.openapi({ ...balanceHistory, middleware: [deps.requireUser] }, async (c) => {
    const history = await deps.history.history(c.var.caller, c.req.valid('param').id, c.req.valid('query').days);
    return c.json(presentHistory(history), 200);
  });

  app.openapi({ ...yieldSummary, middleware: [deps.requireUser] }, async (c) => c.json(await operations.yieldSummary(c.var.caller), 200));

  app.openapi(createRoute(paidRoute(PAID.treasuryOptimize, deps.gate, { middleware: [paidCaller], ...optimizeRoute })), async (c) => {
    const { employerId, question } = c.req.valid('json');
    actingFor(c, employerId);
    const asked = question?.trim() ? question.trim() : null;
    return c.json(await operations.optimize(employerId, asked), 200);
  });

  app.openapi(createRoute(paidRoute(PAID.treasurySession, deps.gate, { middleware: [paidCaller], ...sessionRoute })), async (c) => {
    const body = c.req.valid('json');
    const paid = actingFor(c, body.employerId);
    const result = await operations.sessionAction(body, paid, { requestId: c.var.requestId, paymentId: c.var.payment.id, redeemed: c.var.payment.redeemed });
    return c.json({ action: body.action, result, timestamp: deps.treasury.now().getTime() }, 200);
  });
  return app;
}
