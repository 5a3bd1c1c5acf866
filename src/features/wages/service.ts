import { EventEmitter } from 'node:events';
import type { Address } from 'viem';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { SalaryStream, TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database } from '../../db/client.js';
import type { FeePayment } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { formatUsd } from '../../money.js';
import { PaidCallers, type PaidCaller } from '../employers/paid-caller.js';
import type { EmployersService } from '../employers/service.js';
import type { TreasuryService } from '../treasury/service.js';
import * as store from './store.js';

/** A year of 365 days: the vesting rate is the annual salary spread over it. */
export const SECONDS_PER_YEAR = 31_536_000n;

/** The on-chain rate for an annual salary, in base units per second (rounded down). */
export const ratePerSecond = (annualSalary: bigint) => annualSalary / SECONDS_PER_YEAR;

/** A pending advance older than this was interrupted (crash) and no longer blocks a new one. */
const STALE_ADVANCE_MS = 2 * 60_000;

const unprocessable = (code: string, message: string) => new AppError(422, code, message);

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

  constructor(
    private readonly database: Database,
    private readonly employers: EmployersService,
    private readonly treasury: TreasuryService,
    private readonly tempo: TempoChain,
  ) {}

  /**
   * The employee the caller names (by id, or by wallet as the legacy fallback) when the caller
   * may see their wages: the employee themselves, or their employer's owner or agent. Anyone else
   * gets 404, like a missing record.
   */
  async employeeFor(paid: PaidCaller, by: { employeeId?: string | undefined; address?: string | undefined }, options: { selfOnly?: boolean } = {}): Promise<store.EmployeeRow> {
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
    const [employee, other] = await store.employeesByWallet(this.database.db, by.address ?? '', scope);
    if (!employee) throw notFound('Employee');
    if (other) {
      throw new AppError(409, 'AMBIGUOUS_ADDRESS', 'More than one of your employees is paid to this address: name the employee with employeeId.');
    }
    return employee;
  }

  /**
   * Makes sure the employee's stream runs on chain at the rate of their annual salary: started on
   * first use, re-rated when the salary changed (the contract first pays what accrued at the old
   * rate). Only a treasury the service administers can be streamed from.
   */
  async ensureStream(employee: store.EmployeeRow): Promise<{ stream: SalaryStream; wallet: Address }> {
    if (!employee.walletAddress) throw unprocessable('NO_WALLET', 'This employee has no wallet to stream salary to.');
    const wallet = employee.walletAddress as Address;
    const rate = ratePerSecond(employee.annualSalary);
    if (rate === 0n) throw unprocessable('NO_SALARY', 'This employee has no annual salary, so nothing accrues.');
    const accountId = await this.treasury.accountId(employee.employerId);
    const current = await this.tempo.salaryStream(wallet);
    if (current.active && current.accountId === accountId && current.ratePerSecond === rate) return { stream: current, wallet };
    if (current.active && current.accountId !== accountId) {
      throw new AppError(409, 'WALLET_STREAMED_BY_ANOTHER_EMPLOYER', 'This wallet already receives a salary stream from another employer.');
    }
    // One start per wallet at a time in this process; the contract makes a second start harmless anyway.
    const key = wallet.toLowerCase();
    let starting = this.starting.get(key);
    if (!starting) {
      starting = this.startStream(wallet, accountId, rate, employee.employerId).finally(() => this.starting.delete(key));
      this.starting.set(key, starting);
    }
    return { stream: await starting, wallet };
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
  async streamBasis(employee: store.EmployeeRow): Promise<StreamBasis> {
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

  /** Calls `listener` whenever this process claims or re-rates the wallet's stream; returns the unsubscribe. */
  onStreamChange(wallet: string, listener: () => void): () => void {
    const key = wallet.toLowerCase();
    this.changes.on(key, listener);
    return () => this.changes.off(key, listener);
  }

  /**
   * Claims what the employee's stream has accrued, to their wallet. One advance per employee at a
   * time (compare-and-set on a pending row); a concurrent second call gets 409, and the contract
   * itself pays each accrued second once. The advance keeps the fee that bought it: a redeemed fee
   * (its first answer was lost) gets that advance's answer again, never a second claim.
   */
  async advance(employee: store.EmployeeRow, fee: FeePayment | null = null): Promise<AdvanceClaim> {
    const db = this.database.db;
    const earlier = fee?.redeemed ? await store.advanceForFee(db, fee.id) : null;
    if (earlier?.status === 'claimed') {
      return { amount: earlier.amount!, txHash: earlier.txHash!, claimedAt: earlier.claimedAt!, wallet: employee.walletAddress as Address };
    }
    if (earlier?.failureReason === NOTHING_ACCRUED) throw nothingAccrued();
    const { wallet } = await this.ensureStream(employee);
    // An advance a crash interrupted is finished on its own row: the contract pays each accrued
    // second once, so claiming again pays only what the lost claim did not.
    const advance = earlier ? await store.reopenAdvance(db, earlier.id) : await store.openAdvance(db, employee.id, new Date(Date.now() - STALE_ADVANCE_MS), fee?.id ?? null);
    if (!advance) throw new AppError(409, 'ADVANCE_IN_PROGRESS', 'An advance for this employee is already being claimed.');
    try {
      const claim = await this.tempo.claimSalary(wallet);
      const claimedAt = new Date();
      await store.recordClaim(db, advance.id, { amount: claim.amount, txHash: claim.txHash, claimedAt });
      this.changes.emit(wallet.toLowerCase());
      return { amount: claim.amount, txHash: claim.txHash, claimedAt, wallet };
    } catch (error) {
      const refused = error instanceof ChainRevertError && error.errorName === 'NothingAccrued' ? nothingAccrued() : error;
      await store.failAdvance(db, advance.id, refused instanceof Error ? refused.message : String(refused));
      throw refused;
    }
  }
}

const NOTHING_ACCRUED = 'Nothing has accrued since the last claim: wait at least a second of salary before asking for an advance.';
const nothingAccrued = () => unprocessable('NOTHING_ACCRUED', NOTHING_ACCRUED);

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
