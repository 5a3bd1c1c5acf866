/** Announcements and their dismissals. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { check, index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt, tstz, oneOf, clockNow } from '../../db/columns.js';
import { SEVERITIES } from '../notifications/tables.js';
import { users } from '../users/tables.js';

export const AUDIENCES = ['all', 'employers', 'employees', 'admins'] as const;
export const announcements = pgTable(
  'announcements',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    severity: text('severity', { enum: SEVERITIES }).notNull().default('info'),
    audience: text('audience', { enum: AUDIENCES }).notNull().default('all'),
    publishedAt: tstz('published_at'),
    expiresAt: tstz('expires_at'),
    linkUrl: text('link_url'),
    linkLabel: text('link_label'),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('announcements_published_idx').on(t.publishedAt),
    check('announcements_title_length', sql`char_length(${t.title}) BETWEEN 1 AND 120`),
    check('announcements_body_length', sql`char_length(${t.body}) BETWEEN 1 AND 600`),
    check('announcements_severity', oneOf('severity', SEVERITIES)),
    check('announcements_audience', oneOf('audience', AUDIENCES)),
  ],
);

export const announcementDismissals = pgTable(
  'announcement_dismissals',
  {
    announcementId: uuid('announcement_id')
      .notNull()
      .references(() => announcements.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    dismissedAt: tstz('dismissed_at').notNull().default(clockNow),
  },
  (t) => [primaryKey({ columns: [t.announcementId, t.userId] })],
);
