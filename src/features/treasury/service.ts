import { isAddressEqual, type Address } from 'viem';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { TempoChain, YieldPosition } from '../../chains/evm/tempo-chain.js';
import type { ChainWrite } from '../../chains/evm/token-chain.js';
import { AppError } from '../../errors.js';
import type { EmployersService } from '../employers/index.js';

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

export interface TreasuryAccountState {
  accountId: bigint;
  available: bigint;
  locked: bigint;
  /** The account's administrator on chain: the employer's admin wallet, or the service's. */
  admin: Address;
}

export interface TreasuryServiceOptions {
  tempo: TempoChain;
  employers: EmployersService;
}

export class TreasuryService {
  private readonly tempo: TempoChain;
  private readonly employers: EmployersService;

  constructor(options: TreasuryServiceOptions) {
    this.tempo = options.tempo;
    this.employers = options.employers;
  }

  /** The service's time (the employers' database clock): the timestamp of what the treasury answers. */
  now(): Date {
    return this.employers.now();
  }

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

  /** The account's available and locked balances and its administrator, read from the chain (the treasury contract is the ledger). */
  async account(employerId: string): Promise<TreasuryAccountState> {
    const accountId = await this.accountId(employerId);
    const account = await this.tempo.treasuryAccount(accountId);
    if (!account) throw new Error(`treasury account ${accountId} of employer ${employerId} is not on chain`);
    return { accountId, admin: account.admin, available: account.available, locked: account.locked };
  }

  /** The account and its yield position (sources, their APYs, its allocation, blended APY), from the chain. */
  async position(employerId: string): Promise<{ account: TreasuryAccountState; yield: YieldPosition }> {
    const account = await this.account(employerId);
    return { account, yield: await this.tempo.yieldPosition(account.accountId) };
  }

  /** The stablecoin the treasuries hold. */
  get token(): Address {
    return this.tempo.token;
  }

  /**
   * Sets the account's allocation on the yield router (the service wallet is the account's
   * agent). A router whose sources changed since the caller read them refuses; that is a 409.
   */
  async rebalance(accountId: bigint, allocationBps: number[]): Promise<ChainWrite> {
    try {
      return await this.tempo.rebalanceYield(accountId, allocationBps);
    } catch (error) {
      if (error instanceof ChainRevertError && (error.errorName === 'LengthMismatch' || error.errorName === 'AllocationNotWhole')) {
        throw new AppError('YIELD_SOURCES_CHANGED', 'The yield sources changed while rebalancing; read them again and retry.');
      }
      throw error;
    }
  }

  /**
   * The yield router's sources and the blended APY of the default allocation (wholly in the first
   * source), for the base stable token, read from the chain.
   */
  async yieldRates(token: Address | undefined): Promise<YieldRates> {
    if (token && !isAddressEqual(token, this.tempo.token)) {
      throw new AppError('NOT_FOUND', `No yield sources for token ${token}; the treasury holds ${this.tempo.token}.`);
    }
    const position = await this.tempo.yieldPosition(NO_ACCOUNT);
    return {
      apy_bps: position.blendedApyBps,
      apy_percent: position.blendedApyBps / 100,
      sources: position.sources.map((s) => s.name),
      allocation: position.sources.map((s) => s.allocationBps),
      timestamp: this.now().getTime(),
    };
  }
}
