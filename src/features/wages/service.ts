import { EventEmitter } from 'node:events';
import type { Address, Hex, TransactionReceipt } from 'viem';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { SalaryStream, TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database, Db } from '../../db/client.js';
import type { FeePayment } from '../../http/context.js';
import { AppError, type CodeWithStatus, notFound } from '../../errors.js';
import { formatUsd } from '../../money.js';
import { PaidCallers, type PaidCaller } from '../employers/index.js';
import type { EmployeeRow, EmployersService } from '../employers/index.js';
import type { TreasuryService } from '../treasury/index.js';
import * as store from './store.js';

/** A year of 365 days: the vesting rate is the annual salary spread over it. */
export const SECONDS_PER_YEAR = 31_536_000n;

/** The on-chain rate for an annual salary, in base units per second (rounded down). */
export const ratePerSecond = (annualSalary: bigint) => annualSalary / SECONDS_PER_YEAR;

/** A pending advance older than this was interrupted (crash) and no longer blocks a new one. */
const STALE_ADVANCE_MS = 2 * 60_000;

const unprocessable = (code: CodeWithStatus<422>, message: string) => new AppError(code, message);

/** A claimed stop is left to its round this long: far longer than a stopStream takes, so it runs out only for a round that died. */
const STOP_LEASE_SECONDS = 5 * 60;
const STOP_MAX_ATTEMPTS = 8;
/** The retry delay after the `attempts`-th failed attempt: 30 s, doubling, at most an hour. */
const stopBackoffSeconds = (attempts: number) => Math.min(30 * 2 ** Math.max(0, attempts - 1), 3600);

/** Thrown from the pre-broadcast hook when another round took the stop: nothing is sent. */
class ClaimLost extends Error {}
/** An earlier stop of the row is still in the node's pool: wait for it (never given up while it may land). */
class StopInFlight extends Error {}

/**
 * Why no salary may stream (or be advanced) to the employee's wallet now, or null. A wallet under
 * review or rejected is not paid, as payroll refuses it (docs/decisions.md, "A changed wallet").
 */
export function streamRefusal(employee: EmployeeRow): AppError | null {
  if (employee.manualReviewStatus === 'pending') {
    return new AppError('WALLET_UNDER_REVIEW', "The employee's payout wallet awaits the employer's review: nothing is streamed or advanced to it until the employer approves it.");
  }
  if (employee.manualReviewStatus === 'rejected') {
    return new AppError('WALLET_REVIEW_REJECTED', "The employer rejected the employee's payout wallet: nothing is streamed or advanced to it.");
  }
  return null;
}

const streamsTo = (employee: EmployeeRow, wallet: string) =>
  employee.status === 'active' && streamRefusal(employee) === null && employee.walletAddress?.toLowerCase() === wallet.toLowerCase();

/**
 * In the transaction of a change to an employee: queues the stop of the stream of the wallet the
 * change took salary away from (the wallet changed, went under review, or the employee left), and
 * returns the stop's id; null when the change leaves the stream as it was.
 */
export async function queueReleasedStream(db: Db, before: EmployeeRow, after: EmployeeRow): Promise<string | null> {
  const wallet = before.walletAddress;
  if (!wallet || streamsTo(after, wallet)) return null;
  const moved = after.walletAddress?.toLowerCase() !== wallet.toLowerCase();
  if (!moved && !streamsTo(before, wallet)) return null; // already not streamed: stopped when that began
  return store.queueStreamStop(db, { employeeId: before.id, employerId: before.employerId, wallet });
}

export interface StopRound {
  stopped: number;
  retried: number;
  failed: number;
}

export interface AdvanceClaim {
  amount: bigint;
  txHash: string;
  claimedAt: Date;
  wallet: Address;
}

/** What a balance stream needs to compute every tick in memory: no database or chain read per tick. */
export interface StreamBasis {
  employeeId: string;
  employerId: string;
  wallet: Address;
  /** The wallet's token balance when the basis was read. */
  walletBalance: bigint;
  ratePerSecond: bigint;
  /** Unix seconds (the chain's clock) from which the unclaimed amount accrues. */
  accruingSince: bigint;
}

