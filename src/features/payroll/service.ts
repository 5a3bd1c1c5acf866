import { randomUUID } from 'node:crypto';
import { isAddressEqual, type Address, type Hex } from 'viem';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import { ChainRevertError } from '../../chains/evm/connection.js';
import { isUniqueViolation, type Database, type Db } from '../../db/client.js';
import type { Caller, FeePayment } from '../../http/context.js';
import { AppError, notFound } from '../../errors.js';
import { formatUsd } from '../../money.js';
import { recordAudit } from '../../audit/store.js';
import { PaidCallers, type PaidCaller } from '../employers/index.js';
import type { EmployersService } from '../employers/index.js';
import { unpayableReason, type EmployeeRow, type EmployerRow } from '../employers/index.js';
import { nextPayment, scheduleFromColumns, utcDay, type PayPeriod } from '../employers/index.js';
import { encodeMemo } from '../memo/index.js';
import type { TreasuryService } from '../treasury/index.js';
import { advancesToNet, netAdvances } from '../wages/index.js';
import { fillMonths, monthStart } from './cost-history.js';
import { expectedPay, RECENT_DAYS, runWarnings, type RunWarning } from './run-warnings.js';
import { INSUFFICIENT_TREASURY_REASON, RunBatches } from './batches.js';
import { finishRun } from './settlement.js';
import type { SolanaPolicyWallet } from './solana-policy.js';
import * as store from './store.js';
import type { MonthlyCost } from './store.js';

/** Sanctions and blocklists (the compliance feature), checked for every recipient before a run is stored. */
export interface RecipientScreen {
  blockedWallets(employerId: string, wallets: string[]): Promise<Map<string, string>>;
  /** Records, in the run's transaction, that these recipients passed the screen. */
  recordPayrollScreen(db: Db, employer: { id: string; tip403PolicyId: bigint | null }, recipients: { employeeId: string; wallet: string }[]): Promise<void>;
}

export interface PrepareInput {
  items: { employeeId: string; amount: bigint; walletAddress?: string | undefined }[];
  payPeriodStart: Date | null;
  payPeriodEnd: Date | null;
  /** The day the run pays (YYYY-MM-DD), e.g. the scheduled pay date. */
  payDate: string | null;
}

export interface PreparedRun {
  run: store.RunRow;
  accountId: bigint;
  /** `amount` is what the item pays: the gross less `advanceDeduction`. */
  items: { employeeId: string; walletAddress: string; amount: bigint; advanceDeduction: bigint; memo: Hex }[];
  calldata: { chainId: number; to: Address; data: Hex };
}

export interface Execution {
  /** The first batch's transaction. */
  txHash: Hex;
  /** Every paid batch's transaction, in order. */
  txHashes: Hex[];
  /** Recipients paid (all of the run's Tempo items unless a batch was refused). */
  recipientCount: number;
  batchCount: number;
  status: 'confirmed' | 'partially_paid';
  failureReason: string | null;
  accountId: bigint;
}

export type RunWithBatches = store.RunRow & { batches: store.BatchRow[] };

/** How long a redeemed execution waits for its rebroadcast batch to mine before answering that it is still pending. */
const BATCH_WAIT_MS = 30_000;

/** The 422 of a run whose first batch the chain refused: nothing was paid. */
const refusedOnChain = (runId: string, reason: string) =>
  new AppError(reason === INSUFFICIENT_TREASURY_REASON ? 'INSUFFICIENT_TREASURY' : 'PAYROLL_REVERTED', `The payroll batch was refused on chain: ${reason}. Nothing was paid.`,
    { payroll_run_id: runId },
  );


/**
 * What a payment of `gross` pays once the employee's advances (streamed salary already claimed,
 * `advanced`) are deducted: the one place payroll nets them. Null when the advances are not less
 * than the payment: they wait, whole, for a larger run.
 */
export function netPay(gross: bigint, advanced: bigint): { amount: bigint; advanceDeduction: bigint } | null {
  return advanced < gross ? { amount: gross - advanced, advanceDeduction: advanced } : null;
}

/** What a payment was worth before its advances were deducted: `amount` (net) plus the deduction. */
export function grossPay(item: { amount: bigint; advanceDeduction: bigint }): bigint {
  return item.amount + item.advanceDeduction;
}

/**
 * The pay date a payslip shows: only a paid item has one; it is the run's pay date when the run
 * has one (the scheduled day the owner paid for), else the moment the payment was final.
 */
export function payslipPayDate(item: { status: store.ItemStatus; finalizedAt: Date | null }, runPayDate: string | null): Date | null {
  if (item.status !== 'paid') return null;
  return runPayDate ? new Date(`${runPayDate}T00:00:00Z`) : item.finalizedAt;
}

