import { z } from '@hono/zod-openapi';
import { SEVERITIES } from './tables.js';

export const ListQuery = z.object({
  unread: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ param: { name: 'unread', in: 'query' }, description: '`true`: unread notifications only.' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ param: { name: 'limit', in: 'query' } }),
  cursor: z.string().max(200).optional().openapi({ param: { name: 'cursor', in: 'query' }, description: '`next_cursor` of the previous page.' }),
});
export const Notification = z
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
export const ListResponse = z
  .object({
    notifications: z.array(Notification),
    unread_count: z.number().int(),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for older notifications; null on the last page.' }),
  })
  .openapi('Notifications');
export const ReadBody = z
  .object({
    ids: z.array(z.uuid()).min(1).max(100).optional().openapi({ description: 'Notifications to mark read.' }),
    all: z.literal(true).optional().openapi({ description: 'Mark every notification read.' }),
  })
  .refine((body) => (body.ids === undefined) !== (body.all === undefined), { message: 'send either ids or all: true', path: ['ids'] });
export const ReadResponse = z.object({ updated: z.number().int(), unread_count: z.number().int() }).openapi('NotificationsRead');

/** The id half of a list cursor. */
export const CursorId = z.uuid();
