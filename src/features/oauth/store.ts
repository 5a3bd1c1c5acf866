import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { oauthClients, oauthCodes, oauthRefreshTokens } from './tables.js';

export type ClientRow = typeof oauthClients.$inferSelect;
export type CodeRow = typeof oauthCodes.$inferSelect;
export type NewCode = typeof oauthCodes.$inferInsert;
export type RefreshTokenRow = typeof oauthRefreshTokens.$inferSelect;
export type NewRefreshToken = typeof oauthRefreshTokens.$inferInsert;

// ---- clients -------------------------------------------------------------------------------------

export async function insertClient(db: Db, values: typeof oauthClients.$inferInsert): Promise<ClientRow> {
  const [row] = await db.insert(oauthClients).values(values).returning();
  return row!;
}

export async function findClient(db: Db, clientId: string): Promise<ClientRow | null> {
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
  return row ?? null;
}

// ---- authorization codes ------------------------------------------------------------------------

export async function insertCode(db: Db, values: NewCode): Promise<void> {
  await db.insert(oauthCodes).values(values);
}

/** Holds the code's row for the rest of the transaction: concurrent exchanges of one code queue here. */
export async function lockCode(db: Db, codeHash: string): Promise<CodeRow | null> {
  const [row] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash)).for('update');
  return row ?? null;
}

/** unused -> used (compare-and-set), recording the refresh-token family the exchange creates. */
export async function markCodeUsed(db: Db, codeHash: string, familyId: string): Promise<CodeRow | null> {
  const [row] = await db
    .update(oauthCodes)
    .set({ usedAt: clockNow, familyId })
    .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt)))
    .returning();
  return row ?? null;
}

// ---- refresh tokens -----------------------------------------------------------------------------

export async function insertRefreshToken(db: Db, values: NewRefreshToken): Promise<RefreshTokenRow> {
  const [row] = await db.insert(oauthRefreshTokens).values(values).returning();
  return row!;
}

/** Holds the token's row for the rest of the transaction: concurrent refreshes of one token queue here. */
export async function lockRefreshToken(db: Db, tokenHash: string): Promise<RefreshTokenRow | null> {
  const [row] = await db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, tokenHash)).for('update');
  return row ?? null;
}

/** active -> rotated (compare-and-set on `revoked_at`); null when it was no longer active. */
export async function rotateRefreshToken(db: Db, id: string, replacedBy: string): Promise<RefreshTokenRow | null> {
  const [row] = await db
    .update(oauthRefreshTokens)
    .set({ revokedAt: clockNow, replacedBy })
    .where(and(eq(oauthRefreshTokens.id, id), isNull(oauthRefreshTokens.revokedAt)))
    .returning();
  return row ?? null;
}

/** Revokes every still-active token of a family; the number revoked. */
export async function revokeFamily(db: Db, familyId: string): Promise<number> {
  const rows = await db
    .update(oauthRefreshTokens)
    .set({ revokedAt: clockNow })
    .where(and(eq(oauthRefreshTokens.familyId, familyId), isNull(oauthRefreshTokens.revokedAt)))
    .returning({ id: oauthRefreshTokens.id });
  return rows.length;
}

/**
 * Whether the family still holds its live refresh token: a rotation replaces it in the same
 * transaction, a revocation ends it. One row of a unique partial index (at most one per family).
 */
export async function familyIsLive(db: Db, familyId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: oauthRefreshTokens.id })
    .from(oauthRefreshTokens)
    .where(and(eq(oauthRefreshTokens.familyId, familyId), isNull(oauthRefreshTokens.revokedAt)))
    .limit(1);
  return row !== undefined;
}
