import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest, notFound } from '../../errors.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import { ActivityPage, ActivityQuery } from './schema.js';
import type { ActivityService } from './service.js';
import { ACTIVITY_TYPES, type ActivityPosition, type ActivityRow } from './store.js';

/** Its middleware (`requireUser`) is added where the route is mounted. */
const listActivity = createRoute({
  method: 'get',
  path: '/api/portal/activity',
  tags: ['Portal'],
  summary: "The employee's activity cards (payroll payments, advances, off-ramps, virtual_inflow), newest first",
  security: [{ bearerAuth: [] }],
  request: { query: ActivityQuery },
  responses: { 200: jsonContent(ActivityPage, 'One page of cards.'), ...errorResponses(400, 401, 404) },
});

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

const list =
  (activity: ActivityService): RouteHandler<typeof listActivity, AppEnv> =>
  async (c) => {
    const { employeeIds } = c.var.caller;
    const query = c.req.valid('query');
    if (employeeIds.length === 0) throw notFound('Employee');
    if (query.employeeId && !employeeIds.includes(query.employeeId)) throw notFound('Employee');
    const { rows, more } = await activity.list(query.employeeId ? [query.employeeId] : employeeIds, {
      before: query.before ? decodeCursor(query.before) : null,
      limit: query.limit,
    });
    const last = more ? rows.at(-1) : undefined;
    return c.json({ activity: rows.map(present), next_cursor: last ? encodeCursor(last) : null }, 200, { 'Cache-Control': 'no-store' });
  };

/**
 * `GET /api/portal/activity` (the portal's `/portal/activity` page, spec 4.9 and 6): the signed-in
 * employee's cards, newest first, merged from payroll payments, wage advances, off-ramps and
 * virtual-address inflows. Only the caller's own employee records count.
 */
export function activityRoutes(deps: { activity: ActivityService; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi({ ...listActivity, middleware: deps.requireUser }, list(deps.activity));
  return app;
}