/** One tick of the balance stream (spec 2.10). */
export interface BalanceTick {
  tick: number;
  employeeId: string;
  address: string;
  balance: string;
  balanceUsd: string;
  accrued_raw: string;
  accrued_usd: string;
  salary_per_second_usd: string;
  timestamp: number;
}

/**
 * Streamed wages (spec 2.10, 4.3): each employee's salary accrues per second on the StreamVesting
 * contract, from their employer's treasury account; the balance stream shows it live and an
 * advance claims it. Rules and trade-offs: docs/decisions.md, "Streamed wages".
 */
export class WagesService {
  /** Emits `<wallet lower-case>` when a claim or re-rate changed a stream, so open streams re-read it. */
  private readonly changes = new EventEmitter().setMaxListeners(0);
  private readonly starting = new Map<string, Promise<SalaryStream>>();
  private readonly agentAccounts = new Set<bigint>();

  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly treasury: TreasuryService;
  private readonly tempo: TempoChain;

  constructor(options: { database: Database; employers: EmployersService; treasury: TreasuryService; tempo: TempoChain }) {
    this.database = options.database;
    this.employers = options.employers;
    this.treasury = options.treasury;
    this.tempo = options.tempo;
  }

  /**
   * The employee the caller names (by id, or by wallet as the legacy fallback) when the caller
   * may see their wages: the employee themselves, or their employer's owner or agent. Anyone else
   * gets 404, like a missing record.
   */
  async employeeFor(paid: PaidCaller, by: { employeeId?: string | undefined; address?: string | undefined }, options: { selfOnly?: boolean } = {}): Promise<EmployeeRow> {
    if (by.employeeId) {
      const employee = await this.employers.findEmployee(by.employeeId);
      const allowed = employee && (PaidCallers.isEmployee(paid, employee.id) || (!options.selfOnly && PaidCallers.actsFor(paid, employee.employerId)));
      if (!allowed || employee.status !== 'active') throw notFound('Employee');
      return employee;
    }
    const scope =
      paid.kind === 'agent_key'
        ? { employerId: paid.employerId, employeeIds: [] }
        : paid.kind === 'user'
          ? { employerId: paid.caller.ownedEmployerId, employeeIds: paid.caller.employeeIds }
          : { employerId: null, employeeIds: [] };
    const [employee, other] = await this.employers.activeEmployeesPaidTo(by.address ?? '', scope);
    if (!employee) throw notFound('Employee');
    if (other) {
      throw new AppError('AMBIGUOUS_ADDRESS', 'More than one of your employees is paid to this address: name the employee with employeeId.');
    }
    return employee;
  }

  /**
   * Makes sure the employee's stream runs on chain at the rate of their annual salary: started on
   * first use, re-rated when the salary changed (stopped and started again: the stop pays what
   * accrued at the old rate, recorded as an advance). Never to a wallet under review or rejected.
   * Only a treasury the service administers can be streamed from.
   */
  async ensureStream(employee: EmployeeRow): Promise<{ stream: SalaryStream; wallet: Address }> {
    if (!employee.walletAddress) throw unprocessable('NO_WALLET', 'This employee has no wallet to stream salary to.');
    const refusal = streamRefusal(employee);
    if (refusal) throw refusal;
    const wallet = employee.walletAddress as Address;
    const rate = ratePerSecond(employee.annualSalary);
    if (rate === 0n) throw unprocessable('NO_SALARY', 'This employee has no annual salary, so nothing accrues.');
    const accountId = await this.treasury.accountId(employee.employerId);
    const current = await this.tempo.salaryStream(wallet);
    if (current.active && current.accountId === accountId && current.ratePerSecond === rate) return { stream: current, wallet };
    if (current.active && current.accountId !== accountId) {
      throw new AppError('WALLET_STREAMED_BY_ANOTHER_EMPLOYER', 'This wallet already receives a salary stream from another employer.');
    }
    // A re-rate stops the stream first: what accrued at the old rate is paid and recorded as an advance.
    if (current.active) await store.queueStreamStop(this.database.db, { employeeId: employee.id, employerId: employee.employerId, wallet });
    // A stop still queued for this wallet (an earlier change) runs first, or it would stop this stream.
    await this.finishStops(wallet);
    // One start per wallet at a time in this process; the contract makes a second start harmless anyway.
    const key = wallet.toLowerCase();
    let starting = this.starting.get(key);
    if (!starting) {
      starting = this.startStream(wallet, accountId, rate, employee.employerId).finally(() => this.starting.delete(key));
      this.starting.set(key, starting);
    }
    const stream = await starting;
    await this.confirmStreamed(employee, wallet);
    return { stream, wallet };
  }

