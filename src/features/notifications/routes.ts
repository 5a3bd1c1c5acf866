import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { SEVERITIES } from './tables.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest } from '../../errors.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { EmployerIdParams } from '../employers/schema.js';
import type { NotificationsService } from './service.js';
import type { NotificationRow } from './store.js';

const ListQuery = z.object({
  unread: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ param: { name: 'unread', in: 'query' }, description: '`true`: unread notifications only.' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ param: { name: 'limit', in: 'query' } }),
  cursor: z.string().max(200).optional().openapi({ param: { name: 'cursor', in: 'query' }, description: '`next_cursor` of the previous page.' }),
});
const Notification = z
  .object({
    id: z.uuid(),
    type: z.string().openapi({ example: 'payroll_confirmed' }),
    severity: z.enum(SEVERITIES),
    title: z.string(),
    body: z.string().nullable(),
    link: z.string().nullable().openapi({ description: 'Dashboard path the notification opens.', example: '/dashboard/payroll/5b0c...' }),
    data: z.record(z.string(), z.unknown()),
    read: z.boolean(),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Notification');
const ListResponse = z
  .object({
    notifications: z.array(Notification),
    unread_count: z.number().int(),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for older notifications; null on the last page.' }),
  })
  .openapi('Notifications');
const ReadBody = z
  .object({
    ids: z.array(z.uuid()).min(1).max(100).optional().openapi({ description: 'Notifications to mark read.' }),
    all: z.literal(true).optional().openapi({ description: 'Mark every notification read.' }),
  })
  .refine((body) => (body.ids === undefined) !== (body.all === undefined), { message: 'send either ids or all: true', path: ['ids'] });
const ReadResponse = z.object({ updated: z.number().int(), unread_count: z.number().int() }).openapi('NotificationsRead');

/** Cursor: the last row's created_at and id, base64url-encoded (opaque to clients). */
const encodeCursor = (row: NotificationRow) => Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(at ?? '');
  if (Number.isNaN(createdAt.getTime()) || !z.uuid().safeParse(id).success) throw badRequest('cursor', 'is not a cursor this route gave out');
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

/** The employer's dashboard bell (spec 6): list, newest first, and mark read. */
export function notificationRoutes(deps: { notifications: NotificationsService; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/employers/{id}/notifications',
      tags: ['Notifications'],
      summary: "The employer's notifications (payroll, escrow, KYC, agent spikes), newest first, with the unread count",
      security: [{ bearerAuth: [] }],
      middleware: [deps.requireUser] as const,
      request: { params: EmployerIdParams, query: ListQuery },
      responses: { 200: jsonContent(ListResponse, 'One page of notifications.'), ...errorResponses(400, 401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const query = c.req.valid('query');
      const before = query.cursor ? decodeCursor(query.cursor) : null;
      const { rows, unread } = await deps.notifications.list(c.var.caller, id, { unreadOnly: query.unread === 'true', limit: query.limit, before });
      const last = rows.length === query.limit ? rows.at(-1) : undefined;
      return c.json({ notifications: rows.map(present), unread_count: unread, next_cursor: last ? encodeCursor(last) : null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/employers/{id}/notifications/read',
      tags: ['Notifications'],
      summary: 'Mark notifications read: the listed ids, or all',
      security: [{ bearerAuth: [] }],
      middleware: [deps.requireUser] as const,
      request: { params: EmployerIdParams, body: jsonBody(ReadBody) },
      responses: { 200: jsonContent(ReadResponse, 'How many changed, and what is left unread. Idempotent.'), ...errorResponses(400, 401, 404, 415) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      const result = await deps.notifications.markRead(c.var.caller, id, body.all ? 'all' : body.ids!);
      return c.json({ updated: result.updated, unread_count: result.unread }, 200);
    },
  );
  return app;
}
