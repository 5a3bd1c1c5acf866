import { and, desc, eq, inArray, isNotNull, notInArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { feedSourceQuery, toFeedRow, type FeedPosition, type FeedRow } from '../../db/keyset.js';
import { lockEmployee } from '../employers/index.js';
import { bankAccounts, cards, offrampTransfers } from './tables.js';
import { FINAL_TRANSFER_STATUSES, type DestinationType } from '../../providers/bridge/index.js';

export type BankAccountRow = typeof bankAccounts.$inferSelect;
export type CardRow = typeof cards.$inferSelect;
export type OfframpRow = typeof offrampTransfers.$inferSelect;

// ---- bank accounts ---------------------------------------------------------------------------

export async function insertBankAccount(
  db: Db,
  values: { employeeId: string; bridgeAccountId: string; destinationType: DestinationType; label: string | null; last4: string },
): Promise<BankAccountRow> {
  await db.insert(bankAccounts).values(values).onConflictDoNothing();
  const [row] = await db
    .select()
    .from(bankAccounts)
    .where(and(eq(bankAccounts.employeeId, values.employeeId), eq(bankAccounts.bridgeAccountId, values.bridgeAccountId)));
  return row!;
}

export function listBankAccounts(db: Db, employeeId: string): Promise<BankAccountRow[]> {
  return db.select().from(bankAccounts).where(eq(bankAccounts.employeeId, employeeId)).orderBy(bankAccounts.createdAt);
}

export async function findBankAccount(db: Db, employeeId: string, bridgeAccountId: string): Promise<BankAccountRow | null> {
  const [row] = await db
    .select()
    .from(bankAccounts)
    .where(and(eq(bankAccounts.employeeId, employeeId), eq(bankAccounts.bridgeAccountId, bridgeAccountId)));
  return row ?? null;
}

// ---- cards -----------------------------------------------------------------------------------

/** The employee's live card (not canceled or failed), if any. */
export async function liveCard(db: Db, employeeId: string): Promise<CardRow | null> {
  const [row] = await db
    .select()
    .from(cards)
    .where(and(eq(cards.employeeId, employeeId), notInArray(cards.status, ['canceled', 'failed'])))
    .orderBy(desc(cards.createdAt));
  return row ?? null;
}

/** A new card request, or null when the employee already has a live card (one per employee). */
export async function insertCardRequest(db: Db, employeeId: string): Promise<CardRow | null> {
  const [row] = await db.insert(cards).values({ employeeId }).onConflictDoNothing().returning();
  return row ?? null;
}

export async function updateCard(db: Db, cardId: string, values: { bridgeCardId?: string; status: string; last4?: string | null }): Promise<CardRow> {
  const [row] = await db
    .update(cards)
    .set({ ...values, updatedAt: clockNow })
    .where(eq(cards.id, cardId))
    .returning();
  return row!;
}

// ---- off-ramp transfers ---------------------------------------------------------------------

/** Statuses in which an off-ramp still counts against the wallet: its funds have not left yet. */
export const UNFUNDED_STATUSES = ['pending', 'awaiting_funds'];

/**
 * Reserves an off-ramp against the wallet balance: under a lock on the employee row, the
 * amounts of unfunded transfers plus this one must fit in `walletBalance`. Null when they do not.
 */
export async function reserveOfframp(
  db: Db,
  values: {
    employeeId: string;
    employerId: string;
    bankAccountId: string;
    amount: bigint;
    destinationType: DestinationType;
    sourceAddress: string;
    feePaymentId: string | null;
  },
  walletBalance: bigint,
): Promise<OfframpRow | null> {
  await lockEmployee(db, values.employeeId);
  const [reserved] = await db
    .select({ total: sql<string>`coalesce(sum(${offrampTransfers.amount}), 0)::text` })
    .from(offrampTransfers)
    .where(and(eq(offrampTransfers.employeeId, values.employeeId), inArray(offrampTransfers.status, UNFUNDED_STATUSES)));
  if (BigInt(reserved?.total ?? '0') + values.amount > walletBalance) return null;
  const [row] = await db.insert(offrampTransfers).values(values).returning();
  return row!;
}

/** The off-ramp a fee payment bought, if it got that far. */
export async function offrampForFee(db: Db, feePaymentId: string): Promise<OfframpRow | null> {
  const [row] = await db.select().from(offrampTransfers).where(eq(offrampTransfers.feePaymentId, feePaymentId));
  return row ?? null;
}

export async function updateOfframp(
  db: Db,
  id: string,
  values: { status: string; bridgeTransferId?: string; depositAddress?: string; failureReason?: string | null },
): Promise<OfframpRow> {
  const [row] = await db
    .update(offrampTransfers)
    .set({ ...values, updatedAt: clockNow })
    .where(eq(offrampTransfers.id, id))
    .returning();
  return row!;
}

export function employeeOfframps(db: Db, employeeId: string, limit: number): Promise<OfframpRow[]> {
  return db.select().from(offrampTransfers).where(eq(offrampTransfers.employeeId, employeeId)).orderBy(desc(offrampTransfers.createdAt)).limit(limit);
}

/** Off-ramps the provider is still moving (created there, not final). */
export function openOfframps(db: Db, limit: number): Promise<OfframpRow[]> {
  return db
    .select()
    .from(offrampTransfers)
    .where(and(isNotNull(offrampTransfers.bridgeTransferId), notInArray(offrampTransfers.status, [...FINAL_TRANSFER_STATUSES])))
    .orderBy(offrampTransfers.updatedAt)
    .limit(limit);
}

// ---- read model of another feature: the portal's activity feed ----

/** Off-ramps to a bank account, whatever their state, as activity cards: at creation. */
export async function offrampFeed(db: Db, employeeIds: string[], before: FeedPosition | null, limit: number): Promise<FeedRow<'offramp'>[]> {
  const q = feedSourceQuery('offramp', sql`${offrampTransfers.createdAt}`, sql`${offrampTransfers.id}::text`, before);
  const rows = await db
    .select({ id: sql<string>`${offrampTransfers.id}::text`, at: q.at, amount: offrampTransfers.amount, transfer: offrampTransfers })
    .from(offrampTransfers)
    .where(and(inArray(offrampTransfers.employeeId, employeeIds), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ transfer, ...row }) =>
    toFeedRow('offramp')({
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
