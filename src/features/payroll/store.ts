import { and, asc, count, desc, eq, gte, inArray, lte, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { feedSourceQuery, toFeedRow, type FeedPosition, type FeedRow } from '../../db/keyset.js';
import type { Counted, OffsetPage } from '../../db/paging.js';
import { employeeContacts } from '../employers/index.js';
import { agentDecisions, paymentItems, payrollBatches, payrollRuns } from './tables.js';

export type RunRow = typeof payrollRuns.$inferSelect;
export type ItemRow = typeof paymentItems.$inferSelect;
export type ItemStatus = ItemRow['status'];
export type DecisionRow = typeof agentDecisions.$inferSelect;
export type BatchRow = typeof payrollBatches.$inferSelect;

export interface NewItem {
  employeeId: string;
  chain: 'tempo' | 'solana';
  walletAddress: string;
  amount: bigint;
  memo: string | null;
  status: ItemStatus;
  reason: string | null;
  /** Advances this payment nets (`amount` is already net of them); 0 when absent. */
  advanceDeduction?: bigint;
}

/**
 * A draft run and all its items in two statements (the items as one JSON parameter: one round
 * trip for 10,000 rows, and no bind-parameter limit). Call inside the caller's transaction.
 */
export async function insertRun(
  db: Db,
  run: {
    id: string;
    employerId: string;
    totalAmount: bigint;
    payPeriodStart: Date | null;
    payPeriodEnd: Date | null;
    payDate?: string | null;
    createdBy: string | null;
    decisionId?: string | null;
  },
  items: NewItem[],
): Promise<RunRow> {
  const [inserted] = await db
    .insert(payrollRuns)
    .values({ ...run, status: 'draft', recipientCount: items.length })
    .returning();
  if (!inserted) throw new Error('payroll run insert returned nothing');
  const rows = items.map((i) => ({ ...i, amount: i.amount.toString(), advanceDeduction: (i.advanceDeduction ?? 0n).toString() }));
  await db.execute(sql`
    INSERT INTO payment_items (run_id, employer_id, employee_id, chain, wallet_address, amount, advance_deduction, memo, status, reason)
    SELECT ${run.id}::uuid, ${run.employerId}::uuid, item."employeeId", item.chain, item."walletAddress", item.amount, item."advanceDeduction", item.memo, item.status, item.reason
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS item("employeeId" uuid, chain text, "walletAddress" text, amount numeric, "advanceDeduction" numeric, memo text, status text, reason text)`);
  return inserted;
}

/** The run only if it belongs to this employer. */
export async function findEmployerRun(db: Db, employerId: string, runId: string): Promise<RunRow | null> {
  const rows = await db.select().from(payrollRuns).where(and(eq(payrollRuns.id, runId), eq(payrollRuns.employerId, employerId)));
  return rows[0] ?? null;
}

export async function findRun(db: Db, runId: string): Promise<RunRow | null> {
  const rows = await db.select().from(payrollRuns).where(eq(payrollRuns.id, runId));
  return rows[0] ?? null;
}

export async function listRuns(db: Db, employerId: string, page: { offset: number; limit: number }) {
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(payrollRuns)
      .where(eq(payrollRuns.employerId, employerId))
      .orderBy(desc(payrollRuns.createdAt), desc(payrollRuns.id))
      .offset(page.offset)
      .limit(page.limit),
    db.select({ total: count() }).from(payrollRuns).where(eq(payrollRuns.employerId, employerId)),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export function itemsOfRun(db: Db, runId: string): Promise<ItemRow[]> {
  return db.select().from(paymentItems).where(eq(paymentItems.runId, runId)).orderBy(asc(paymentItems.createdAt), asc(paymentItems.id));
}

/** The run a fee payment executed (paid execute stores the fee on the run it claims). */
export async function findRunByFeePayment(db: Db, feePaymentId: string): Promise<RunRow | null> {
  const rows = await db.select().from(payrollRuns).where(eq(payrollRuns.feePaymentId, feePaymentId));
  return rows[0] ?? null;
}

/**
 * draft -> submitted, compare-and-set: exactly one caller wins; the others get null. The run's
 * pending items move with it. `feePaymentId` is the fee that bought this execution, if any.
 */
export async function claimDraft(
  db: Db,
  runId: string,
  submission: { submittedBy: 'owner' | 'agent'; txHash: string | null; feePaymentId?: string | null },
): Promise<RunRow | null> {
  const now = clockNow;
  const [claimed] = await db
    .update(payrollRuns)
    .set({
      status: 'submitted',
      submittedBy: submission.submittedBy,
      txHash: submission.txHash,
      feePaymentId: submission.feePaymentId ?? null,
      submittedAt: now,
      updatedAt: now,
    })
    .where(and(eq(payrollRuns.id, runId), eq(payrollRuns.status, 'draft')))
    .returning();
  if (!claimed) return null;
  await db
    .update(paymentItems)
    .set({ status: 'submitted', txHash: submission.txHash, updatedAt: now })
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.status, 'pending')));
  return claimed;
}

