import type { Db } from '../../db/client.js';
import { displayUsd, formatUsd } from '../../money.js';
import { queueEmail } from '../email/index.js';
import { parseAgentIdentifier } from '../agents/index.js';
import { notify } from '../notifications/index.js';
import { enqueueReputationWrite } from '../reputation/index.js';
import { releaseNettedAdvances } from '../wages/index.js';
import * as store from './store.js';

/**
 * A run's final state and what it sets off, in the caller's transaction: the employer's bell and,
 * for a confirmed run, one receipt email per paid employee. Both are keyed by (run) and (run,
 * employee), and follow a compare-and-set, so a retried job or request never repeats them.
 */
export async function confirmRun(db: Db, runId: string, mined: { txHash: string; blockNumber: bigint } | null): Promise<boolean> {
  if (!(await store.markConfirmed(db, runId, mined))) return false;
  const { run, paid, total } = await paidSoFar(db, runId);
  await notify(db, {
    employerId: run.employerId,
    type: 'payroll_confirmed',
    severity: 'success',
    title: `Payroll paid: ${displayUsd(total)} to ${paid.length} ${paid.length === 1 ? 'person' : 'people'}`,
    body: run.txHash ? `Transaction ${run.txHash}` : null,
    link: `/dashboard/payroll/${runId}`,
    data: { payroll_run_id: runId, tx_hash: run.txHash, recipient_count: paid.length, total_usd: formatUsd(total) },
    dedupeKey: `payroll-settled:${runId}`,
  });
  await rateExecutingAgent(db, run, total);
  await sendReceipts(db, runId, paid);
  return true;
}

/** A run that has just ended, its paid items with who was paid, and their total. */
async function paidSoFar(db: Db, runId: string) {
  const paid = await store.paidItemsWithRecipients(db, runId);
  const run = (await store.findRun(db, runId))!;
  return { run, paid, total: paid.reduce((sum, item) => sum + item.amount, 0n) };
}

/** One receipt email per paid employee, keyed by (run, employee) so a retry never repeats one. */
async function sendReceipts(db: Db, runId: string, paid: Awaited<ReturnType<typeof store.paidItemsWithRecipients>>): Promise<void> {
  for (const item of paid) {
    const amount = displayUsd(item.amount);
    await queueEmail(db, {
      to: item.email,
      subject: `${item.employerName} paid you ${amount}`,
      text: [
        `Hello ${item.fullName},`,
        '',
        `${item.employerName} has paid you ${amount} in USDC on ${item.chain === 'tempo' ? 'Tempo' : 'Solana'}.`,
        `Wallet: ${item.walletAddress}`,
        `Transaction: ${item.txHash ?? 'pending'}`,
        ...(item.memo ? [`Memo: ${item.memo}`] : []),
        '',
        'Your payslip is in the employee portal, under Activity.',
      ].join('\n'),
      dedupeKey: `payroll-receipt:${runId}:${item.employeeId}`,
    });
  }
}

/** Spec 6: a completed payroll that an ERC-8004 agent planned (x402/payroll/execute) earns it feedback. */
async function rateExecutingAgent(db: Db, run: store.RunRow, total: bigint): Promise<void> {
  const decision = run.decisionId ? await store.findEmployerDecision(db, run.employerId, run.decisionId) : null;
  const identity = decision?.agentIdentifier ? parseAgentIdentifier(decision.agentIdentifier) : null;
  if (identity?.kind !== 'erc8004' || total === 0n) return;
  await enqueueReputationWrite(db, {
    kind: 'erc8004_feedback',
    writeType: 'payroll',
    subject: identity.agentId.toString(),
    sourceType: 'payroll_run',
    sourceId: run.id,
    amount: total,
    score: 100,
  });
}

/**
 * A submitted run's final state once every batch is final: confirmed when all paid, failed when
 * the first was refused (nobody paid by it), partially_paid when a later one was. False while a
 * batch is still unsent or unmined, or when the run was final already. In the caller's transaction.
 */
export async function finishRun(db: Db, runId: string): Promise<boolean> {
  const batches = await store.batchesOfRun(db, runId);
  if (batches.some((b) => b.status === 'pending' || b.status === 'submitted')) return false;
  const paid = batches.filter((b) => b.status === 'confirmed');
  const refused = batches.find((b) => b.status === 'failed');
  const lastBlock = paid.at(-1)?.blockNumber ?? null;
  if (!refused) return confirmRun(db, runId, paid[0] && lastBlock !== null ? { txHash: paid[0].txHash!, blockNumber: lastBlock } : null);
  const reason = `batch ${refused.seq + 1} of ${batches.length}: ${refused.failureReason ?? 'refused'}`;
  return paid.length === 0 ? failRun(db, runId, refused.failureReason ?? 'refused') : partiallyPayRun(db, runId, reason, lastBlock);
}

/** Some batches paid and a later one was refused: receipts for the paid, the unpaid items' advances released. */
async function partiallyPayRun(db: Db, runId: string, reason: string, lastBlock: bigint | null): Promise<boolean> {
  if (!(await store.markPartiallyPaid(db, runId, reason, lastBlock))) return false;
  const unpaid = (await store.itemsOfRun(db, runId)).filter((item) => item.status === 'failed');
  await releaseNettedAdvances(db, runId, unpaid.map((item) => item.employeeId));
  const { run, paid, total } = await paidSoFar(db, runId);
  await notify(db, {
    employerId: run.employerId,
    type: 'payroll_partially_paid',
    severity: 'error',
    title: `Payroll partly paid: ${paid.length} of ${run.recipientCount} people; ${unpaid.length} not paid`,
    body: reason,
    link: `/dashboard/payroll/${runId}`,
    data: { payroll_run_id: runId, reason, paid_count: paid.length, unpaid_count: unpaid.length, paid_usd: formatUsd(total) },
    dedupeKey: `payroll-settled:${runId}`,
  });
  await sendReceipts(db, runId, paid);
  return true;
}

export async function failRun(db: Db, runId: string, reason: string): Promise<boolean> {
  if (!(await store.markFailed(db, runId, reason))) return false;
  // Nothing was paid: the advances it netted wait for the next run.
  await releaseNettedAdvances(db, runId);
  const run = (await store.findRun(db, runId))!;
  await notify(db, {
    employerId: run.employerId,
    type: 'payroll_failed',
    severity: 'error',
    title: 'Payroll failed: nobody was paid',
    body: reason,
    link: `/dashboard/payroll/${runId}`,
    data: { payroll_run_id: runId, reason },
    dedupeKey: `payroll-settled:${runId}`,
  });
  return true;
}
