import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { paymentReceipts } from '../db/schema.js';

export type ReceiptRow = typeof paymentReceipts.$inferSelect;

/** An employer's receipts, newest first, with the total count. */
export async function listEmployerReceipts(db: Db, employerId: string, page: { offset: number; limit: number }) {
  const where = eq(paymentReceipts.employerId, employerId);
  const [rows, [total]] = await Promise.all([
    db.select().from(paymentReceipts).where(where).orderBy(desc(paymentReceipts.createdAt), desc(paymentReceipts.id)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(paymentReceipts).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

/** Count and amount per rail over all of an employer's settled receipts. */
export async function employerReceiptTotals(db: Db, employerId: string): Promise<{ rail: ReceiptRow['rail']; count: number; amount: bigint }[]> {
  const rows = await db
    .select({ rail: paymentReceipts.rail, count: count(), amount: sql<string>`coalesce(sum(${paymentReceipts.amount}), 0)::text` })
    .from(paymentReceipts)
    .where(and(eq(paymentReceipts.employerId, employerId), eq(paymentReceipts.status, 'settled')))
    .groupBy(paymentReceipts.rail)
    .orderBy(paymentReceipts.rail);
  return rows.map((r) => ({ rail: r.rail, count: r.count, amount: BigInt(r.amount) }));
}