/** One payslip (issue 29): one employee's item of one run past draft, as the employee and the owner read it. */
export interface Payslip {
  runId: string;
  employeeId: string;
  employeeName: string | null;
  employerId: string;
  employerName: string | null;
  status: store.ItemStatus;
  chain: 'tempo' | 'solana';
  walletAddress: string;
  gross: bigint;
  advanceDeduction: bigint;
  net: bigint;
  memo: string | null;
  txHash: string | null;
  /** The explorer page of a Tempo payment, when the chain has one. */
  txUrl: string | null;
  blockNumber: bigint | null;
  payPeriod: { start: Date | null; end: Date | null } | null;
  /** The run's pay date, else when the payment was final; null until it is paid (payslipPayDate). */
  payDate: Date | null;
  createdAt: Date;
}

/** The expected pay of a period (`PayrollService.expectedPay`). */
export interface ExpectedPay {
  /** The scheduled pay date when the period is the schedule's next one; null otherwise. */
  payDate: string | null;
  /** The period the amounts are for; null: none given and no schedule (a twelfth of the year). */
  period: PayPeriod | null;
  /** Over the employees payroll can pay now. */
  total: bigint;
  employees: { employee: EmployeeRow; amount: bigint; payable: boolean }[];
}

export interface DecisionItem {
  employeeId: string;
  amount: bigint;
  chain: 'tempo' | 'solana';
}

export interface DecisionExecution {
  runId: string;
  decisionId: string;
  tempoTxHash: Hex | null;
  tempoBroadcastError: string | null;
  solanaSignatures: string[];
  solanaBroadcastError: string | null;
  solanaPolicyRejections: { employee_id: string; reason: string }[];
  total: bigint;
  employeeCount: number;
}

/**
 * Payroll runs (spec 4.8 prepare/submit/runs, 4.3 execute, payslips and history). Runs move
 * draft -> submitted -> confirmed | failed | partially_paid, each step a compare-and-set; an
 * executed run pays in batch transactions, each with its own state (RunBatches, docs/api.md).
 */
export interface PayrollServiceOptions {
  database: Database;
  employers: EmployersService;
  treasury: TreasuryService;
  tempo: TempoChain;
  /** Screens every recipient before a run is stored; null screens nobody. */
  screen: RecipientScreen | null;
  /** An operator's cap on recipients per batch transaction (PAYROLL_BATCH_MAX_RECIPIENTS), under what the gas limit allows. */
  batchMaxRecipients?: number | undefined;
}

export class PayrollService {
  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly treasury: TreasuryService;
  private readonly tempo: TempoChain;
  private readonly screen: RecipientScreen | null;
  private readonly batches: RunBatches;

  constructor(options: PayrollServiceOptions) {
    this.database = options.database;
    this.employers = options.employers;
    this.treasury = options.treasury;
    this.tempo = options.tempo;
    this.screen = options.screen;
    this.batches = new RunBatches({
      database: options.database,
      tempo: options.tempo,
      accountId: (employerId) => options.treasury.accountId(employerId),
      maxRecipients: options.batchMaxRecipients,
    });
  }

