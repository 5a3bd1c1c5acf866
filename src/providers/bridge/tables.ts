/** Local mode's fiat bridge sandbox. Column conventions: src/db/columns.ts. */
import { check, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt, oneOf } from '../../db/columns.js';

/**
 * Local mode's fiat bridge (the stand-in for the bridge provider's API): customers, bank accounts,
 * transfers and cards it has created, so their states move on across restarts.
 */
export const bridgeSandboxObjects = pgTable(
  'bridge_sandbox_objects',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['customer', 'external_account', 'transfer', 'card'] }).notNull(),
    /** The provider's idempotency key of the create call that made it: a retry returns the same object. */
    idempotencyKey: text('idempotency_key'),
    data: jsonb('data').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('bridge_sandbox_objects_idempotency_key').on(t.kind, t.idempotencyKey),
    check('bridge_sandbox_objects_kind', oneOf('kind', ['customer', 'external_account', 'transfer', 'card'])),
  ],
);
