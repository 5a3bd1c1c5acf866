import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { and, eq, sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { clockNow } from '../db/columns.js';
import { idempotencyKeys } from './tables.js';
import type { AppEnv } from './context.js';
import { AppError, badRequest } from '../errors.js';
import { errorResponse } from './errors.js';

export const IDEMPOTENCY_TTL_HOURS = 24;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// Headers a replay must not repeat: they belong to the request that is answering now.
const NOT_REPLAYED = new Set(['x-request-id', 'date', 'set-cookie', 'content-length']);

export interface IdempotencyOptions {
  /** Whose key space this is; defaults to the signed-in user. */
  scope?: (c: Context<AppEnv>) => string;
}

/**
 * `Idempotency-Key` for a mutating route (opt-in, after authentication). The first response is
 * stored per (caller, key, method and path) for 24 h and replayed to every retry with
 * `Idempotent-Replayed: true`. The same key with a different request is 422; a retry while the
 * first is still running is 409. A 5xx or a thrown error is not stored, so the caller may retry.
 */
export function idempotency(database: Database, options: IdempotencyOptions = {}): MiddlewareHandler<AppEnv> {
  const scopeOf = options.scope ?? ((c: Context<AppEnv>) => `user:${c.var.caller.userId}`);
  return async (c, next) => {
    const key = c.req.header('idempotency-key');
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      return errorResponse(c, badRequest('Idempotency-Key', 'must be 1-255 printable ASCII characters'));
    }
    const id = { scope: scopeOf(c), key, route: `${c.req.method} ${c.req.path}` };
    const requestHash = createHash('sha256')
      .update(`${c.req.method}\n${c.req.url}\n`)
      .update(await c.req.text())
      .digest('hex');

    const claimed = await claim(database.db, id, requestHash);
    if (!claimed.won) {
      const prior = claimed.row;
      if (prior.requestHash !== requestHash) {
        return errorResponse(
          c,
          new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request.'),
        );
      }
      if (prior.status !== 'completed' || prior.responseStatus === null) {
        return errorResponse(
          c,
          new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress.'),
        );
      }
      const headers = new Headers(prior.responseHeaders ?? {});
      headers.set('Idempotent-Replayed', 'true');
      // A 204 or 304 must be replayed without a body (Response refuses one).
      const body = prior.responseStatus === 204 || prior.responseStatus === 304 ? null : prior.responseBody;
      return new Response(body, { status: prior.responseStatus, headers });
    }

    try {
      await next();
    } catch (error) {
      await release(database.db, id);
      throw error;
    }
    // A 5xx from a handler may reach us as a response (onError already ran): free the key too.
    if (c.res.status >= 500) {
      await release(database.db, id);
      return;
    }
    const body = await c.res.clone().text();
    const headers: Record<string, string> = {};
    c.res.headers.forEach((value, name) => {
      if (!NOT_REPLAYED.has(name)) headers[name] = value;
    });
    await database.db
      .update(idempotencyKeys)
      .set({ status: 'completed', responseStatus: c.res.status, responseHeaders: headers, responseBody: body })
      .where(keyMatches(id));
  };
}

type KeyId = { scope: string; key: string; route: string };
type KeyRow = typeof idempotencyKeys.$inferSelect;

const expired = sql`${idempotencyKeys.createdAt} < ${clockNow} - ${sql.raw(`interval '${IDEMPOTENCY_TTL_HOURS} hours'`)}`;
const keyMatches = (id: KeyId) =>
  and(eq(idempotencyKeys.scope, id.scope), eq(idempotencyKeys.key, id.key), eq(idempotencyKeys.route, id.route));

/** Inserts the key, or returns the live row that holds it. An expired holder is replaced. */
async function claim(db: Db, id: KeyId, requestHash: string): Promise<{ won: true } | { won: false; row: KeyRow }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insert(idempotencyKeys)
      .values({ ...id, requestHash })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length > 0) return { won: true };
    const [found] = await db
      .select({ row: idempotencyKeys, expired: sql<boolean>`${expired}` })
      .from(idempotencyKeys)
      .where(keyMatches(id));
    if (!found) continue; // released in between: try again
    if (!found.expired) return { won: false, row: found.row };
    // Past its 24 h: remove it only if it is still expired (compare-and-set), then claim again.
    await db.delete(idempotencyKeys).where(and(keyMatches(id), expired));
  }
  throw new Error('could not claim idempotency key');
}

async function release(db: Db, id: KeyId) {
  await db.delete(idempotencyKeys).where(and(keyMatches(id), eq(idempotencyKeys.status, 'in_progress')));
}

/** Deletes stored responses older than the TTL; run hourly by a job. Returns how many went. */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(expired)
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}