  /** Spec 4.8's seven steps; everything is checked before anything is written. */
  async prepare(caller: Caller, employerId: string, input: PrepareInput, requestId: string): Promise<PreparedRun> {
    const employer = await this.employers.requireOwned(this.database.db, caller, employerId);

    // 1-2. Items arrive parsed, in base units; each employee once.
    const seen = new Set<string>();
    input.items.forEach((item, index) => {
      if (seen.has(item.employeeId)) throw new AppError('VALIDATION_ERROR', `items.${index}.employee_id: appears twice in this run`, { field: `items.${index}.employee_id` });
      seen.add(item.employeeId);
    });

    // Every employee and wallet must be this employer's: others' answer like missing ones.
    const staff = new Map((await this.employers.employeesByIds(employerId, [...seen])).map((e) => [e.id, e]));
    const unpayable: { employee_id: string; reason: string }[] = [];
    const recipients = input.items.map((item, index) => {
      const employee = staff.get(item.employeeId);
      if (!employee) throw new AppError('NOT_FOUND', 'Employee not found.', { field: `items.${index}.employee_id` });
      if (item.walletAddress && !(employee.walletAddress && isAddressEqual(item.walletAddress as Address, employee.walletAddress as Address))) {
        throw new AppError('NOT_FOUND', 'Wallet not found.', { field: `items.${index}.wallet_address` });
      }
      const reason = unpayableReason(employee);
      if (reason) unpayable.push({ employee_id: employee.id, reason });
      return { employee, amount: item.amount };
    });
    if (unpayable.length > 0) {
      throw new AppError('EMPLOYEE_NOT_PAYABLE', `${unpayable.length} employee(s) cannot be paid now.`, { employees: unpayable });
    }
    // Advances claimed since the employee's last run are deducted; each is netted by one run.
    const { advanceIds, payments } = await this.netOfAdvances(recipients);
    // 3-4. Treasury balance, sanctions and blocklists now; the TIP-403 verdict runs alongside 5-6.
    const total = payments.reduce((sum, p) => sum + p.amount, 0n);
    const checks = await this.checkFundsAndRecipients(employer, total, payments.map((p) => ({ employeeId: p.employee.id, wallet: p.employee.walletAddress as Address })));

    // 5. Memos, bound to the run id chosen here.
    const runId = randomUUID();
    const items = payments.map(({ employee, amount, advanceDeduction }) => ({
      employeeId: employee.id,
      walletAddress: employee.walletAddress!,
      amount,
      advanceDeduction,
      memo: encodeMemo({
        type: 'salary',
        employerId,
        employeeId: employee.id,
        runId,
        amount,
        payPeriodStart: input.payPeriodStart,
        payPeriodEnd: input.payPeriodEnd,
        costCentre: employee.costCentre,
      }),
    }));

    // 6. The draft run and its items, in one transaction, committed only once the TIP-403 verdict is in.
    const run = await this.database.transaction(async (tx) => {
      const inserted = await store.insertRun(
        tx.db,
        { id: runId, employerId, totalAmount: total, payPeriodStart: input.payPeriodStart, payPeriodEnd: input.payPeriodEnd, payDate: input.payDate, createdBy: caller.userId },
        items.map((item) => ({ ...item, chain: 'tempo' as const, status: 'pending' as const, reason: null })),
      );
      if ((await netAdvances(tx.db, runId, advanceIds)) !== advanceIds.length) {
        throw new AppError('ADVANCES_CHANGED', 'A payroll run prepared at the same time netted some of these advances; prepare this run again.');
      }
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'payroll.prepared',
        employerId,
        targetType: 'payroll_run',
        targetId: runId,
        details: { recipient_count: items.length, total_usd: formatUsd(total) },
        requestId,
      });
      await checks.policyCheck;
      await this.screen?.recordPayrollScreen(tx.db, employer, items.map((i) => ({ employeeId: i.employeeId, wallet: i.walletAddress })));
      return inserted;
    });

    // 7. The unsigned batch call.
    const call = this.tempo.batchPayrollCall(
      checks.accountId,
      items.map((i) => ({ recipient: i.walletAddress as Address, amount: i.amount, memo: i.memo })),
    );
    return { run, accountId: checks.accountId, items, calldata: { chainId: this.tempo.connection.chain.id, to: call.to, data: call.data } };
  }

  /**
   * Each payment net of the employee's advances not yet netted (`netPay`), and the ids of those
   * advances; 422 naming the employees whose advances the payment does not exceed.
   */
  private async netOfAdvances(recipients: { employee: EmployeeRow; amount: bigint }[]) {
    const open = await advancesToNet(this.database.db, recipients.map((r) => r.employee.id));
    const advancedBy = new Map<string, bigint>();
    for (const advance of open) advancedBy.set(advance.employeeId, (advancedBy.get(advance.employeeId) ?? 0n) + advance.amount);
    const exceeding: { employee_id: string; amount_usd: string; advances_usd: string }[] = [];
    const payments = recipients.map(({ employee, amount }) => {
      const advanced = advancedBy.get(employee.id) ?? 0n;
      const net = netPay(amount, advanced);
      if (!net) exceeding.push({ employee_id: employee.id, amount_usd: formatUsd(amount), advances_usd: formatUsd(advanced) });
      return { employee, ...(net ?? { amount, advanceDeduction: 0n }) };
    });
    if (exceeding.length > 0) {
      throw new AppError('ADVANCES_EXCEED_PAY', `${exceeding.length} employee(s) have claimed advances this payment does not exceed; they are deducted from a later, larger run.`, {
        employees: exceeding,
      });
    }
    return { advanceIds: open.map((a) => a.id), payments };
  }

  /**
   * Step 3 (the treasury's available balance covers `total`) and step 4 (sanctions and blocklists,
   * then the employer's TIP-403 policy, each batched over every wallet): a 422 naming what fails.
   * The TIP-403 verdict comes back as a promise (`policyCheck`), so a caller can overlap the chain
   * reads with its own work; it must await it before anything leaves the transaction.
   */
  private async checkFundsAndRecipients(employer: EmployerRow, total: bigint, recipients: { employeeId: string; wallet: Address }[]) {
    const balances = await this.treasury.account(employer.id);
    if (balances.available < total) {
      throw new AppError('INSUFFICIENT_TREASURY', 'The treasury’s available balance does not cover this run.', {
        available_usd: formatUsd(balances.available),
        required_usd: formatUsd(total),
      });
    }
    const wallets = recipients.map((r) => r.wallet);
    const screened = (await this.screen?.blockedWallets(employer.id, wallets)) ?? new Map<string, string>();
    const refuse = (reasons: Map<string, string>) => {
      const blocked = recipients.flatMap(({ employeeId, wallet }) => {
        const reason = reasons.get(wallet.toLowerCase());
        return reason ? [{ employee_id: employeeId, wallet_address: wallet, reason }] : [];
      });
      if (blocked.length === 0) return;
      throw new AppError('RECIPIENT_BLOCKED', `${blocked.length} recipient wallet(s) are blocked: ${blocked.map((b) => b.wallet_address).join(', ')}.`, {
        blocked_wallets: blocked,
      });
    };
    refuse(screened);
    const policyId = employer.tip403PolicyId;
    const policyCheck =
      policyId === null || wallets.length === 0
        ? Promise.resolve()
        : this.tempo.areAuthorized(policyId, wallets).then((authorized) =>
            refuse(new Map(wallets.flatMap((wallet, i) => (authorized[i] ? [] : [[wallet.toLowerCase(), `not authorized by TIP-403 policy ${policyId}`]])))),
          );
    policyCheck.catch(() => {}); // awaited by the caller; this only keeps an early rejection from going unhandled
    return { ...balances, policyCheck };
  }

  /**
   * What the wizard warns about before a run is paid (never a refusal): a pay period another run
   * already paid, employees paid in the last days, amounts far from the salary for the period.
   */
  async runWarnings(caller: Caller, employerId: string, input: PrepareInput): Promise<RunWarning[]> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    const db = this.database.db;
    const ids = [...new Set(input.items.map((i) => i.employeeId))];
    const staff = new Map((await this.employers.employeesByIds(employerId, ids)).map((e) => [e.id, e]));
    const items = input.items.map((item, index) => {
      const employee = staff.get(item.employeeId);
      if (!employee) throw new AppError('NOT_FOUND', 'Employee not found.', { field: `items.${index}.employee_id` });
      return { employeeId: employee.id, fullName: employee.fullName, annualSalary: employee.annualSalary, amount: item.amount };
    });
    const period = input.payPeriodStart && input.payPeriodEnd ? { start: input.payPeriodStart, end: input.payPeriodEnd } : null;
    const now = this.database.clock.now();
    const [overlapping, recent] = await Promise.all([
      period ? store.overlappingPaidRuns(db, employerId, period.start, period.end) : [],
      store.latestPaymentsSince(db, employerId, items.map((i) => i.employeeId), new Date(now.getTime() - RECENT_DAYS * 86_400_000)),
    ]);
    return runWarnings({ items, period, overlapping, recent }, now);
  }

  /**
   * What each active employee earns for a pay period (the rule the outlier warning compares with),
   * and the total over those payroll can pay now. Without `period`, the schedule's next one (and
   * its pay date); without a schedule either, a twelfth of the annual salary.
   */
  async expectedPay(caller: Caller, employerId: string, period: PayPeriod | null, now = this.database.clock.now()): Promise<ExpectedPay> {
    const employer = await this.employers.requireOwned(this.database.db, caller, employerId);
    const schedule = scheduleFromColumns(employer);
    const next = !period && schedule ? nextPayment(schedule, utcDay(now)) : null;
    const chosen = period ?? next?.period ?? null;
    const days = chosen && { start: new Date(`${chosen.start}T00:00:00Z`), end: new Date(`${chosen.end}T00:00:00Z`) };
    const employees = (await this.employers.activeEmployees(employerId)).map((employee) => ({
      employee,
      amount: expectedPay(employee.annualSalary, days),
      payable: unpayableReason(employee) === null,
    }));
    const total = employees.reduce((sum, e) => (e.payable ? sum + e.amount : sum), 0n);
    return { payDate: next?.payDate ?? null, period: chosen, total, employees };
  }

  /**
   * The owner signed and broadcast the batch; record its hash (draft -> submitted, once), then
   * look for its receipt. A second submit is 409; so is a hash another run already recorded.
   */
  async submit(caller: Caller, employerId: string, runId: string, txHash: Hex, requestId: string): Promise<RunWithBatches> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    const claimed = await this.database.transaction(async (tx) => {
      const run = await store.findEmployerRun(tx.db, employerId, runId);
      if (!run) throw notFound('Payroll run');
      let won: store.RunRow | null;
      try {
        won = await store.claimDraft(tx.db, runId, { submittedBy: 'owner', txHash: txHash.toLowerCase() });
        if (won) await store.recordOwnerBatch(tx.db, runId, txHash.toLowerCase());
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new AppError('TX_HASH_IN_USE', 'Another payroll run already recorded this transaction hash.', { field: 'tx_hash' });
        }
        throw error;
      }
      if (!won) throw new AppError('RUN_NOT_DRAFT', `Payroll run is ${run.status}; only a draft can be submitted.`, { status: run.status });
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'payroll.submitted',
        employerId,
        targetType: 'payroll_run',
        targetId: runId,
        details: { tx_hash: txHash },
        requestId,
      });
      return won;
    });
    const run = (await this.reconcile(claimed.id)) ?? claimed;
    return { ...run, batches: await store.batchesOfRun(this.database.db, run.id) };
  }

  /** A page of the employer's runs, newest first, each with its batches. */
  async listRuns(caller: Caller, employerId: string, page: { page: number; limit: number }): Promise<{ rows: RunWithBatches[]; total: number }> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    const { rows, total } = await store.listRuns(this.database.db, employerId, { offset: (page.page - 1) * page.limit, limit: page.limit });
    const batches = await store.batchesOfRuns(this.database.db, rows.map((run) => run.id));
    return { rows: rows.map((run) => ({ ...run, batches: batches.get(run.id) ?? [] })), total };
  }

  /** GET /api/employers/{id}/payroll/cost-history: what confirmed runs paid in each of the last `months` UTC months (zeros included). */
  async costHistory(caller: Caller, employerId: string, months: number, now = this.database.clock.now()): Promise<MonthlyCost[]> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    return fillMonths(now, months, await store.monthlyPaidCosts(this.database.db, employerId, monthStart(now, months - 1)));
  }

  /** A run the paid caller may act on: the employer's owner or its agent key; anyone else gets 404. */
  async runFor(paid: PaidCaller, runId: string): Promise<store.RunRow> {
    const run = await store.findRun(this.database.db, runId);
    if (!run || !PaidCallers.actsFor(paid, run.employerId)) throw notFound('Payroll run');
    return run;
  }

  /**
   * Executes a draft run from the service's agent wallet, in as many batch transactions as its size
   * needs (RunBatches). The draft -> submitted claim happens first, so concurrent calls execute the
   * run once; each batch's signed bytes are stored before broadcast, so a crash converges
   * (reconcile) instead of paying twice. The run keeps the fee that bought its execution: a
   * redeemed fee (its first answer was lost) gets that execution's answer again, never a second run.
   */
  async execute(run: store.RunRow, actor: { userId: string | null; kind: 'user' | 'agent' }, requestId: string, fee: FeePayment | null = null): Promise<Execution> {
    if (fee?.redeemed) {
      const earlier = await store.findRunByFeePayment(this.database.db, fee.id);
      if (earlier) return this.executionOf(earlier);
    }
    const claimed = await this.database.transaction(async (tx) => {
      const won = await store.claimDraft(tx.db, run.id, { submittedBy: 'agent', txHash: null, feePaymentId: fee?.id ?? null });
      if (!won) {
        const current = await store.findRun(tx.db, run.id);
        throw new AppError('RUN_NOT_DRAFT', `Payroll run is ${current?.status ?? run.status}; it has already been executed or submitted.`, {
          status: current?.status ?? run.status,
          tx_hash: current?.txHash ?? null,
        });
      }
      await recordAudit(tx.db, {
        actorUserId: actor.userId,
        actorKind: actor.kind,
        action: 'payroll.execute_started',
        employerId: run.employerId,
        targetType: 'payroll_run',
        targetId: run.id,
        requestId,
      });
      return won;
    });
    await this.settle(claimed, 0);
    return this.answer(claimed.id);
  }

  /**
   * The answer of the execution a fee already bought; when a crash interrupted it, it is finished
   * first (unsent batches sent, signed ones rebroadcast as the same bytes and settled).
   */
  private async executionOf(run: store.RunRow): Promise<Execution> {
    await this.settle(run, 0);
    const waiting = (await store.batchesOfRun(this.database.db, run.id)).find((b) => b.status === 'submitted');
    if (waiting?.txHash) {
      await this.tempo.connection.publicClient.waitForTransactionReceipt({ hash: waiting.txHash as Hex, timeout: BATCH_WAIT_MS }).catch(() => null);
      await this.settle(run, 0);
    }
    return this.answer(run.id);
  }

  /** Moves a submitted run's batches as far as they go now, then gives the run its final state if every batch is final. */
  private async settle(run: store.RunRow, claimStaleMs: number, options?: { send: boolean }): Promise<void> {
    if (run.status !== 'submitted') return;
    await this.batches.advance(run, claimStaleMs, options);
    await this.database.transaction((tx) => finishRun(tx.db, run.id));
  }

  /** An execution's answer from where its run stands: paid (all or some batches), refused (422), or still on its way (409). */
  private async answer(runId: string): Promise<Execution> {
    const run = (await store.findRun(this.database.db, runId))!;
    if (run.status === 'failed') throw refusedOnChain(run.id, run.failureReason ?? 'unknown');
    if (run.status !== 'confirmed' && run.status !== 'partially_paid') {
      throw new AppError('RUN_NOT_DRAFT', `Payroll run is ${run.status}; its batches are not all mined yet.`, { status: run.status, tx_hash: run.txHash });
    }
    const batches = await store.batchesOfRun(this.database.db, runId);
    const paid = batches.filter((b) => b.status === 'confirmed');
    return {
      txHash: run.txHash as Hex,
      txHashes: paid.map((b) => b.txHash as Hex),
      recipientCount: paid.reduce((sum, b) => sum + b.recipientCount, 0),
      batchCount: batches.length,
      status: run.status,
      failureReason: run.failureReason,
      accountId: await this.treasury.accountId(run.employerId),
    };
  }

  /**
   * Brings a submitted run to its final state from the chain: each batch confirmed when its
   * transaction mined and paid exactly its items, refused when it reverted or paid something else;
   * an agent run's unsent batches are sent (unless `send` is false). A batch not mined yet keeps the
   * run submitted.
   */
  async reconcile(runId: string, claimStaleMs = 60_000, options?: { send: boolean }): Promise<store.RunRow | null> {
    const run = await store.findRun(this.database.db, runId);
    if (!run) return null;
    await this.settle(run, claimStaleMs, options);
    return store.findRun(this.database.db, runId);
  }

  /**
   * Runs stuck in submitted (a crash mid-execute, an owner's transaction not yet mined): their
   * batches settled, and the unsent ones sent unless `send` is false.
   */
  async reconcileStale(olderThanMs = 60_000, options?: { send: boolean }): Promise<number> {
    const stale = await store.staleSubmittedRuns(this.database.db, new Date(this.database.clock.nowMs() - olderThanMs));
    for (const run of stale) await this.reconcile(run.id, olderThanMs, options);
    return stale.length;
  }

  employerOf(run: store.RunRow) {
    return this.employers.findEmployer(run.employerId);
  }

  /** One payslip: the employee themselves, or the employer's owner or agent; anyone else 404. */
  async payslip(paid: PaidCaller, runId: string, employeeId: string) {
    const run = await store.findRun(this.database.db, runId);
    const allowed = run && (PaidCallers.actsFor(paid, run.employerId) || PaidCallers.isEmployee(paid, employeeId));
    const item = allowed ? await store.findItem(this.database.db, runId, employeeId) : null;
    if (!run || !item) throw notFound('Payslip');
    return { run, item };
  }

  // ---- payslips (issue 29): the employee themselves or the employer's owner; anyone else 404 ----

  async employeePayslips(caller: Caller, employeeId: string, page: { page: number; limit: number }) {
    await this.payslipEmployee(caller, employeeId);
    const { rows, total } = await store.employeePayslips(this.database.db, employeeId, { offset: (page.page - 1) * page.limit, limit: page.limit });
    return { payslips: rows.map((row) => this.toPayslip(row)), total };
  }

  async employeePayslip(caller: Caller, employeeId: string, runId: string): Promise<Payslip> {
    await this.payslipEmployee(caller, employeeId);
    const row = await store.findPayslip(this.database.db, runId, employeeId);
    if (!row) throw notFound('Payslip');
    return this.toPayslip(row);
  }

  /** A run's payslips, one per employee, for the employer's owner. */
  async runPayslips(caller: Caller, employerId: string, runId: string): Promise<Payslip[]> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    if (!(await store.findEmployerRun(this.database.db, employerId, runId))) throw notFound('Payroll run');
    return (await store.runPayslips(this.database.db, runId)).map((row) => this.toPayslip(row));
  }

  /** Only the employee themselves or the owner of their employer; anyone else gets 404 like a missing one. */
  private async payslipEmployee(caller: Caller, employeeId: string): Promise<void> {
    const employee = await this.employers.findEmployee(employeeId);
    if (!employee || !(caller.employeeIds.includes(employeeId) || caller.ownedEmployerId === employee.employerId)) throw notFound('Employee');
  }

  private toPayslip({ item, payPeriodStart, payPeriodEnd, runPayDate, employeeName, employerName }: store.PayslipRow): Payslip {
    return {
      runId: item.runId,
      employeeId: item.employeeId,
      employeeName,
      employerId: item.employerId,
      employerName,
      status: item.status,
      chain: item.chain,
      walletAddress: item.walletAddress,
      gross: grossPay(item),
      advanceDeduction: item.advanceDeduction,
      net: item.amount,
      memo: item.memo,
      txHash: item.txHash,
      txUrl: item.txHash && item.chain === 'tempo' ? this.tempo.explorerUrl(item.txHash as Hex) : null,
      blockNumber: item.blockNumber,
      payPeriod: payPeriodStart || payPeriodEnd ? { start: payPeriodStart, end: payPeriodEnd } : null,
      payDate: payslipPayDate(item, runPayDate),
      createdAt: item.createdAt,
    };
  }

  /** An employee's payments, newest first: the employee, or their employer's owner or agent. */
  async history(paid: PaidCaller, employeeId: string, limit: number) {
    const employee = await this.employers.findEmployee(employeeId);
    if (!employee || !(PaidCallers.isEmployee(paid, employeeId) || PaidCallers.actsFor(paid, employee.employerId))) throw notFound('Employee');
    return { employee, items: await store.employeeItems(this.database.db, employeeId, limit) };
  }

  /** The owner's payroll transactions (payment items), filtered and paged (spec 4.8). */
  async transactions(caller: Caller, filters: store.TransactionFilters, page: { page: number; limit: number }) {
    if (!caller.ownedEmployerId) throw notFound('Employer');
    return store.listEmployerItems(this.database.db, caller.ownedEmployerId, filters, { offset: (page.page - 1) * page.limit, limit: page.limit });
  }

  // ---- agent-planned payroll (spec 4.5 x402/payroll/execute) ----

  /** Records an agent's payroll plan for the owner to execute later (kind `payroll`, status `proposed`). */
  async proposeDecision(caller: Caller, employerId: string, items: DecisionItem[], period: PlanPeriod, agentIdentifier: string | null, requestId: string) {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    // A plan names only this employer's employees: another's answers like a missing one.
    const staff = new Set((await this.employers.employeesByIds(employerId, [...new Set(items.map((i) => i.employeeId))])).map((e) => e.id));
    items.forEach((item, index) => {
      if (!staff.has(item.employeeId)) throw new AppError('NOT_FOUND', 'Employee not found.', { field: `items.${index}.employee_id` });
    });
    return this.database.transaction(async (tx) => {
      const decision = await store.insertDecision(tx.db, {
        employerId,
        agentIdentifier,
        plan: {
          items: items.map((i) => ({ employee_id: i.employeeId, amount: i.amount.toString(), chain: i.chain })),
          pay_period_start: period.start?.toISOString() ?? null,
          pay_period_end: period.end?.toISOString() ?? null,
          pay_date: period.payDate,
        },
      });
      await recordAudit(tx.db, { actorUserId: caller.userId, actorKind: 'user', action: 'payroll.decision_proposed', employerId, targetType: 'agent_decision', targetId: decision.id, requestId });
      return decision;
    });
  }

  /**
   * Executes a proposed decision once (proposed -> executing by compare-and-set): Tempo items in
   * batches from the agent wallet (RunBatches); Solana items one by one through the policy wallet, which may
   * reject an item (policy_rejected) without failing the run. The Solana leg is funded from the
   * employer's treasury first (moved to the service wallet, the part not sent is returned).
   */
  async executeDecision(caller: Caller, employerId: string, decisionId: string, solanaWallet: SolanaPolicyWallet, requestId: string): Promise<DecisionExecution> {
    const employer = await this.employers.requireOwned(this.database.db, caller, employerId);
    const decision = await store.findEmployerDecision(this.database.db, employerId, decisionId);
    if (!decision) throw notFound('Decision');
    const claimed = await this.database.transaction((tx) => store.moveDecision(tx.db, decisionId, 'proposed', 'executing'));
    if (!claimed) throw new AppError('DECISION_NOT_PROPOSED', `Decision is ${decision.status}; it runs once.`, { status: decision.status });

    let prepared: Awaited<ReturnType<typeof this.storeDecisionRun>>;
    try {
      prepared = await this.storeDecisionRun(employer, decisionId, decision.plan, caller, requestId);
    } catch (error) {
      // Nothing was sent: the decision may run again once the problem is fixed.
      await this.database.transaction((tx) => store.moveDecision(tx.db, decisionId, 'executing', 'proposed'));
      throw error;
    }
    const { run, items, accountId } = prepared;

    // Tempo items in batches from the agent wallet; an error other than a refusal leaves them to the reconciler.
    const unknownOutcome = await this.batches.advance(run, 0).then(
      () => null,
      (error: unknown) => (error as Error).message,
    );
    const refused = (await store.batchesOfRun(this.database.db, run.id)).find((b) => b.status === 'failed');
    const tempoBroadcastError = unknownOutcome ?? refused?.failureReason ?? null;
    const tempoTxHash = ((await store.findRun(this.database.db, run.id))?.txHash ?? null) as Hex | null;

    const solana = await this.paySolanaItems(accountId, items.filter((i) => i.chain === 'solana'), solanaWallet);
    await this.database.transaction(async (tx) => {
      await finishRun(tx.db, run.id);
      await store.moveDecision(tx.db, decisionId, 'executing', 'executed');
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'payroll.decision_executed',
        employerId,
        targetType: 'payroll_run',
        targetId: run.id,
        details: { decision_id: decisionId, tempo_tx_hash: tempoTxHash, solana_signatures: solana.signatures, rejections: solana.rejections.length },
        requestId,
      });
    });
    return {
      runId: run.id,
      decisionId,
      tempoTxHash,
      tempoBroadcastError,
      solanaSignatures: solana.signatures,
      solanaBroadcastError: solana.error,
      solanaPolicyRejections: solana.rejections,
      total: run.totalAmount,
      employeeCount: items.length,
    };
  }

  /** Checks a decision's plan like a prepared run and stores it as a submitted run of the agent. */
  private async storeDecisionRun(employer: EmployerRow, decisionId: string, plan: unknown, caller: Caller, requestId: string) {
    const planned = parsePlan(plan);
    const period = planPeriod(plan);
    const staff = new Map((await this.employers.employeesByIds(employer.id, planned.map((i) => i.employeeId))).map((e) => [e.id, e]));
    const unpayable = planned.flatMap((item) => {
      const employee = staff.get(item.employeeId);
      const reason = employee ? unpayableReason(employee, item.chain) : 'not an employee of this employer';
      return reason ? [{ employee_id: item.employeeId, reason }] : [];
    });
    if (unpayable.length > 0) throw new AppError('EMPLOYEE_NOT_PAYABLE', `${unpayable.length} planned payment(s) cannot be made now.`, { employees: unpayable });
    const total = planned.reduce((sum, i) => sum + i.amount, 0n);
    const tempoRecipients = planned.filter((i) => i.chain === 'tempo').map((i) => ({ employeeId: i.employeeId, wallet: staff.get(i.employeeId)!.walletAddress as Address }));
    const { accountId, policyCheck } = await this.checkFundsAndRecipients(employer, total, tempoRecipients);
    await policyCheck;

    const runId = randomUUID();
    const items = planned.map((item) => {
      const employee = staff.get(item.employeeId)!;
      return {
        employeeId: item.employeeId,
        chain: item.chain,
        walletAddress: (item.chain === 'tempo' ? employee.walletAddress : employee.solanaWalletAddress)!,
        amount: item.amount,
        memo: encodeMemo({
          type: 'salary',
          employerId: employer.id,
          employeeId: item.employeeId,
          runId,
          amount: item.amount,
          payPeriodStart: period.start,
          payPeriodEnd: period.end,
          costCentre: employee.costCentre,
        }),
        status: 'pending' as const,
        reason: null,
      };
    });
    const run = await this.database.transaction(async (tx) => {
      const inserted = await store.insertRun(tx.db, { id: runId, employerId: employer.id, totalAmount: total, payPeriodStart: period.start, payPeriodEnd: period.end, payDate: period.payDate, createdBy: caller.userId, decisionId }, items);
      const submitted = await store.claimDraft(tx.db, runId, { submittedBy: 'agent', txHash: null });
      await this.screen?.recordPayrollScreen(tx.db, employer, tempoRecipients);
      await recordAudit(tx.db, { actorUserId: caller.userId, actorKind: 'user', action: 'payroll.execute_started', employerId: employer.id, targetType: 'payroll_run', targetId: runId, requestId });
      return submitted ?? inserted;
    });
    const stored = await store.itemsOfRun(this.database.db, run.id);
    return { run, items: stored, accountId };
  }

  /**
   * Pays the Solana items through the policy wallet. Their total moves from the employer's
   * treasury to the service wallet first; what was not sent (rejected or failed) goes back.
   */
  private async paySolanaItems(accountId: bigint, items: store.ItemRow[], wallet: SolanaPolicyWallet) {
    const result = { signatures: [] as string[], rejections: [] as { employee_id: string; reason: string }[], error: null as string | null };
    if (items.length === 0) return result;
    const total = items.reduce((sum, i) => sum + i.amount, 0n);
    try {
      await this.tempo.transferFromTreasury(accountId, this.tempo.serviceAddress, total, items[0]!.memo as Hex);
    } catch (error) {
      result.error = `funding the Solana payments from the treasury failed: ${error instanceof ChainRevertError ? error.errorName : (error as Error).message}`;
      for (const item of items) await store.settleItem(this.database.db, item.id, { status: 'failed', reason: result.error });
      return result;
    }
    let unsent = 0n;
    for (const item of items) {
      const outcome = await wallet.pay(item.walletAddress as never, item.amount, item.memo!);
      if (outcome.sent) {
        result.signatures.push(outcome.signature);
        await store.settleItem(this.database.db, item.id, { status: 'paid', txHash: outcome.signature });
        continue;
      }
      unsent += item.amount;
      if ('rejected' in outcome) {
        result.rejections.push({ employee_id: item.employeeId, reason: outcome.rejected });
        await store.settleItem(this.database.db, item.id, { status: 'policy_rejected', reason: outcome.rejected });
      } else {
        result.error ??= outcome.error;
        await store.settleItem(this.database.db, item.id, { status: 'failed', reason: outcome.error });
      }
    }
    if (unsent > 0n) {
      // The payments already sent stand; a refund that fails is reported, not thrown (the run must still finish).
      await this.tempo.depositToTreasury(accountId, unsent).catch((error: unknown) => {
        const refund = `returning ${formatUsd(unsent)} to the treasury failed: ${(error as Error).message}`;
        result.error = result.error ? `${result.error}; ${refund}` : refund;
      });
    }
    return result;
  }
}

