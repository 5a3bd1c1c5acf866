import { isAddressEqual, type Address } from 'viem';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import { AppError } from '../../http/errors.js';
import type { EmployersService } from '../employers/service.js';

/** Spec 2.8. */
export interface YieldRates {
  apy_bps: number;
  apy_percent: number;
  sources: string[];
  /** Basis points per source, summing to 10,000. */
  allocation: number[];
  /** Unix milliseconds of the read. */
  timestamp: number;
}

/** A treasury account id no employer has: the yield router answers its default allocation for it. */
const NO_ACCOUNT = 0n;

export interface TreasuryBalances {
  accountId: bigint;
  available: bigint;
  locked: bigint;
}

export class TreasuryService {
  constructor(
    private readonly tempo: TempoChain,
    private readonly employers: EmployersService,
  ) {}

  /**
   * The employer's treasury account on the Tempo chain, opened on first use: administered by the
   * employer's admin wallet when it has one (else by the service), with the service wallet as its
   * agent so it can execute payroll and agent payments (PayrollTreasury.createAccount).
   */
  accountId(employerId: string): Promise<bigint> {
    return this.employers.ensureTreasuryAccount(employerId, async (employer) => {
      const admin = (employer.adminWallet as Address | null) ?? this.tempo.serviceAddress;
      return (await this.tempo.createTreasuryAccount(admin)).accountId;
    });
  }

  /** Available and locked balances, read from the chain (the treasury contract is the ledger). */
  async balances(employerId: string): Promise<TreasuryBalances> {
    const accountId = await this.accountId(employerId);
    const account = await this.tempo.treasuryAccount(accountId);
    if (!account) throw new Error(`treasury account ${accountId} of employer ${employerId} is not on chain`);
    return { accountId, available: account.available, locked: account.locked };
  }

  /**
   * The yield router's sources and the blended APY of the default allocation (wholly in the first
   * source), for the base stable token, read from the chain.
   */
  async yieldRates(token: Address | undefined): Promise<YieldRates> {
    if (token && !isAddressEqual(token, this.tempo.token)) {
      throw new AppError(404, 'NOT_FOUND', `No yield sources for token ${token}; the treasury holds ${this.tempo.token}.`);
    }
    const position = await this.tempo.yieldPosition(NO_ACCOUNT);
    return {
      apy_bps: position.blendedApyBps,
      apy_percent: position.blendedApyBps / 100,
      sources: position.sources.map((s) => s.name),
      allocation: position.sources.map((s) => s.allocationBps),
      timestamp: Date.now(),
    };
  }
}