  /** Runs the wallet's pending stops now; 409 while one cannot finish yet (it is retried). */
  private async finishStops(wallet: Address): Promise<void> {
    const pending = await store.pendingStopIds(this.database.db, wallet);
    if (pending.length === 0) return;
    await this.stopStreams(pending);
    if ((await store.pendingStopIds(this.database.db, wallet)).length > 0) {
      throw new AppError('STREAM_STOPPING', "This wallet's earlier salary stream is still being stopped; try again in a minute.");
    }
  }

  /**
   * The employee as read before the start may have changed meanwhile (a new wallet, a review, a
   * removal), and its stop may have run before this start landed: read again, and stop what no
   * longer belongs.
   */
  private async confirmStreamed(employee: EmployeeRow, wallet: Address): Promise<void> {
    const now = await this.employers.findEmployee(employee.id);
    if (now && streamsTo(now, wallet)) return;
    const stop = await store.queueStreamStop(this.database.db, { employeeId: employee.id, employerId: employee.employerId, wallet });
    await this.stopStreams([stop]);
    throw new AppError('STREAM_STOPPED', "The employee's wallet changed while its stream started; the stream to the old wallet was stopped.");
  }

  private async startStream(wallet: Address, accountId: bigint, rate: bigint, employerId: string): Promise<SalaryStream> {
    const account = await this.treasury.account(employerId);
    if (account.admin.toLowerCase() !== this.tempo.serviceAddress.toLowerCase()) {
      throw unprocessable(
        'STREAM_NEEDS_ADMIN_WALLET',
        `The employer administers its treasury from ${account.admin}: start the stream from that wallet (StreamVesting.setStream).`,
      );
    }
    const vesting = this.tempo.contracts.streamVesting;
    if (!this.agentAccounts.has(accountId)) {
      if (!(await this.tempo.isTreasuryAgent(accountId, vesting))) await this.tempo.setTreasuryAgent(accountId, vesting, true);
      this.agentAccounts.add(accountId);
    }
    await this.tempo.setSalaryStream(wallet, accountId, rate);
    this.changes.emit(wallet.toLowerCase());
    return this.tempo.salaryStream(wallet);
  }

  /** Everything a balance stream computes its ticks from. */
  async streamBasis(employee: EmployeeRow): Promise<StreamBasis> {
    const { stream, wallet } = await this.ensureStream(employee);
    return this.basisOf({ employeeId: employee.id, employerId: employee.employerId }, wallet, stream);
  }

  private async basisOf(employee: { employeeId: string; employerId: string }, wallet: Address, stream: SalaryStream): Promise<StreamBasis> {
    return {
      employeeId: employee.employeeId,
      employerId: employee.employerId,
      wallet,
      walletBalance: await this.tempo.balanceOf(wallet),
      ratePerSecond: stream.ratePerSecond,
      accruingSince: stream.accruingSince,
    };
  }

  /** A fresh basis after a claim or re-rate of this wallet's stream. */
  async refreshedBasis(basis: StreamBasis): Promise<StreamBasis> {
    return this.basisOf(basis, basis.wallet, await this.tempo.salaryStream(basis.wallet));
  }

  /** The service's time, in milliseconds: what a tick's accrual is computed at (the dev clock moves it and the chain's together). */
  nowMs(): number {
    return this.database.clock.nowMs();
  }

  /** Calls `listener` whenever this process claims or re-rates the wallet's stream; returns the unsubscribe. */
  onStreamChange(wallet: string, listener: () => void): () => void {
    const key = wallet.toLowerCase();
    this.changes.on(key, listener);
    return () => this.changes.off(key, listener);
  }

