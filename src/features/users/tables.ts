/** Identity: the users the identity provider knows. Column conventions: src/db/columns.ts. */
import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, tstz, clockNow } from '../../db/columns.js';

/** A person known to the identity provider. `id` is the provider's `sub` claim. */
export const users = pgTable('users', {
  id: text('id').primaryKey(),
  email: text('email'),
  emailVerified: boolean('email_verified').notNull().default(false),
  displayName: text('display_name'),
  createdAt: createdAt(),
  lastSeenAt: tstz('last_seen_at').notNull().default(clockNow),
});