/**
 * submitted -> confirmed (Tempo items still submitted -> paid); false if the run was not submitted.
 * `mined`: the run's first batch hash and its last batch's block (null for a run with no Tempo items).
 */
export async function markConfirmed(db: Db, runId: string, mined: { txHash: string; blockNumber: bigint } | null): Promise<boolean> {
  const now = clockNow;
  const [run] = await db
    .update(payrollRuns)
    .set({ status: 'confirmed', ...(mined ? { txHash: mined.txHash, blockNumber: mined.blockNumber } : {}), finalizedAt: now, updatedAt: now })
    .where(and(eq(payrollRuns.id, runId), eq(payrollRuns.status, 'submitted')))
    .returning({ id: payrollRuns.id });
  if (!run || !mined) return Boolean(run);
  await db
    .update(paymentItems)
    .set({ status: 'paid', txHash: mined.txHash, blockNumber: mined.blockNumber, finalizedAt: now, updatedAt: now })
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.chain, 'tempo'), eq(paymentItems.status, 'submitted')));
  return true;
}

/** submitted -> partially_paid: some batches paid, a later one was refused (its items and the rest are failed already). */
export async function markPartiallyPaid(db: Db, runId: string, reason: string, blockNumber: bigint | null): Promise<boolean> {
  const now = clockNow;
  const [run] = await db
    .update(payrollRuns)
    .set({ status: 'partially_paid', failureReason: reason, blockNumber, finalizedAt: now, updatedAt: now })
    .where(and(eq(payrollRuns.id, runId), eq(payrollRuns.status, 'submitted')))
    .returning({ id: payrollRuns.id });
  return Boolean(run);
}

// ---- batches: a run's Tempo items in as many transactions as the gas limit needs ----

export function batchesOfRun(db: Db, runId: string): Promise<BatchRow[]> {
  return db.select().from(payrollBatches).where(eq(payrollBatches.runId, runId)).orderBy(asc(payrollBatches.seq));
}

/** The batches of several runs (a page of the runs list), by run. */
export async function batchesOfRuns(db: Db, runIds: string[]): Promise<Map<string, BatchRow[]>> {
  const rows = runIds.length === 0 ? [] : await db.select().from(payrollBatches).where(inArray(payrollBatches.runId, runIds)).orderBy(asc(payrollBatches.seq));
  const byRun = new Map<string, BatchRow[]>();
  for (const row of rows) {
    const batches = byRun.get(row.runId);
    if (batches) batches.push(row);
    else byRun.set(row.runId, [row]);
  }
  return byRun;
}

/** The Tempo items a run's batches have still to pay, in payment order (what planBatches splits). */
export function unbatchedTempoItems(db: Db, runId: string): Promise<ItemRow[]> {
  return db
    .select()
    .from(paymentItems)
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.chain, 'tempo'), eq(paymentItems.status, 'submitted'), sql`${paymentItems.batchSeq} IS NULL`))
    .orderBy(asc(paymentItems.createdAt), asc(paymentItems.id));
}

/**
 * Splits a submitted run's Tempo items into batches of `capacity`, in payment order, once: the
 * run row is locked first, so a second planner (another instance) finds the batches and adds none.
 * Call inside a transaction.
 */
export async function planBatches(db: Db, runId: string, capacity: number): Promise<void> {
  const locked = await db.execute(sql`SELECT 1 FROM payroll_runs WHERE id = ${runId} AND status = 'submitted' FOR UPDATE`);
  if (locked.rows.length === 0) return;
  const [planned] = await db.select({ n: count() }).from(payrollBatches).where(eq(payrollBatches.runId, runId));
  if ((planned?.n ?? 0) > 0) return;
  await db.execute(sql`
    UPDATE payment_items p SET batch_seq = (o.position - 1) / ${capacity}::bigint
    FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS position FROM payment_items
          WHERE run_id = ${runId} AND chain = 'tempo' AND status = 'submitted') o
    WHERE p.id = o.id`);
  await insertBatchesOfItems(db, runId, 'pending', null);
}

