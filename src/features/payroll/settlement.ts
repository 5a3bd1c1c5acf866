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
  const paid = await store.paidItemsWithRecipients(db, runId);
  const run = (await store.findRun(db, runId))!;
  const total = paid.reduce((sum, item) => sum + item.amount, 0n);
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
  return true;
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
