import { and, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { notifications } from './tables.js';

export type NotificationRow = typeof notifications.$inferSelect;
export type NewNotification = typeof notifications.$inferInsert;

/** Records a notification once: a second insert with the same dedupe key is a no-op (false). */
export async function insertNotification(db: Db, values: NewNotification): Promise<boolean> {
  const rows = await db.insert(notifications).values(values).onConflictDoNothing().returning({ id: notifications.id });
  return rows.length > 0;
}

/** Newest first; `before` is the keyset cursor (created_at, id) of the last row of the previous page. */
export async function listNotifications(
  db: Db,
  employerId: string,
  options: { unreadOnly: boolean; limit: number; before: { createdAt: Date; id: string } | null },
): Promise<NotificationRow[]> {
  const { before } = options;
  return db
    .select()
    .from(notifications)
    .where(
      and(
        eq(notifications.employerId, employerId),
        options.unreadOnly ? isNull(notifications.readAt) : undefined,
        before
          ? or(lt(notifications.createdAt, before.createdAt), and(eq(notifications.createdAt, before.createdAt), lt(notifications.id, before.id)))
          : undefined,
      ),
    )
    .orderBy(desc(notifications.createdAt), desc(notifications.id))
    .limit(options.limit);
}

export async function countUnread(db: Db, employerId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(notifications)
    .where(and(eq(notifications.employerId, employerId), isNull(notifications.readAt)));
  return row?.n ?? 0;
}

/** Marks the employer's unread notifications read (those of `ids`, or all); answers how many changed. */
export async function markRead(db: Db, employerId: string, ids: string[] | 'all'): Promise<number> {
  const rows = await db
    .update(notifications)
    .set({ readAt: clockNow })
    .where(and(eq(notifications.employerId, employerId), isNull(notifications.readAt), ids === 'all' ? undefined : inArray(notifications.id, ids)))
    .returning({ id: notifications.id });
  return rows.length;
}