  /**
   * Stops queued streams on chain (every due stop, or only `ids`). Each is claimed by
   * compare-and-set and its transaction recorded before it is sent, so an attempt a crash cut off
   * is finished by the next one (the job's): a stop is sent once, and what it paid the old wallet
   * is recorded once, as an advance that payroll nets.
   */
  async stopStreams(ids?: string[]): Promise<StopRound> {
    const db = this.database.db;
    const round: StopRound = { stopped: 0, retried: 0, failed: 0 };
    for (const stop of await store.claimDueStops(db, { limit: 25, leaseSeconds: STOP_LEASE_SECONDS, ids })) {
      try {
        const paid = await this.stopOnChain(stop);
        await this.database.transaction((tx) => store.recordStop(tx.db, stop, paid));
        this.changes.emit(stop.walletAddress);
        round.stopped += 1;
      } catch (error) {
        if (error instanceof ClaimLost) continue; // another round holds the stop now
        const inFlight = error instanceof StopInFlight;
        const giveUp = !inFlight && stop.attempts >= STOP_MAX_ATTEMPTS;
        const message = error instanceof Error ? error.message : String(error);
        await store.failStopAttempt(db, stop.id, stop.attempts, message, { giveUp, delaySeconds: stopBackoffSeconds(stop.attempts) });
        if (giveUp) round.failed += 1;
        else round.retried += 1;
      }
    }
    return round;
  }

  /**
   * What stopping the stream paid: an earlier attempt's stop that landed, else a new stop; null
   * when no stream of this employer runs to the wallet (never started, or already stopped).
   */
  private async stopOnChain(stop: store.StreamStopRow): Promise<{ amount: bigint; txHash: string } | null> {
    const earlier = await this.earlierStop(stop.txHashes as Hex[]);
    if (earlier) return earlier;
    const wallet = stop.walletAddress as Address;
    const [stream, employer] = await Promise.all([this.tempo.salaryStream(wallet), this.employers.findEmployer(stop.employerId)]);
    if (!stream.active || employer?.employerAccountId !== stream.accountId.toString()) return null;
    const stopped = await this.tempo.stopSalaryStream(wallet, {
      beforeBroadcast: async (signed) => {
        if (!(await store.addStopTx(this.database.db, stop.id, stop.attempts, signed.hash))) throw new ClaimLost();
      },
    });
    return { amount: stopped.paid, txHash: stopped.txHash };
  }

  /**
   * An earlier attempt's stop that landed (what it paid), or null when none did or ever will
   * (reverted, dropped, never sent). StopInFlight while one may still land: it must be recorded.
   */
  private async earlierStop(hashes: Hex[]): Promise<{ amount: bigint; txHash: string } | null> {
    let inFlight = false;
    for (const hash of hashes) {
      const paid = await this.landed(hash, (receipt) => this.tempo.streamStopOf(receipt));
      if (paid === 'pending') inFlight = true;
      else if (paid !== null) return { amount: paid, txHash: hash };
    }
    if (inFlight) throw new StopInFlight('an earlier stopStream is still pending');
    return null;
  }

