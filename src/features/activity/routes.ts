import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Database } from '../../db/client.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest, notFound } from '../../errors.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import { ACTIVITY_TYPES, listActivity, type ActivityPosition, type ActivityRow } from './store.js';

const ActivityQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).openapi({ param: { name: 'limit', in: 'query' }, description: 'Cards per page (default 50, at most 200).' }),
  before: z
    .string()
    .max(300)
    .optional()
    .openapi({ param: { name: 'before', in: 'query' }, description: '`next_cursor` of the previous page: the cards older than it.' }),
  employeeId: z.uuid().optional().openapi({
    param: { name: 'employeeId', in: 'query' },
    description: 'Only this one of your employee records; default: all of them (every employer you work for).',
  }),
});
const ActivityCard = z
  .object({
    type: z.enum(ACTIVITY_TYPES).openapi({ description: '`virtual_inflow`: a transfer to your virtual deposit address, indexed from the chain.' }),
    id: z.string().openapi({ description: 'The source record id; for `virtual_inflow`, `<tx_hash>:<log_index>`.' }),
    amount: z.string().openapi({ description: 'USD decimal.', example: '250.000000' }),
    amount_base_units: z.string().openapi({ description: 'Integer base units (6 decimals).', example: '250000000' }),
    occurred_at: z.string().openapi({ format: 'date-time' }),
    details: z.record(z.string(), z.unknown()).openapi({
      description:
        'Per type; all carry `direction` (`in` or `out`) and `employee_id`. payroll_payment: employer_id, run_id, status, chain, wallet_address, tx_hash, block_number, memo, reason. ' +
        'advance: status, tx_hash. offramp: employer_id, status, destination_type, bridge_transfer_id, failure_reason. ' +
        'virtual_inflow: employer_id, tx_hash, log_index, token_address, virtual_address, sender_address, block_number.',
    }),
  })
  .openapi('ActivityCard');
const ActivityPage = z
  .object({
    activity: z.array(ActivityCard),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `before` for older cards; null on the last page.' }),
  })
  .openapi('ActivityPage');

/** Cursor: the last card's time (ms), type and id, base64url-encoded (opaque to clients). */
const encodeCursor = (row: ActivityPosition) => Buffer.from(`${row.at}|${row.type}|${row.id}`).toString('base64url');
function decodeCursor(cursor: string): ActivityPosition {
  const [at, type, ...id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const position = { at: Number(at), type: type as ActivityPosition['type'], id: id.join('|') };
  if (!/^\d{1,15}$/.test(at ?? '') || !ACTIVITY_TYPES.includes(position.type) || !/^[0-9a-fx:-]{1,80}$/.test(position.id)) {
    throw badRequest('before', 'is not a cursor this route gave out');
  }
  return position;
}

const present = (row: ActivityRow) => ({
  type: row.type,
  id: row.id,
  amount: formatUsd(row.amount),
  amount_base_units: row.amount.toString(),
  occurred_at: new Date(row.at).toISOString(),
  details: row.details,
});

/**
 * `GET /api/portal/activity` (the portal's `/portal/activity` page, spec 4.9 and 6): the signed-in
 * employee's cards, newest first, merged from payroll payments, wage advances, off-ramps and
 * virtual-address inflows. Only the caller's own employee records count.
 */
export function activityRoutes(deps: { database: Database; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/portal/activity',
      tags: ['Portal'],
      summary: "The employee's activity cards (payroll payments, advances, off-ramps, virtual_inflow), newest first",
      security: [{ bearerAuth: [] }],
      middleware: deps.requireUser,
      request: { query: ActivityQuery },
      responses: { 200: jsonContent(ActivityPage, 'One page of cards.'), ...errorResponses(400, 401, 404) },
    }),
    async (c) => {
      const { employeeIds } = c.var.caller;
      const query = c.req.valid('query');
      if (employeeIds.length === 0) throw notFound('Employee');
      if (query.employeeId && !employeeIds.includes(query.employeeId)) throw notFound('Employee');
      const { rows, more } = await listActivity(deps.database.db, query.employeeId ? [query.employeeId] : employeeIds, {
        before: query.before ? decodeCursor(query.before) : null,
        limit: query.limit,
      });
      const last = more ? rows.at(-1) : undefined;
      return c.json({ activity: rows.map(present), next_cursor: last ? encodeCursor(last) : null }, 200, { 'Cache-Control': 'no-store' });
    },
  );
  return app;
}