/** The owner's one signed transaction as batch 0 of a run it just submitted (call in that transaction). */
export async function recordOwnerBatch(db: Db, runId: string, txHash: string): Promise<void> {
  await db.execute(sql`UPDATE payment_items SET batch_seq = 0 WHERE run_id = ${runId} AND chain = 'tempo' AND status = 'submitted'`);
  await insertBatchesOfItems(db, runId, 'submitted', txHash);
}

async function insertBatchesOfItems(db: Db, runId: string, status: 'pending' | 'submitted', txHash: string | null): Promise<void> {
  await db.execute(sql`
    INSERT INTO payroll_batches (run_id, seq, status, recipient_count, total_amount, tx_hash)
    SELECT run_id, batch_seq, ${status}, count(*), sum(amount), ${txHash}::text FROM payment_items
    WHERE run_id = ${runId} AND batch_seq IS NOT NULL GROUP BY run_id, batch_seq`);
}

/** A batch's items, the ones it still pays (submitted), in payment order. */
export function batchItems(db: Db, runId: string, seq: number): Promise<ItemRow[]> {
  return db
    .select()
    .from(paymentItems)
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.batchSeq, seq), eq(paymentItems.status, 'submitted')))
    .orderBy(asc(paymentItems.createdAt), asc(paymentItems.id));
}

/**
 * Takes a pending batch to sign it: compare-and-set on an unclaimed batch or one whose claim is
 * older than `staleBefore` (its executor died before recording anything). Only the holder of
 * `token` can then record the signed bytes (recordBatchBroadcast).
 */
export async function claimBatch(db: Db, batchId: string, token: string, staleBefore: Date): Promise<boolean> {
  const now = clockNow;
  const [row] = await db
    .update(payrollBatches)
    .set({ claimToken: token, claimedAt: now, updatedAt: now })
    .where(and(eq(payrollBatches.id, batchId), eq(payrollBatches.status, 'pending'), sql`(${payrollBatches.claimToken} IS NULL OR ${payrollBatches.claimedAt} < ${staleBefore.toISOString()})`))
    .returning({ id: payrollBatches.id });
  return Boolean(row);
}

/**
 * pending -> submitted with the signed bytes, before they are broadcast, only for the claim holder:
 * false means another executor took the batch over, and these bytes must not be sent. The run
 * shows its first batch's hash, and moves its `updated_at` (the reconciler leaves a moving run alone).
 */
export async function recordBatchBroadcast(db: Db, batch: { id: string; runId: string; seq: number }, token: string, txHash: string, raw: string): Promise<boolean> {
  const now = clockNow;
  const [row] = await db
    .update(payrollBatches)
    .set({ status: 'submitted', txHash, rawTransaction: raw, updatedAt: now })
    .where(and(eq(payrollBatches.id, batch.id), eq(payrollBatches.status, 'pending'), eq(payrollBatches.claimToken, token)))
    .returning({ id: payrollBatches.id });
  if (!row) return false;
  await db
    .update(paymentItems)
    .set({ txHash, updatedAt: now })
    .where(and(eq(paymentItems.runId, batch.runId), eq(paymentItems.batchSeq, batch.seq), eq(paymentItems.status, 'submitted')));
  await db
    .update(payrollRuns)
    .set({ txHash: sql`coalesce(${payrollRuns.txHash}, ${txHash})`, updatedAt: now })
    .where(eq(payrollRuns.id, batch.runId));
  return true;
}

/** submitted -> pending again, clearing the bytes: they can never be mined (their nonce went to another transaction). */
export async function resignBatch(db: Db, batchId: string, txHash: string): Promise<boolean> {
  const [row] = await db
    .update(payrollBatches)
    .set({ status: 'pending', txHash: null, rawTransaction: null, claimToken: null, claimedAt: null, updatedAt: clockNow })
    .where(and(eq(payrollBatches.id, batchId), eq(payrollBatches.status, 'submitted'), eq(payrollBatches.txHash, txHash)))
    .returning({ id: payrollBatches.id });
  return Boolean(row);
}

