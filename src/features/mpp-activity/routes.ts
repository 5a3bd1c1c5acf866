import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import type { ReceiptRow } from '../../payments/store.js';
import { EmployerIdParams } from '../employers/schema.js';
import type { MppActivityService } from './service.js';

const ReceiptsQuery = z.object({
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

export function registerMppActivityRoutes(app: OpenAPIHono<AppEnv>, deps: { activity: MppActivityService; requireUser: MiddlewareHandler<AppEnv> }): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/employers/{id}/mpp-receipts',
      tags: ['Employers'],
      summary: 'Receipts of paid calls made on behalf of the employer, newest first, with totals per rail',
      security: [{ bearerAuth: [] }],
      middleware: [deps.requireUser] as const,
      request: { params: EmployerIdParams, query: ReceiptsQuery },
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
