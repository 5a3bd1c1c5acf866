/** Outgoing email. Column conventions: src/db/columns.ts. */
import { check, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz, oneOf } from '../../db/columns.js';

/** Outgoing email. Local mode stops here (admins read it); live mode sends through SMTP. */
export const emailOutbox = pgTable(
  'email_outbox',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    toAddress: text('to_address').notNull(),
    subject: text('subject').notNull(),
    bodyText: text('body_text').notNull(),
    bodyHtml: text('body_html'),
    /** e.g. `payroll-receipt:<runId>:<employeeId>`: one email per event, whatever the retries. */
    dedupeKey: text('dedupe_key').notNull(),
    status: text('status', { enum: ['queued', 'sent', 'failed'] }).notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    sentAt: tstz('sent_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('email_outbox_dedupe_key').on(t.dedupeKey),
    check('email_outbox_status', oneOf('status', ['queued', 'sent', 'failed'])),
  ],
);
