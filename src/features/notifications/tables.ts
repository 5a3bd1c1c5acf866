/** Notifications (the dashboard bell). Column conventions: src/db/columns.ts. */
import { check, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz, oneOf } from '../../db/columns.js';
import { employers } from '../employers/tables.js';

export const SEVERITIES = ['info', 'success', 'warning', 'error'] as const;

/** The employer's dashboard bell (spec 6). */
export const notifications = pgTable(
  'notifications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    type: text('type').notNull(),
    severity: text('severity', { enum: SEVERITIES }).notNull(),
    title: text('title').notNull(),
    body: text('body'),
    linkUrl: text('link_url'),
    data: jsonb('data').notNull().default({}),
    /** Makes an event notify once even when its job retries. */
    dedupeKey: text('dedupe_key'),
    readAt: tstz('read_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('notifications_employer_idx').on(t.employerId, t.createdAt),
    uniqueIndex('notifications_dedupe_key').on(t.dedupeKey),
    check('notifications_severity', oneOf('severity', SEVERITIES)),
  ],
);
