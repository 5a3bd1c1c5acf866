import { and, eq, inArray, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { offrampTransfers } from '../bridge/tables.js';
import { paymentItems } from '../payroll/tables.js';
import { virtualAddressInflows } from '../virtual-addresses/tables.js';
import { advances } from '../wages/tables.js';

/** Card types, in the order that breaks a tie on time (descending: virtual_inflow first). */
export const ACTIVITY_TYPES = ['advance', 'offramp', 'payroll_payment', 'virtual_inflow'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** One card before presentation: `at` is its time in whole milliseconds (the sort key). */
export interface ActivityRow {
  type: ActivityType;
  id: string;
  at: number;
  amount: bigint;
  details: Record<string, unknown>;
}

/** Keyset position: the last card of the previous page. */
export interface ActivityPosition {
  at: number;
  type: ActivityType;
  id: string;
}

/**
 * Cards sort by (time, type, id) descending. Each source's time is truncated to milliseconds in
 * SQL, so the cursor (which carries milliseconds) compares exactly; ids compare bytewise (C
 * collation), as JavaScript compares them.
 */
const millis = (time: SQL) => sql<string>`(extract(epoch from date_trunc('milliseconds', ${time})) * 1000)::bigint`;

function sourceQuery(type: ActivityType, time: SQL, id: SQL, before: ActivityPosition | null) {
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

const toRow = (type: ActivityType) => (row: { id: string; at: string; amount: bigint | null; details: Record<string, unknown> }): ActivityRow => ({
  type,
  id: row.id,
  at: Number(row.at),
  amount: row.amount ?? 0n,
  details: row.details,
});

/** Payroll payments to these employees (drafts excluded): at finalisation, else creation. */
export async function payrollPayments(db: Db, employeeIds: string[], before: ActivityPosition | null, limit: number): Promise<ActivityRow[]> {
  const q = sourceQuery('payroll_payment', sql`coalesce(${paymentItems.finalizedAt}, ${paymentItems.createdAt})`, sql`${paymentItems.id}::text`, before);
  const rows = await db
    .select({ id: sql<string>`${paymentItems.id}::text`, at: q.at, amount: paymentItems.amount, item: paymentItems })
    .from(paymentItems)
    .where(and(inArray(paymentItems.employeeId, employeeIds), ne(paymentItems.status, 'pending'), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ item, ...row }) =>
    toRow('payroll_payment')({
      ...row,
      details: {
        direction: 'in',
        employee_id: item.employeeId,
        employer_id: item.employerId,
        run_id: item.runId,
        status: item.status,
        chain: item.chain,
        wallet_address: item.walletAddress,
        tx_hash: item.txHash,
        block_number: item.blockNumber?.toString() ?? null,
        memo: item.memo,
        reason: item.reason,
      },
    }),
  );
}

/** Claimed wage advances (the ones that moved money): at the claim. */
export async function claimedAdvances(db: Db, employeeIds: string[], before: ActivityPosition | null, limit: number): Promise<ActivityRow[]> {
  const q = sourceQuery('advance', sql`coalesce(${advances.claimedAt}, ${advances.createdAt})`, sql`${advances.id}::text`, before);
  const rows = await db
    .select({ id: sql<string>`${advances.id}::text`, at: q.at, amount: advances.amount, advance: advances })
    .from(advances)
    .where(and(inArray(advances.employeeId, employeeIds), eq(advances.status, 'claimed'), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ advance, ...row }) =>
    toRow('advance')({ ...row, details: { direction: 'in', employee_id: advance.employeeId, status: advance.status, tx_hash: advance.txHash } }),
  );
}

/** Off-ramps to a bank account, whatever their state: at creation. */
export async function offramps(db: Db, employeeIds: string[], before: ActivityPosition | null, limit: number): Promise<ActivityRow[]> {
  const q = sourceQuery('offramp', sql`${offrampTransfers.createdAt}`, sql`${offrampTransfers.id}::text`, before);
  const rows = await db
    .select({ id: sql<string>`${offrampTransfers.id}::text`, at: q.at, amount: offrampTransfers.amount, transfer: offrampTransfers })
    .from(offrampTransfers)
    .where(and(inArray(offrampTransfers.employeeId, employeeIds), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ transfer, ...row }) =>
    toRow('offramp')({
      ...row,
      details: {
        direction: 'out',
        employee_id: transfer.employeeId,
        employer_id: transfer.employerId,
        status: transfer.status,
        destination_type: transfer.destinationType,
        bridge_transfer_id: transfer.bridgeTransferId,
        failure_reason: transfer.failureReason,
      },
    }),
  );
}

/** Transfers to the employees' virtual deposit addresses: at the block's time (else when indexed). */
export async function virtualInflows(db: Db, employeeIds: string[], before: ActivityPosition | null, limit: number): Promise<ActivityRow[]> {
  const id = sql`(${virtualAddressInflows.txHash} || ':' || ${virtualAddressInflows.logIndex})`;
  const q = sourceQuery('virtual_inflow', sql`coalesce(${virtualAddressInflows.blockTimestamp}, ${virtualAddressInflows.createdAt})`, id, before);
  const rows = await db
    .select({ id: sql<string>`${id}`, at: q.at, amount: virtualAddressInflows.amount, inflow: virtualAddressInflows })
    .from(virtualAddressInflows)
    .where(and(inArray(virtualAddressInflows.employeeId, employeeIds), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ inflow, ...row }) =>
    toRow('virtual_inflow')({
      ...row,
      details: {
        direction: 'in',
        employee_id: inflow.employeeId,
        employer_id: inflow.employerId,
        tx_hash: inflow.txHash,
        log_index: inflow.logIndex,
        token_address: inflow.tokenAddress,
        virtual_address: inflow.virtualAddress,
        sender_address: inflow.senderAddress,
        block_number: inflow.blockNumber.toString(),
      },
    }),
  );
}

/** Descending (time, type, id): the feed's order. */
export function compareActivity(a: ActivityPosition, b: ActivityPosition): number {
  if (a.at !== b.at) return b.at - a.at;
  if (a.type !== b.type) return a.type < b.type ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/** The newest `limit` cards of these employees older than `before`, and whether more follow. */
export async function listActivity(
  db: Db,
  employeeIds: string[],
  options: { before: ActivityPosition | null; limit: number },
): Promise<{ rows: ActivityRow[]; more: boolean }> {
  const take = options.limit + 1;
  const sources = await Promise.all(
    [payrollPayments, claimedAdvances, offramps, virtualInflows].map((source) => source(db, employeeIds, options.before, take)),
  );
  const merged = sources.flat().sort(compareActivity);
  return { rows: merged.slice(0, options.limit), more: merged.length > options.limit };
}