/** submitted -> confirmed with its block; its items submitted -> paid. False if it was not submitted. */
export async function confirmBatch(db: Db, batch: { id: string; runId: string; seq: number }, mined: { txHash: string; blockNumber: bigint }): Promise<boolean> {
  const now = clockNow;
  const [row] = await db
    .update(payrollBatches)
    .set({ status: 'confirmed', blockNumber: mined.blockNumber, finalizedAt: now, updatedAt: now })
    .where(and(eq(payrollBatches.id, batch.id), eq(payrollBatches.status, 'submitted'), eq(payrollBatches.txHash, mined.txHash)))
    .returning({ id: payrollBatches.id });
  if (!row) return false;
  await db
    .update(paymentItems)
    .set({ status: 'paid', txHash: mined.txHash, blockNumber: mined.blockNumber, finalizedAt: now, updatedAt: now })
    .where(and(eq(paymentItems.runId, batch.runId), eq(paymentItems.batchSeq, batch.seq), eq(paymentItems.status, 'submitted')));
  await db.update(payrollRuns).set({ updatedAt: now }).where(eq(payrollRuns.id, batch.runId));
  return true;
}

/**
 * A batch the chain refused (nothing of it paid), and every later batch of the run not yet signed
 * (they are not sent after a refusal): failed, with their items. False if the batch was final already.
 */
export async function refuseBatch(db: Db, batch: { id: string; runId: string; seq: number }, reason: string): Promise<boolean> {
  const now = clockNow;
  const [row] = await db
    .update(payrollBatches)
    .set({ status: 'failed', failureReason: reason, finalizedAt: now, updatedAt: now })
    .where(and(eq(payrollBatches.id, batch.id), inArray(payrollBatches.status, ['pending', 'submitted'])))
    .returning({ id: payrollBatches.id });
  if (!row) return false;
  const notSent = `not sent: batch ${batch.seq + 1} was refused (${reason})`;
  const later = await db
    .update(payrollBatches)
    .set({ status: 'failed', failureReason: notSent, finalizedAt: now, updatedAt: now })
    .where(and(eq(payrollBatches.runId, batch.runId), sql`${payrollBatches.seq} > ${batch.seq}`, eq(payrollBatches.status, 'pending')))
    .returning({ seq: payrollBatches.seq });
  const failItems = (seqs: number[], why: string) =>
    db
      .update(paymentItems)
      .set({ status: 'failed', reason: why, updatedAt: now })
      .where(and(eq(paymentItems.runId, batch.runId), inArray(paymentItems.batchSeq, seqs), eq(paymentItems.status, 'submitted')));
  await failItems([batch.seq], reason);
  if (later.length > 0) await failItems(later.map((b) => b.seq), notSent);
  return true;
}

/** submitted -> failed (items submitted -> failed); false if the run was not submitted. */
export async function markFailed(db: Db, runId: string, reason: string): Promise<boolean> {
  const now = clockNow;
  const [run] = await db
    .update(payrollRuns)
    .set({ status: 'failed', failureReason: reason, finalizedAt: now, updatedAt: now })
    .where(and(eq(payrollRuns.id, runId), eq(payrollRuns.status, 'submitted')))
    .returning({ id: payrollRuns.id });
  if (!run) return false;
  await db
    .update(paymentItems)
    .set({ status: 'failed', reason, updatedAt: now })
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.status, 'submitted')));
  return true;
}

/** A run's paid items with who was paid and by whom (for receipts): the names are the employers feature's. */
export async function paidItemsWithRecipients(db: Db, runId: string) {
  const items = await db
    .select()
    .from(paymentItems)
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.status, 'paid')))
    .orderBy(paymentItems.createdAt, paymentItems.id);
  if (items.length === 0) return [];
  const contacts = await employeeContacts(db, items[0]!.employerId, items.map((item) => item.employeeId));
  const byId = new Map(contacts.map((contact) => [contact.id, contact]));
  return items.flatMap((item) => {
    const contact = byId.get(item.employeeId);
    if (!contact) return [];
    const { employeeId, amount, chain, walletAddress, memo, txHash } = item;
    return [{ employeeId, amount, chain, walletAddress, memo, txHash, email: contact.email, fullName: contact.fullName, employerName: contact.employerName }];
  });
}

