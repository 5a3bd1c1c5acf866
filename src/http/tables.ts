/** Cross-cutting HTTP state shared by every instance: idempotency keys and abuse limits (src/http/rate-limits.ts). Column conventions: src/db/columns.ts. */
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text, varchar } from 'drizzle-orm/pg-core';
import { createdAt, oneOf } from '../db/columns.js';

/** Stored first responses for `Idempotency-Key` (24 h; src/http/idempotency.ts). */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    route: text('route').notNull(),
    requestHash: text('request_hash').notNull(),
    status: text('status', { enum: ['in_progress', 'completed'] }).notNull().default('in_progress'),
    responseStatus: integer('response_status'),
    responseHeaders: jsonb('response_headers').$type<Record<string, string>>(),
    responseBody: text('response_body'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.scope, t.key, t.route] }),
    index('idempotency_keys_created_idx').on(t.createdAt),
    check('idempotency_keys_status', oneOf('status', ['in_progress', 'completed'])),
  ],
);

/**
 * rate-limiter-flexible's PostgreSQL store, created here instead of by the library (it runs with
 * `tableCreated: true`). Its queries insert positionally and read these exact names: keep the
 * columns, their order and their types as RateLimiterPostgres's own CREATE TABLE has them.
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  /** Epoch milliseconds when the window ends; null: never. */
  expire: bigint('expire', { mode: 'number' }),
});
