import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { MPP_SESSION_STATUSES, type mppSessions } from '../../payments/tables.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import type { ReceiptRow } from '../../payments/store.js';
import { EmployerIdParams } from '../employers/schema.js';
import type { MppActivityService } from './service.js';

const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-indexed page.' }),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
const Receipt = z
  .object({
    id: z.uuid(),
    route: z.string().openapi({ example: 'POST /api/mpp/agent/pay' }),
    rail: z.enum(['A', 'B', 'C', 'card']),
    payer: z.string().nullable(),
    amount_usd: z.string().openapi({ example: '0.050000' }),
    reference: z.string().nullable().openapi({ description: 'Transaction hash, signature or card payment id.' }),
    status: z.string(),
    receipt: z.record(z.string(), z.unknown()).openapi({ description: 'The receipt the payer was given.' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('MppReceipt');
const ReceiptsResponse = z
  .object({
    employer_id: z.uuid(),
    totals: z.array(z.object({ rail: z.string(), count: z.number().int(), amount_usd: z.string() })).openapi({ description: 'Settled receipts per rail, all time.' }),
    receipts: z.array(Receipt),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('MppReceipts');
const Session = z
  .object({
    channel_id: z.string().openapi({ description: 'The payment channel id (lower case).', example: '0x6d0f...' }),
    payer: z.string(),
    route: z.string().openapi({ example: 'GET /api/mpp/agent/stream' }),
    status: z.enum(MPP_SESSION_STATUSES),
    deposit_usd: z.string().openapi({ example: '10.000000' }),
    accepted_usd: z.string().openapi({ description: 'Highest cumulative voucher amount accepted.', example: '1.250000' }),
    spent_usd: z.string().openapi({ description: 'What the service has charged against the channel.', example: '1.200000' }),
    settled_usd: z.string().openapi({ description: 'What has been settled on chain.', example: '0.000000' }),
    opened_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
    closed_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('MppSession');
const SessionsResponse = z
  .object({
    employer_id: z.uuid(),
    sessions: z.array(Session),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('MppSessions');

export function mppActivityRoutes(deps: { activity: MppActivityService; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/employers/{id}/mpp-receipts',
      tags: ['Employers'],
      summary: 'Receipts of paid calls made on behalf of the employer, newest first, with totals per rail',
      security: [{ bearerAuth: [] }],
      middleware: [deps.requireUser] as const,
      request: { params: EmployerIdParams, query: PageQuery },
      responses: { 200: jsonContent(ReceiptsResponse, 'The receipt feed.'), ...errorResponses(400, 401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const query = c.req.valid('query');
      const { rows, total, totals } = await deps.activity.receipts(c.var.caller, id, query);
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
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/employers/{id}/mpp-sessions',
      tags: ['Employers'],
      summary: "Recent MPP session history: the employer's payment channels, most recently active first",
      security: [{ bearerAuth: [] }],
      middleware: [deps.requireUser] as const,
      request: { params: EmployerIdParams, query: PageQuery },
      responses: { 200: jsonContent(SessionsResponse, 'The session history.'), ...errorResponses(400, 401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const query = c.req.valid('query');
      const { rows, total } = await deps.activity.sessions(c.var.caller, id, query);
      return c.json({ employer_id: id, sessions: rows.map(presentSession), page: query.page, limit: query.limit, total }, 200);
    },
  );
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
