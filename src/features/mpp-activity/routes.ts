import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { mppSessions } from '../../payments/tables.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import type { ReceiptRow } from '../../payments/store.js';
import { EmployerIdParams } from '../employers/index.js';
import { PageQuery, ReceiptsResponse, SessionsResponse } from './schema.js';
import type { MppActivityService } from './service.js';

// Both routes take `requireUser` as their middleware, added where they are mounted.
const listReceipts = createRoute({
  method: 'get',
  path: '/api/employers/{id}/mpp-receipts',
  tags: ['Employers'],
  summary: 'Receipts of paid calls made on behalf of the employer, newest first, with totals per rail',
  security: [{ bearerAuth: [] }],
  request: { params: EmployerIdParams, query: PageQuery },
  responses: { 200: jsonContent(ReceiptsResponse, 'The receipt feed.'), ...errorResponses(400, 401, 404) },
});

const listSessions = createRoute({
  method: 'get',
  path: '/api/employers/{id}/mpp-sessions',
  tags: ['Employers'],
  summary: "Recent MPP session history: the employer's payment channels, most recently active first",
  security: [{ bearerAuth: [] }],
  request: { params: EmployerIdParams, query: PageQuery },
  responses: { 200: jsonContent(SessionsResponse, 'The session history.'), ...errorResponses(400, 401, 404) },
});

const receipts =
  (activity: MppActivityService): RouteHandler<typeof listReceipts, AppEnv> =>
  async (c) => {
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const { rows, total, totals } = await activity.receipts(c.var.caller, id, query);
    return c.json(
      {
        employer_id: id,
        totals: totals.map((t) => ({ rail: t.rail, count: t.count, amount_usd: formatUsd(t.amount) })),
        receipts: rows.map(presentReceipt),
        page: query.page,
        limit: query.limit,
        total,
      },
      200,
    );
  };

const sessions =
  (activity: MppActivityService): RouteHandler<typeof listSessions, AppEnv> =>
  async (c) => {
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const { rows, total } = await activity.sessions(c.var.caller, id, query);
    return c.json({ employer_id: id, sessions: rows.map(presentSession), page: query.page, limit: query.limit, total }, 200);
  };

export function mppActivityRoutes(deps: { activity: MppActivityService; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  const middleware = [deps.requireUser];
  app.openapi({ ...listReceipts, middleware }, receipts(deps.activity));
  app.openapi({ ...listSessions, middleware }, sessions(deps.activity));
  return app;
}

function presentReceipt(row: ReceiptRow) {
  return {
    id: row.id,
    route: row.route,
    rail: row.rail,
    payer: row.payer,
    amount_usd: formatUsd(row.amount),
    reference: row.reference,
    status: row.status,
    receipt: row.receipt as Record<string, unknown>,
    created_at: row.createdAt.toISOString(),
  };
}

function presentSession(row: typeof mppSessions.$inferSelect) {
  return {
    channel_id: row.id,
    payer: row.payer,
    route: row.route,
    status: row.status,
    deposit_usd: formatUsd(row.deposit),
    accepted_usd: formatUsd(row.acceptedCumulative),
    spent_usd: formatUsd(row.spent),
    settled_usd: formatUsd(row.settled),
    opened_at: row.openedAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    closed_at: row.closedAt?.toISOString() ?? null,
  };
}
