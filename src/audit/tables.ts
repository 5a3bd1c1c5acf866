/** The audit log. Column conventions: src/db/columns.ts. */
import { check, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, oneOf, employerReference } from '../db/columns.js';

export const auditLog = pgTable(
  'audit_log',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    actorUserId: text('actor_user_id'),
    actorKind: text('actor_kind', { enum: ['user', 'admin', 'agent', 'system'] }).notNull(),
    action: text('action').notNull(),
    employerId: employerReference(),
    targetType: text('target_type'),
    targetId: text('target_id'),
    details: jsonb('details').notNull().default({}),
    requestId: text('request_id'),
    createdAt: createdAt(),
  },
  (t) => [
    index('audit_log_employer_idx').on(t.employerId, t.createdAt),
    index('audit_log_created_idx').on(t.createdAt),
    check('audit_log_actor_kind', oneOf('actor_kind', ['user', 'admin', 'agent', 'system'])),
  ],
);