/** A plan's pay period and pay date (plans made before they were recorded have none). */
export interface PlanPeriod {
  start: Date | null;
  end: Date | null;
  /** YYYY-MM-DD. */
  payDate: string | null;
}

function planPeriod(plan: unknown): PlanPeriod {
  const { pay_period_start: start, pay_period_end: end, pay_date: payDate } = plan as { pay_period_start?: unknown; pay_period_end?: unknown; pay_date?: unknown };
  return {
    start: typeof start === 'string' ? new Date(start) : null,
    end: typeof end === 'string' ? new Date(end) : null,
    payDate: typeof payDate === 'string' ? payDate : null,
  };
}

/** A stored plan back into items; a plan that no longer parses is refused, not guessed at. */
function parsePlan(plan: unknown): DecisionItem[] {
  const items = (plan as { items?: unknown }).items;
  if (!Array.isArray(items) || items.length === 0) throw new AppError('DECISION_INVALID', 'The decision has no payments.');
  return items.map((raw: { employee_id?: unknown; amount?: unknown; chain?: unknown }) => {
    if (typeof raw.employee_id !== 'string' || typeof raw.amount !== 'string' || !/^[1-9]\d*$/.test(raw.amount) || (raw.chain !== 'tempo' && raw.chain !== 'solana')) {
      throw new AppError('DECISION_INVALID', 'The decision holds a payment that is not valid.');
    }
    return { employeeId: raw.employee_id, amount: BigInt(raw.amount), chain: raw.chain };
  });
}
