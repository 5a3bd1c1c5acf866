/**
 * Keyset pages of a feed merged from several sources (the portal's activity feed): each source
 * pages its own table in SQL, the feed merges them in JavaScript. Both sort by the same key.
 */
import { sql, type SQL } from 'drizzle-orm';

/** A feed position: `at` is the time in whole milliseconds; `type` names the source. */
export interface FeedPosition<T extends string = string> {
  at: number;
  type: T;
  id: string;
}

/** One card of a feed before presentation. */
export interface FeedRow<T extends string = string> extends FeedPosition<T> {
  amount: bigint;
  details: Record<string, unknown>;
}

/**
 * Cards sort by (time, type, id) descending. Each source's time is truncated to milliseconds in
 * SQL, so the cursor (which carries milliseconds) compares exactly; ids compare bytewise (C
 * collation), as JavaScript compares them.
 */
const millis = (time: SQL) => sql<string>`(extract(epoch from date_trunc('milliseconds', ${time})) * 1000)::bigint`;

/** One source's sort key (`at`), the condition for rows after `before` in feed order, and its ORDER BY. */
export function feedSourceQuery(type: string, time: SQL, id: SQL, before: FeedPosition | null) {
  const at = millis(time);
  const idC = sql`(${id}) COLLATE "C"`;
  let after: SQL | undefined;
  if (before) {
    const ms = before.at;
    if (type > before.type) after = sql`${at} < ${ms}`;
    else if (type < before.type) after = sql`${at} <= ${ms}`;
    else after = sql`(${at} < ${ms} OR (${at} = ${ms} AND ${idC} < ${before.id}))`;
  }
  return { at, after, order: [sql`${at} DESC`, sql`${idC} DESC`] };
}

/** A source's selected row (`at` as SQL returns the bigint) as a card of this type. */
export const toFeedRow =
  <T extends string>(type: T) =>
  (row: { id: string; at: string; amount: bigint | null; details: Record<string, unknown> }): FeedRow<T> => ({
    type,
    id: row.id,
    at: Number(row.at),
    amount: row.amount ?? 0n,
    details: row.details,
  });

/** Descending (time, type, id): the feed's order, as the SQL above pages it. */
export function compareFeed(a: FeedPosition, b: FeedPosition): number {
  if (a.at !== b.at) return b.at - a.at;
  if (a.type !== b.type) return a.type < b.type ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}