  /**
   * Claims what the employee's stream has accrued, to their wallet. One advance per employee at a
   * time (compare-and-set on a pending row); a concurrent second call gets 409, and the contract
   * itself pays each accrued second once. The claim's hash is kept on the row before it is sent, so
   * an advance a crash interrupted is settled from the chain with what it paid. The advance keeps
   * the fee that bought it: a redeemed fee (its first answer was lost) gets that advance's answer
   * again, never a second claim.
   */
  async advance(employee: EmployeeRow, fee: FeePayment | null = null): Promise<AdvanceClaim> {
    const db = this.database.db;
    for (const stale of await store.staleAdvances(db, employee.id, new Date(this.database.clock.nowMs() - STALE_ADVANCE_MS))) await this.settle(stale);
    const found = fee?.redeemed ? await store.advanceForFee(db, fee.id) : null;
    const earlier = found?.status === 'pending' && found.txHash ? await this.settle(found) : found;
    if (earlier?.status === 'claimed') {
      return { amount: earlier.amount!, txHash: earlier.txHash!, claimedAt: earlier.claimedAt!, wallet: employee.walletAddress as Address };
    }
    if (earlier?.failureReason === NOTHING_ACCRUED) throw nothingAccrued();
    if (earlier?.status === 'pending' && earlier.txHash) throw advanceInProgress(); // its claim may still land
    const { wallet } = await this.ensureStream(employee);
    // An advance a crash interrupted before its claim was sent is finished on its own row.
    const advance = earlier ? await store.reopenAdvance(db, earlier.id) : await store.openAdvance(db, employee.id, fee?.id ?? null);
    if (!advance) throw advanceInProgress();
    try {
      const claim = await this.tempo.claimSalary(wallet, {
        beforeBroadcast: async (signed) => {
          if (!(await store.recordClaimTx(db, advance.id, signed.hash))) throw advanceInProgress();
        },
      });
      const claimedAt = this.database.clock.now();
      await store.recordClaim(db, advance.id, { amount: claim.amount, txHash: claim.txHash, claimedAt });
      this.changes.emit(wallet.toLowerCase());
      return { amount: claim.amount, txHash: claim.txHash, claimedAt, wallet };
    } catch (error) {
      const refused = (error instanceof ChainRevertError && claimRefusal(error.errorName)) || error;
      await store.failAdvance(db, advance.id, refused instanceof Error ? refused.message : String(refused));
      throw refused;
    }
  }

  /**
   * A pending advance settled from the chain: its claim landed (recorded with what it paid, so
   * payroll nets it), or never will (failed); left pending while the claim may still land.
   */
  private async settle(advance: store.AdvanceRow): Promise<store.AdvanceRow> {
    const paid = advance.txHash ? await this.landed(advance.txHash as Hex, (receipt) => this.tempo.salaryClaimOf(receipt)) : null;
    if (paid === 'pending') return advance;
    const db = this.database.db;
    const settled =
      paid === null
        ? await store.failAdvance(db, advance.id, 'interrupted before its claim was sent; nothing was paid')
        : await store.recordClaim(db, advance.id, { amount: paid, txHash: advance.txHash!, claimedAt: this.database.clock.now() });
    return settled ?? advance;
  }

  /** A signed transaction's fate: what it paid once it landed (`paidBy` reads the receipt), 'pending' while the node holds it, null when it never will. */
  private async landed(hash: Hex, paidBy: (receipt: TransactionReceipt) => bigint | null): Promise<bigint | 'pending' | null> {
    const fate = await this.tempo.connection.fate(hash);
    if (fate === null || fate === 'pending') return fate;
    return fate.status === 'success' ? paidBy(fate) : null;
  }
}

const NOTHING_ACCRUED = 'Nothing has accrued since the last claim: wait at least a second of salary before asking for an advance.';
const nothingAccrued = () => unprocessable('NOTHING_ACCRUED', NOTHING_ACCRUED);
const advanceInProgress = () => new AppError('ADVANCE_IN_PROGRESS', 'An advance for this employee is already being claimed.');

/** The contract's refusal of a claim as an answer (< 500: nothing was paid, the fee stays), or null. */
function claimRefusal(errorName: string): AppError | null {
  if (errorName === 'NothingAccrued') return nothingAccrued();
  // Stopped between reading the employee and claiming: a wallet change won the race.
  if (errorName === 'NoStream') return new AppError('STREAM_STOPPED', 'No salary stream runs to this wallet any more (its wallet changed, or the employee left).');
  return null;
}

/** The tick for `nowMs` (integer math on base units; before the stream's start nothing has accrued). */
export function balanceTick(basis: StreamBasis, tick: number, nowMs: number): BalanceTick {
  const elapsed = BigInt(Math.floor(nowMs / 1000)) - basis.accruingSince;
  const accrued = elapsed > 0n ? elapsed * basis.ratePerSecond : 0n;
  const balance = basis.walletBalance + accrued;
  return {
    tick,
    employeeId: basis.employeeId,
    address: basis.wallet,
    balance: balance.toString(),
    balanceUsd: formatUsd(balance),
    accrued_raw: accrued.toString(),
    accrued_usd: formatUsd(accrued),
    salary_per_second_usd: formatUsd(basis.ratePerSecond),
    timestamp: nowMs,
  };
}
