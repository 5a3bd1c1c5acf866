import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { auditLog } from '../../db/schema.js';

/** What a rebalance wrote, as its audit entry keeps it. */
export interface RecordedRebalance {
  allocation_bps: number[];
  previous_allocation_bps: number[];
  tx_hash: string;
}

/**
 * The rebalance a fee payment bought, read from its audit entry (the audit log is the only record
 * a rebalance leaves besides the chain): null when none was recorded under that payment.
 */
export async function rebalanceForFee(db: Db, employerId: string, paymentId: string): Promise<RecordedRebalance | null> {
  const [row] = await db
    .select({ details: auditLog.details })
    .from(auditLog)
    .where(and(eq(auditLog.employerId, employerId), eq(auditLog.action, 'treasury.rebalanced'), sql`${auditLog.details}->>'payment_id' = ${paymentId}`))
    .limit(1);
  return (row?.details as RecordedRebalance | undefined) ?? null;
}
