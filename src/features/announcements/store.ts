import { and, count, desc, eq, gt, inArray, isNotNull, isNull, lte, notExists, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { announcementDismissals, announcements, AUDIENCES } from './tables.js';
import type { AnnouncementState } from './schema.js';

export type AnnouncementRow = typeof announcements.$inferSelect;
export type NewAnnouncement = typeof announcements.$inferInsert;
export type AnnouncementChanges = Partial<Omit<NewAnnouncement, 'id' | 'createdBy' | 'createdAt'>>;
export type Audience = (typeof AUDIENCES)[number];
export type AdminAnnouncementRow = AnnouncementRow & { dismissals: number };

/** Banner order (spec 8.1): error, warning, success, info. */
const SEVERITY_RANK = sql`CASE ${announcements.severity} WHEN 'error' THEN 0 WHEN 'warning' THEN 1 WHEN 'success' THEN 2 ELSE 3 END`;

const published = (now: Date) => and(isNotNull(announcements.publishedAt), lte(announcements.publishedAt, now));
const notExpired = (now: Date) => or(isNull(announcements.expiresAt), gt(announcements.expiresAt, now));

/** The WHERE clause of one state at `now` (the same rules as `stateAt` in the service). */
export function inState(state: AnnouncementState, now: Date): SQL | undefined {
  switch (state) {
    case 'draft':
      return isNull(announcements.publishedAt);
    case 'scheduled':
      return gt(announcements.publishedAt, now);
    case 'active':
      return and(published(now), notExpired(now));
    case 'expired':
      return and(published(now), isNotNull(announcements.expiresAt), lte(announcements.expiresAt, now));
  }
}

const dismissalCount = sql<number>`(SELECT count(*)::int FROM announcement_dismissals d WHERE d.announcement_id = announcements.id)`;

export async function insertAnnouncement(db: Db, values: NewAnnouncement): Promise<AnnouncementRow> {
  const [row] = await db.insert(announcements).values(values).returning();
  if (!row) throw new Error('announcement insert returned nothing');
  return row;
}

/** Locks the row for an edit or a delete (concurrent edits apply one after another). */
export async function findForUpdate(db: Db, id: string): Promise<AnnouncementRow | null> {
  const [row] = await db.select().from(announcements).where(eq(announcements.id, id)).for('update');
  return row ?? null;
}

export async function updateAnnouncement(db: Db, id: string, changes: AnnouncementChanges): Promise<AnnouncementRow> {
  const [row] = await db
    .update(announcements)
    .set({ ...changes, updatedAt: clockNow })
    .where(eq(announcements.id, id))
    .returning();
  if (!row) throw new Error(`announcement ${id} vanished while locked`);
  return row;
}

export async function countDismissals(db: Db, id: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(announcementDismissals).where(eq(announcementDismissals.announcementId, id));
  return row?.n ?? 0;
}

/** Deletes it; its dismissals go with it (ON DELETE CASCADE). */
export async function deleteAnnouncement(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(announcements).where(eq(announcements.id, id)).returning({ id: announcements.id });
  return rows.length > 0;
}

/** Every announcement (optionally of one state), newest created first, with its dismissal count. */
export async function listAnnouncements(
  db: Db,
  options: { offset: number; limit: number; state?: AnnouncementState | undefined; now: Date },
): Promise<{ rows: AdminAnnouncementRow[]; total: number }> {
  const where = options.state ? inState(options.state, options.now) : undefined;
  const [rows, totals] = await Promise.all([
    db
      .select({ announcement: announcements, dismissals: dismissalCount })
      .from(announcements)
      .where(where)
      .orderBy(desc(announcements.createdAt), desc(announcements.id))
      .offset(options.offset)
      .limit(options.limit),
    db.select({ total: count() }).from(announcements).where(where),
  ]);
  return { rows: rows.map((r) => ({ ...r.announcement, dismissals: Number(r.dismissals) })), total: totals[0]?.total ?? 0 };
}

export async function findWithDismissals(db: Db, id: string): Promise<AdminAnnouncementRow | null> {
  const [row] = await db.select({ announcement: announcements, dismissals: dismissalCount }).from(announcements).where(eq(announcements.id, id));
  return row ? { ...row.announcement, dismissals: Number(row.dismissals) } : null;
}

/**
 * The banners of one user: of their audiences, published, not expired, not dismissed by them;
 * error, warning, success, info, then newest published first.
 */
export function activeFor(db: Db, userId: string, audiences: Audience[], now: Date, limit: number): Promise<AnnouncementRow[]> {
  return db
    .select()
    .from(announcements)
    .where(
      and(
        inArray(announcements.audience, audiences),
        published(now),
        notExpired(now),
        notExists(
          db
            .select({ one: sql`1` })
            .from(announcementDismissals)
            .where(and(eq(announcementDismissals.announcementId, announcements.id), eq(announcementDismissals.userId, userId))),
        ),
      ),
    )
    .orderBy(SEVERITY_RANK, desc(announcements.publishedAt), desc(announcements.createdAt), desc(announcements.id))
    .limit(limit);
}

/** An announcement one of these audiences has been shown (published by now, expired or not). */
export async function findPublishedFor(db: Db, id: string, audiences: Audience[], now: Date): Promise<AnnouncementRow | null> {
  const [row] = await db
    .select()
    .from(announcements)
    .where(and(eq(announcements.id, id), inArray(announcements.audience, audiences), published(now)));
  return row ?? null;
}

/** Records a dismissal once; a second one is a no-op (false). */
export async function insertDismissal(db: Db, announcementId: string, userId: string): Promise<boolean> {
  const rows = await db
    .insert(announcementDismissals)
    .values({ announcementId, userId })
    .onConflictDoNothing()
    .returning({ id: announcementDismissals.announcementId });
  return rows.length > 0;
}