/** One item of one run, with its run's state. */
export async function findItem(db: Db, runId: string, employeeId: string): Promise<ItemRow | null> {
  const rows = await db
    .select()
    .from(paymentItems)
    .where(and(eq(paymentItems.runId, runId), eq(paymentItems.employeeId, employeeId)));
  return rows[0] ?? null;
}

// ---- payslips: items past draft, with their run's pay period and the names on them ----

export interface PayslipRow {
  item: ItemRow;
  payPeriodStart: Date | null;
  payPeriodEnd: Date | null;
  /** The run's pay date (YYYY-MM-DD), if it has one. */
  runPayDate: string | null;
  employeeName: string | null;
  employerName: string | null;
}

/** Drafts' items are not payslips: a draft pays nothing and may never be sent. */
const pastDraft = ne(paymentItems.status, 'pending');

function payslipItems(db: Db, where: SQL | undefined) {
  return db
    .select({ item: paymentItems, payPeriodStart: payrollRuns.payPeriodStart, payPeriodEnd: payrollRuns.payPeriodEnd, runPayDate: payrollRuns.payDate })
    .from(paymentItems)
    .innerJoin(payrollRuns, eq(payrollRuns.id, paymentItems.runId))
    .where(and(pastDraft, where))
    .orderBy(desc(paymentItems.createdAt), desc(paymentItems.id))
    .$dynamic();
}

/** The rows (all of one employer: one employee's, or one run's) with the employee's and employer's names (the employers feature's). */
async function named(db: Db, rows: Omit<PayslipRow, 'employeeName' | 'employerName'>[]): Promise<PayslipRow[]> {
  if (rows.length === 0) return [];
  const contacts = await employeeContacts(db, rows[0]!.item.employerId, [...new Set(rows.map((r) => r.item.employeeId))]);
  const byId = new Map(contacts.map((c) => [c.id, c]));
  return rows.map((row) => {
    const contact = byId.get(row.item.employeeId);
    return { ...row, employeeName: contact?.fullName ?? null, employerName: contact?.employerName ?? null };
  });
}

/** One employee's payslips, newest first, a page at a time. */
export async function employeePayslips(db: Db, employeeId: string, page: { offset: number; limit: number }): Promise<Counted<PayslipRow>> {
  const where = eq(paymentItems.employeeId, employeeId);
  const [rows, totals] = await Promise.all([
    payslipItems(db, where).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(paymentItems).where(and(where, pastDraft)),
  ]);
  return { rows: await named(db, rows), total: totals[0]?.total ?? 0 };
}

/** Every payslip of one run (one per employee). */
export async function runPayslips(db: Db, runId: string): Promise<PayslipRow[]> {
  return named(db, await payslipItems(db, eq(paymentItems.runId, runId)));
}

export async function findPayslip(db: Db, runId: string, employeeId: string): Promise<PayslipRow | null> {
  const rows = await payslipItems(db, and(eq(paymentItems.runId, runId), eq(paymentItems.employeeId, employeeId)));
  return (await named(db, rows))[0] ?? null;
}

export function employeeItems(db: Db, employeeId: string, limit: number): Promise<ItemRow[]> {
  return db
    .select()
    .from(paymentItems)
    .where(eq(paymentItems.employeeId, employeeId))
    .orderBy(desc(paymentItems.createdAt), desc(paymentItems.id))
    .limit(limit);
}

