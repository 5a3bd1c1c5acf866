/** OAuth 2.1 for MCP (spec 4.7, 5.5). Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz } from '../../db/columns.js';
import { users } from '../users/tables.js';

export const oauthClients = pgTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  clientName: text('client_name'),
  redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
  createdAt: createdAt(),
});

/** Authorization codes, stored hashed and single-use; a second use revokes what the first issued. */
export const oauthCodes = pgTable(
  'oauth_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.clientId),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    scope: text('scope').notNull(),
    resource: text('resource'),
    /** The refresh-token family the code's exchange created (revoked on code reuse). */
    familyId: uuid('family_id'),
    expiresAt: tstz('expires_at').notNull(),
    usedAt: tstz('used_at'),
    createdAt: createdAt(),
  },
  (t) => [index('oauth_codes_expires_idx').on(t.expiresAt)],
);

/** Opaque refresh tokens, stored hashed, rotated on use; reuse revokes the whole family. */
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    familyId: uuid('family_id').notNull(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.clientId),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    scope: text('scope').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    revokedAt: tstz('revoked_at'),
    replacedBy: uuid('replaced_by'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oauth_refresh_tokens_hash_key').on(t.tokenHash),
    index('oauth_refresh_tokens_family_idx').on(t.familyId),
    // A family's one live token: what /api/mcp looks up per request to know the grant stands.
    uniqueIndex('oauth_refresh_tokens_live_family_key')
      .on(t.familyId)
      .where(sql`revoked_at IS NULL`),
  ],
);
