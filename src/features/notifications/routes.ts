import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest } from '../../errors.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { EmployerIdParams } from '../employers/index.js';
import { CursorId, ListQuery, ListResponse, ReadBody, ReadResponse } from './schema.js';
import type { NotificationsService } from './service.js';
import type { NotificationRow } from './store.js';

// Both routes take `requireUser` as their middleware, added where they are mounted.
const listNotifications = createRoute({
  method: 'get',
  path: '/api/employers/{id}/notifications',
  tags: ['Notifications'],
  summary: "The employer's notifications (payroll, escrow, KYC, agent spikes), newest first, with the unread count",
  security: [{ bearerAuth: [] }],
  request: { params: EmployerIdParams, query: ListQuery },
  responses: { 200: jsonContent(ListResponse, 'One page of notifications.'), ...errorResponses(400, 401, 404) },
});

const markRead = createRoute({
  method: 'post',
  path: '/api/employers/{id}/notifications/read',
  tags: ['Notifications'],
  summary: 'Mark notifications read: the listed ids, or all',
  security: [{ bearerAuth: [] }],
  request: { params: EmployerIdParams, body: jsonBody(ReadBody) },
  responses: { 200: jsonContent(ReadResponse, 'How many changed, and what is left unread. Idempotent.'), ...errorResponses(400, 401, 404, 415) },
});

/** Cursor: the last row's created_at and id, base64url-encoded (opaque to clients). */
const encodeCursor = (row: NotificationRow) => Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(at ?? '');
  if (Number.isNaN(createdAt.getTime()) || !CursorId.safeParse(id).success) throw badRequest('cursor', 'is not a cursor this route gave out');
  return { createdAt, id: id! };
}

const present = (row: NotificationRow) => ({
  id: row.id,
  type: row.type,
  severity: row.severity,
  title: row.title,
  body: row.body,
  link: row.linkUrl,
  data: row.data as Record<string, unknown>,
  read: row.readAt !== null,
  created_at: row.createdAt.toISOString(),
});

const list =
  (notifications: NotificationsService): RouteHandler<typeof listNotifications, AppEnv> =>
  async (c) => {
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const before = query.cursor ? decodeCursor(query.cursor) : null;
    const { rows, unread } = await notifications.list(c.var.caller, id, { unreadOnly: query.unread === 'true', limit: query.limit, before });
    const last = rows.length === query.limit ? rows.at(-1) : undefined;
    return c.json({ notifications: rows.map(present), unread_count: unread, next_cursor: last ? encodeCursor(last) : null }, 200);
  };

const read =
  (notifications: NotificationsService): RouteHandler<typeof markRead, AppEnv> =>
  async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const result = await notifications.markRead(c.var.caller, id, body.all ? 'all' : body.ids!);
    return c.json({ updated: result.updated, unread_count: result.unread }, 200);
  };

/** The employer's dashboard bell (spec 6): list, newest first, and mark read. */
export function notificationRoutes(deps: { notifications: NotificationsService; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  const middleware = [deps.requireUser];
  app.openapi({ ...listNotifications, middleware }, list(deps.notifications));
  app.openapi({ ...markRead, middleware }, read(deps.notifications));
  return app;
}