export interface TransactionFilters {
  employeeId?: string | undefined;
  status?: ItemStatus | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export async function listEmployerItems(db: Db, employerId: string, filters: TransactionFilters, page: { offset: number; limit: number }) {
  const conditions: SQL[] = [eq(paymentItems.employerId, employerId)];
  if (filters.employeeId) conditions.push(eq(paymentItems.employeeId, filters.employeeId));
  if (filters.status) conditions.push(eq(paymentItems.status, filters.status));
  if (filters.from) conditions.push(gte(paymentItems.createdAt, filters.from));
  if (filters.to) conditions.push(lte(paymentItems.createdAt, filters.to));
  const where = and(...conditions);
  const [rows, totals] = await Promise.all([
    db.select().from(paymentItems).where(where).orderBy(desc(paymentItems.createdAt), desc(paymentItems.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(paymentItems).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

/** Submitted runs nobody has moved since `olderThan` (a batch step moves `updated_at`): the reconciler's work list. */
export function staleSubmittedRuns(db: Db, olderThan: Date, limit = 50): Promise<RunRow[]> {
  return db
    .select()
    .from(payrollRuns)
    .where(and(eq(payrollRuns.status, 'submitted'), lte(payrollRuns.updatedAt, olderThan)))
    .orderBy(asc(payrollRuns.updatedAt))
    .limit(limit);
}

/** One item's own outcome (a Solana payment: paid with its signature, failed, or policy_rejected). */
export async function settleItem(db: Db, itemId: string, outcome: { status: 'paid' | 'failed' | 'policy_rejected'; txHash?: string; reason?: string }): Promise<void> {
  const now = clockNow;
  await db
    .update(paymentItems)
    .set({
      status: outcome.status,
      txHash: outcome.txHash ?? null,
      reason: outcome.reason ?? null,
      ...(outcome.status === 'paid' ? { finalizedAt: now } : {}),
      updatedAt: now,
    })
    .where(and(eq(paymentItems.id, itemId), eq(paymentItems.status, 'submitted')));
}

// ---- paid history for the AI's anomaly analysis (through index.ts) ------------------------------

/** Paid items of these employees from runs other than `run` and created before it. */
const paidBefore = (run: RunRow, employeeIds: string[]) => sql`
  p.employer_id = ${run.employerId}::uuid
  AND p.employee_id = ANY(${sql.param(employeeIds)}::uuid[])
  AND p.status = 'paid'
  AND p.run_id <> ${run.id}::uuid
  AND p.created_at < ${run.createdAt.toISOString()}::timestamptz`;

/** Each employee's last `depth` paid amounts before the run (base units). */
export async function recentPaidAmounts(db: Db, run: RunRow, employeeIds: string[], depth: number): Promise<Map<string, bigint[]>> {
  const history = new Map<string, bigint[]>();
  if (employeeIds.length === 0) return history;
  const { rows } = await db.execute<{ employee_id: string; amount: string }>(sql`
    SELECT employee_id, amount::text AS amount
    FROM (
      SELECT p.employee_id, p.amount,
             row_number() OVER (PARTITION BY p.employee_id ORDER BY p.created_at DESC, p.id DESC) AS n
      FROM payment_items p
      WHERE ${paidBefore(run, employeeIds)}
    ) recent
    WHERE n <= ${depth}`);
  for (const row of rows) history.set(row.employee_id, [...(history.get(row.employee_id) ?? []), BigInt(row.amount)]);
  return history;
}

/** The wallet of each employee's latest paid item before the run, per chain: key `employee:chain`. */
export async function lastPaidWallets(db: Db, run: RunRow, employeeIds: string[]): Promise<Map<string, string>> {
  if (employeeIds.length === 0) return new Map();
  const { rows } = await db.execute<{ employee_id: string; chain: string; wallet_address: string }>(sql`
    SELECT DISTINCT ON (p.employee_id, p.chain) p.employee_id, p.chain, p.wallet_address
    FROM payment_items p
    WHERE ${paidBefore(run, employeeIds)}
    ORDER BY p.employee_id, p.chain, p.created_at DESC, p.id DESC`);
  return new Map(rows.map((r) => [`${r.employee_id}:${r.chain}`, r.wallet_address]));
}

// ---- agent decisions (x402/payroll/execute) ----

/** Submitted or paid runs of the employer whose pay period overlaps [start, end] (the wizard's warning). */
export function overlappingPaidRuns(db: Db, employerId: string, start: Date, end: Date): Promise<RunRow[]> {
  return db
    .select()
    .from(payrollRuns)
    .where(
      and(
        eq(payrollRuns.employerId, employerId),
        inArray(payrollRuns.status, ['submitted', 'confirmed']),
        lte(payrollRuns.payPeriodStart, end),
        gte(payrollRuns.payPeriodEnd, start),
      ),
    )
    .orderBy(asc(payrollRuns.payPeriodStart));
}

/** Each employee's latest submitted or paid payment since `since` (the wizard's warning). */
export async function latestPaymentsSince(db: Db, employerId: string, employeeIds: string[], since: Date) {
  if (employeeIds.length === 0) return [];
  return db
    .selectDistinctOn([paymentItems.employeeId], { employeeId: paymentItems.employeeId, runId: paymentItems.runId, createdAt: paymentItems.createdAt })
    .from(paymentItems)
    .where(
      and(
        eq(paymentItems.employerId, employerId),
        inArray(paymentItems.employeeId, employeeIds),
        inArray(paymentItems.status, ['submitted', 'paid']),
        gte(paymentItems.createdAt, since),
      ),
    )
    .orderBy(paymentItems.employeeId, desc(paymentItems.createdAt));
}

export async function insertDecision(db: Db, values: { employerId: string; agentIdentifier: string | null; plan: unknown }): Promise<DecisionRow> {
  const [row] = await db.insert(agentDecisions).values({ ...values, kind: 'payroll' }).returning();
  if (!row) throw new Error('decision insert returned nothing');
  return row;
}

export async function findEmployerDecision(db: Db, employerId: string, decisionId: string): Promise<DecisionRow | null> {
  const rows = await db.select().from(agentDecisions).where(and(eq(agentDecisions.id, decisionId), eq(agentDecisions.employerId, employerId)));
  return rows[0] ?? null;
}

/** Compare-and-set on a decision's status; null when it was not in `from`. */
export async function moveDecision(db: Db, decisionId: string, from: string, to: string): Promise<DecisionRow | null> {
  const [row] = await db
    .update(agentDecisions)
    .set({ status: to, ...(to === 'executed' ? { executedAt: clockNow } : {}) })
    .where(and(eq(agentDecisions.id, decisionId), eq(agentDecisions.status, from)))
    .returning();
  return row ?? null;
}

// ---- read models of other features: the portal's activity feed and the admin view ----

/** Payroll payments to these employees (drafts excluded), as activity cards: at finalisation, else creation. */
export async function payrollPaymentFeed(db: Db, employeeIds: string[], before: FeedPosition | null, limit: number): Promise<FeedRow<'payroll_payment'>[]> {
  const q = feedSourceQuery('payroll_payment', sql`coalesce(${paymentItems.finalizedAt}, ${paymentItems.createdAt})`, sql`${paymentItems.id}::text`, before);
  const rows = await db
    .select({ id: sql<string>`${paymentItems.id}::text`, at: q.at, amount: paymentItems.amount, item: paymentItems })
    .from(paymentItems)
    .where(and(inArray(paymentItems.employeeId, employeeIds), ne(paymentItems.status, 'pending'), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ item, ...row }) =>
    toFeedRow('payroll_payment')({
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

/** How many runs are in each status. */
export function payrollRunCounts(db: Db): Promise<{ status: string; count: number }[]> {
  return db.select({ status: payrollRuns.status, count: count() }).from(payrollRuns).groupBy(payrollRuns.status);
}

/** Runs newest first, of one employer or of all. */
export async function payrollRunsPage(db: Db, page: OffsetPage, employerId?: string): Promise<Counted<RunRow>> {
  const where = employerId === undefined ? undefined : eq(payrollRuns.employerId, employerId);
  const [rows, totals] = await Promise.all([
    db.select().from(payrollRuns).where(where).orderBy(desc(payrollRuns.createdAt), desc(payrollRuns.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(payrollRuns).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

/** One calendar month (UTC) of what confirmed payroll runs paid. */
export interface MonthlyCost {
  /** YYYY-MM */
  month: string;
  /** The paid items' amounts (net of netted advances: what left the treasury). */
  paid: bigint;
  runs: number;
  /** Distinct employees paid that month. */
  recipients: number;
}

/**
 * What the employer's confirmed runs paid per UTC calendar month, from `fromMonth` (the first day
 * of a month) on: only items actually paid, by the month their run was confirmed. Months with no
 * paid run are absent (the caller fills them with zeros).
 */
export async function monthlyPaidCosts(db: Db, employerId: string, fromMonth: Date): Promise<MonthlyCost[]> {
  const { rows } = await db.execute<{ month: string; paid: string; runs: number; recipients: number }>(sql`
    SELECT to_char(date_trunc('month', r.finalized_at AT TIME ZONE 'UTC'), 'YYYY-MM') AS month,
           sum(p.amount)::text AS paid,
           count(DISTINCT r.id)::int AS runs,
           count(DISTINCT p.employee_id)::int AS recipients
    FROM payroll_runs r
    JOIN payment_items p ON p.run_id = r.id AND p.status = 'paid'
    WHERE r.employer_id = ${employerId} AND r.status = 'confirmed' AND r.finalized_at >= ${fromMonth.toISOString()}
    GROUP BY 1
    ORDER BY 1`);
  return rows.map((row) => ({ month: row.month, paid: BigInt(row.paid), runs: Number(row.runs), recipients: Number(row.recipients) }));
}
