/**
 * The activity feed's merge. Each source's table belongs to its feature, whose store pages it
 * (src/db/keyset.ts: one sort key for all); this store only merges their pages.
 */
import type { Db } from '../../db/client.js';
import { compareFeed, type FeedPosition, type FeedRow } from '../../db/keyset.js';
import { offrampFeed } from '../bridge/index.js';
import { payrollPaymentFeed } from '../payroll/index.js';
import { virtualInflowFeed } from '../virtual-addresses/index.js';
import { claimedAdvanceFeed } from '../wages/index.js';

/** Card types, in the order that breaks a tie on time (descending: virtual_inflow first). */
export const ACTIVITY_TYPES = ['advance', 'offramp', 'payroll_payment', 'virtual_inflow'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** One card before presentation: `at` is its time in whole milliseconds (the sort key). */
export type ActivityRow = FeedRow<ActivityType>;

/** Keyset position: the last card of the previous page. */
export type ActivityPosition = FeedPosition<ActivityType>;

const SOURCES = [payrollPaymentFeed, claimedAdvanceFeed, offrampFeed, virtualInflowFeed];

/** The newest `limit` cards of these employees older than `before`, and whether more follow. */
export async function listActivity(
  db: Db,
  employeeIds: string[],
  options: { before: ActivityPosition | null; limit: number },
): Promise<{ rows: ActivityRow[]; more: boolean }> {
  const take = options.limit + 1;
  const sources = await Promise.all(SOURCES.map((source) => source(db, employeeIds, options.before, take)));
  const merged = sources.flat().sort(compareFeed);
  return { rows: merged.slice(0, options.limit), more: merged.length > options.limit };
}
