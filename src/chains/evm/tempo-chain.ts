import { decodeEventLog, type Account, type Address, type Hex, type TransactionReceipt } from 'viem';
import {
  addressRegistryAbi,
  agentIdentityRegistryAbi,
  agentReputationRegistryAbi,
  payrollTreasuryAbi,
  stablecoinAbi,
  streamVestingAbi,
  tip403RegistryAbi,
  yieldRouterAbi,
} from './abis.js';
import { asChainError, ChainRevertError, contractCall, evmConnection, type EvmCall, type EvmConnection, type EvmWriteOptions } from './connection.js';
import { EvmTokenChain, written, type ChainWrite } from './token-chain.js';

/** Where our contracts (and Tempo's precompiles) live on a Tempo chain. */
export interface TempoContracts {
  stablecoin: Address;
  payrollTreasury: Address;
  streamVesting: Address;
  yieldRouter: Address;
  tip403Registry: Address;
  addressRegistry: Address;
  agentIdentityRegistry: Address;
  agentReputationRegistry: Address;
}

export interface PayrollTransfer {
  recipient: Address;
  amount: bigint;
  /** 32-byte memo (spec 2.14). */
  memo: Hex;
}

export interface TreasuryAccount {
  admin: Address;
  available: bigint;
  locked: bigint;
}

export interface SalaryStream {
  accountId: bigint;
  ratePerSecond: bigint;
  accruingSince: bigint;
  active: boolean;
}

export interface YieldPosition {
  sources: { name: string; apyBps: number; allocationBps: number }[];
  blendedApyBps: number;
}

/** The most gas one transaction may use (EIP-7825: 2^24), whatever a block allows. */
export const MAX_TRANSACTION_GAS = 16_777_216n;
/** A batch is planned at this share of the gas cap (percent), for recipients that cost more than the sample. */
const BATCH_GAS_BUDGET_PERCENT = 80n;
/** How many transfers the capacity estimate measures, spread over the run. */
const BATCH_GAS_SAMPLE = 32;
/**
 * Gas a recipient who never held the token adds to a batch on the embedded chain (BENCHMARKS.md):
 * the floor of the per-recipient rate, so a sample of existing holders cannot size a batch that
 * new recipients later in it would push past the cap.
 */
export const PAYROLL_GAS_PER_NEW_RECIPIENT = 33_145n;

/** Recipients per batch at `gasPerRecipient` (never under a new recipient's rate), within 80% of `gasCap`. */
export function payrollBatchCapacityAt(gasPerRecipient: bigint, gasCap = MAX_TRANSACTION_GAS): number {
  const rate = gasPerRecipient > PAYROLL_GAS_PER_NEW_RECIPIENT ? gasPerRecipient : PAYROLL_GAS_PER_NEW_RECIPIENT;
  const cap = gasCap < MAX_TRANSACTION_GAS ? gasCap : MAX_TRANSACTION_GAS;
  return Math.max(1, Number((cap * BATCH_GAS_BUDGET_PERCENT) / 100n / rate));
}

export const TIP403_POLICY_TYPE = { whitelist: 0, blacklist: 1 } as const;

/**
 * The Tempo chain port: stablecoin with memos, employer treasuries, batch payroll, salary
 * streams, yield, TIP-403 policies, virtual addresses and the ERC-8004 registries. Writes are
 * sent from the service's wallet (the treasuries' agent) unless a method takes a signer.
 */
export class TempoChain extends EvmTokenChain {
  constructor(
    connection: EvmConnection,
    readonly contracts: TempoContracts,
    /** Gives an account the native balance it needs to send a transaction (embedded chains). */
    private readonly fundGas?: (account: Address) => Promise<void>,
  ) {
    super(connection, `eip155:${connection.chain.id}`, contracts.stablecoin);
  }

  private async read<T>(address: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[]): Promise<T> {
    try {
      return (await this.connection.publicClient.readContract({ address, abi, functionName, args } as never)) as T;
    } catch (error) {
      throw asChainError(error);
    }
  }

  /** A read whose named revert means "there is none". */
  private async readOrNull<T>(revert: string, address: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[]): Promise<T | null> {
    try {
      return await this.read<T>(address, abi, functionName, args);
    } catch (error) {
      if (error instanceof ChainRevertError && error.errorName === revert) return null;
      throw error;
    }
  }

  private eventsOf<T>(receipt: { logs: { address: Address; data: Hex; topics: [Hex, ...Hex[]] | [] }[] }, address: Address, abi: readonly unknown[], eventName: string): T[] {
    return receipt.logs
      .filter((log) => log.address.toLowerCase() === address.toLowerCase())
      .flatMap((log) => {
        try {
          const decoded = decodeEventLog({ abi: abi as never, data: log.data, topics: log.topics });
          return decoded.eventName === eventName ? [decoded.args as T] : [];
        } catch {
          return [];
        }
      });
  }

  // ---- employer treasuries -------------------------------------------------------------------

  /** Opens a treasury account administered by `admin` (default: the service wallet). */
  async createTreasuryAccount(admin: Address = this.serviceAddress): Promise<{ accountId: bigint } & ChainWrite> {
    const receipt = await this.connection.write(contractCall(this.contracts.payrollTreasury, payrollTreasuryAbi, 'createAccount', [admin]));
    const [created] = this.eventsOf<{ accountId: bigint }>(receipt, this.contracts.payrollTreasury, payrollTreasuryAbi, 'AccountCreated');
    if (!created) throw new Error('createAccount mined without an AccountCreated event');
    return { accountId: created.accountId, ...written(receipt) };
  }

  /** An account's balances, or null when there is no such account. */
  async treasuryAccount(accountId: bigint): Promise<TreasuryAccount | null> {
    const account = await this.readOrNull<[Address, bigint, bigint]>('UnknownAccount', this.contracts.payrollTreasury, payrollTreasuryAbi, 'accountOf', [
      accountId,
    ]);
    return account && { admin: account[0], available: account[1], locked: account[2] };
  }

  async setTreasuryAgent(accountId: bigint, agent: Address, allowed: boolean): Promise<ChainWrite> {
    return written(await this.connection.write(contractCall(this.contracts.payrollTreasury, payrollTreasuryAbi, 'setAgent', [accountId, agent, allowed])));
  }

  /** Moves stablecoin from the service wallet into an account's available balance. */
  isTreasuryAgent(accountId: bigint, agent: Address): Promise<boolean> {
    return this.read<boolean>(this.contracts.payrollTreasury, payrollTreasuryAbi, 'isAgent', [accountId, agent]);
  }

  /** From the service wallet into an account; `options` see the deposit itself (the approval is harmless to repeat). */
  async depositToTreasury(accountId: bigint, amount: bigint, options?: EvmWriteOptions): Promise<ChainWrite> {
    const treasury = this.contracts.payrollTreasury;
    const allowance = await this.read<bigint>(this.token, stablecoinAbi, 'allowance', [this.serviceAddress, treasury]);
    if (allowance < amount) await this.connection.write(contractCall(this.token, stablecoinAbi, 'approve', [treasury, amount]));
    return written(await this.connection.write(contractCall(treasury, payrollTreasuryAbi, 'deposit', [accountId, amount]), options));
  }

  async lockTreasury(accountId: bigint, amount: bigint): Promise<ChainWrite> {
    return written(await this.connection.write(contractCall(this.contracts.payrollTreasury, payrollTreasuryAbi, 'lock', [accountId, amount])));
  }

  async unlockTreasury(accountId: bigint, amount: bigint): Promise<ChainWrite> {
    return written(await this.connection.write(contractCall(this.contracts.payrollTreasury, payrollTreasuryAbi, 'unlock', [accountId, amount])));
  }

  /** One payment from an account's available balance (agent pay), with a memo. */
  async transferFromTreasury(accountId: bigint, to: Address, amount: bigint, memo: Hex, options?: EvmWriteOptions): Promise<ChainWrite> {
    const call = contractCall(this.contracts.payrollTreasury, payrollTreasuryAbi, 'transferFromAccount', [accountId, to, amount, memo]);
    return written(await this.connection.write(call, options));
  }

  // ---- payroll -------------------------------------------------------------------------------

  /** The unsigned batch call, for a signer outside the service (payroll prepare returns it). */
  batchPayrollCall(accountId: bigint, transfers: PayrollTransfer[]): EvmCall {
    return contractCall(this.contracts.payrollTreasury, payrollTreasuryAbi, 'executeBatchPayroll', [
      transfers.map((t) => t.recipient),
      transfers.map((t) => t.amount),
      transfers.map((t) => t.memo),
      accountId,
    ]);
  }

  /** The payroll payments a mined transaction made from an account (PayrollPayment events). */
  payrollPaymentsOf(receipt: TransactionReceipt, accountId: bigint): PayrollTransfer[] {
    return this.eventsOf<{ accountId: bigint; recipient: Address; amount: bigint; memo: Hex }>(
      receipt,
      this.contracts.payrollTreasury,
      payrollTreasuryAbi,
      'PayrollPayment',
    )
      .filter((event) => event.accountId === accountId)
      .map((event) => ({ recipient: event.recipient, amount: event.amount, memo: event.memo }));
  }

  /** A block explorer link for a transaction, when the chain has an explorer. */
  explorerUrl(txHash: Hex): string | null {
    const explorer = this.connection.chain.blockExplorers?.default.url;
    return explorer ? `${explorer.replace(/\/+$/, '')}/tx/${txHash}` : null;
  }

  /**
   * How many transfers like these one executeBatchPayroll carries: the node measures the gas of a
   * sample spread over them (so it reverts, InsufficientAvailable, when the account cannot pay the
   * sample), and a batch is sized to 80% of the gas a transaction or block may use at that rate per
   * recipient (the sample's fixed cost counted as if per recipient; never under a new recipient's).
   */
  async payrollBatchCapacity(accountId: bigint, transfers: PayrollTransfer[]): Promise<number> {
    if (transfers.length === 0) return 0;
    const step = Math.max(1, Math.floor(transfers.length / BATCH_GAS_SAMPLE));
    const sample = transfers.filter((_, i) => i % step === 0).slice(0, BATCH_GAS_SAMPLE);
    const call = this.batchPayrollCall(accountId, sample);
    const [gas, block] = await Promise.all([
      this.connection.publicClient.estimateGas({ account: this.serviceAddress, to: call.to, data: call.data }).catch((error: unknown) => {
        throw asChainError(error);
      }),
      this.connection.publicClient.getBlock({ blockTag: 'latest' }),
    ]);
    return payrollBatchCapacityAt((gas + BigInt(sample.length) - 1n) / BigInt(sample.length), block.gasLimit);
  }

  /** Pays every transfer in one transaction, or none of them. */
  async executeBatchPayroll(accountId: bigint, transfers: PayrollTransfer[], options?: EvmWriteOptions): Promise<ChainWrite> {
    return written(await this.connection.write(this.batchPayrollCall(accountId, transfers), options));
  }

  // ---- salary streams ------------------------------------------------------------------------

  async setSalaryStream(employee: Address, accountId: bigint, ratePerSecond: bigint): Promise<ChainWrite> {
    const call = contractCall(this.contracts.streamVesting, streamVestingAbi, 'setStream', [employee, accountId, ratePerSecond]);
    return written(await this.connection.write(call));
  }

  async salaryStream(employee: Address): Promise<SalaryStream> {
    const [accountId, ratePerSecond, accruingSince, active] = await this.read<[bigint, bigint, bigint, boolean]>(
      this.contracts.streamVesting,
      streamVestingAbi,
      'streamOf',
      [employee],
    );
    return { accountId, ratePerSecond, accruingSince, active };
  }

  /** What the employee's stream has accrued as of the latest block. */
  accruedSalary(employee: Address): Promise<bigint> {
    return this.read<bigint>(this.contracts.streamVesting, streamVestingAbi, 'accruedOf', [employee]);
  }

  /** Pays the employee what has accrued; `NothingAccrued` / `NoStream` reverts say why not. */
  async claimSalary(employee: Address, options?: EvmWriteOptions): Promise<{ amount: bigint } & ChainWrite> {
    const receipt = await this.connection.write(contractCall(this.contracts.streamVesting, streamVestingAbi, 'claim', [employee]), options);
    const amount = this.salaryClaimOf(receipt);
    if (amount === null) throw new Error('claim mined without a Claimed event');
    return { amount, ...written(receipt) };
  }

  /** What a mined claim paid (its Claimed event), or null when the receipt holds none. */
  salaryClaimOf(receipt: TransactionReceipt): bigint | null {
    const [claimed] = this.eventsOf<{ amount: bigint }>(receipt, this.contracts.streamVesting, streamVestingAbi, 'Claimed');
    return claimed ? claimed.amount : null;
  }

  /** Stops the employee's stream; the contract first pays what accrued (`NoStream` when none runs). */
  async stopSalaryStream(employee: Address, options?: EvmWriteOptions): Promise<{ paid: bigint } & ChainWrite> {
    const receipt = await this.connection.write(contractCall(this.contracts.streamVesting, streamVestingAbi, 'stopStream', [employee]), options);
    const paid = this.streamStopOf(receipt);
    if (paid === null) throw new Error('stopStream mined without a StreamStopped event');
    return { paid, ...written(receipt) };
  }

  /** What a mined stopStream paid (its StreamStopped event), or null when the receipt holds none. */
  streamStopOf(receipt: TransactionReceipt): bigint | null {
    const [stopped] = this.eventsOf<{ accrued: bigint }>(receipt, this.contracts.streamVesting, streamVestingAbi, 'StreamStopped');
    return stopped ? stopped.accrued : null;
  }

  // ---- yield ---------------------------------------------------------------------------------

  async yieldPosition(accountId: bigint): Promise<YieldPosition> {
    const router = this.contracts.yieldRouter;
    const [names, apys, allocation, blended] = await Promise.all([
      this.read<string[]>(router, yieldRouterAbi, 'sources', []),
      this.read<bigint[]>(router, yieldRouterAbi, 'sourceApyBps', []),
      this.read<bigint[]>(router, yieldRouterAbi, 'allocationOf', [accountId]),
      this.read<bigint>(router, yieldRouterAbi, 'apyBps', [accountId]),
    ]);
    return {
      sources: names.map((name, i) => ({ name, apyBps: Number(apys[i] ?? 0n), allocationBps: Number(allocation[i] ?? 0n) })),
      blendedApyBps: Number(blended),
    };
  }

  /** Reverts with `AllocationNotWhole` unless the allocation sums to 10,000 bps. */
  async rebalanceYield(accountId: bigint, allocationBps: number[]): Promise<ChainWrite> {
    const call = contractCall(this.contracts.yieldRouter, yieldRouterAbi, 'rebalance', [accountId, allocationBps.map(BigInt)]);
    return written(await this.connection.write(call));
  }

  // ---- TIP-403 -------------------------------------------------------------------------------

  isAuthorized(policyId: bigint, account: Address): Promise<boolean> {
    return this.read<boolean>(this.contracts.tip403Registry, tip403RegistryAbi, 'isAuthorized', [policyId, account]);
  }

  /**
   * TIP-403 authorization of many accounts through Multicall3: one eth_call per chunk (a chunk
   * stays well inside an eth_call's gas), in order of `accounts`.
   */
  async areAuthorized(policyId: bigint, accounts: readonly Address[], chunkSize = 500): Promise<boolean[]> {
    const results: boolean[] = [];
    for (let start = 0; start < accounts.length; start += chunkSize) {
      const chunk = accounts.slice(start, start + chunkSize);
      try {
        const answers = await this.connection.publicClient.multicall({
          contracts: chunk.map((account) => ({
            address: this.contracts.tip403Registry,
            abi: tip403RegistryAbi,
            functionName: 'isAuthorized',
            args: [policyId, account],
          })),
          allowFailure: false,
          batchSize: 0,
        });
        results.push(...(answers as boolean[]));
      } catch (error) {
        throw asChainError(error);
      }
    }
    return results;
  }

  /** Creates a policy administered by the service wallet; returns its id. */
  async createPolicy(type: keyof typeof TIP403_POLICY_TYPE, accounts: Address[]): Promise<{ policyId: bigint } & ChainWrite> {
    const registry = this.contracts.tip403Registry;
    const call = contractCall(registry, tip403RegistryAbi, 'createPolicyWithAccounts', [this.serviceAddress, TIP403_POLICY_TYPE[type], accounts]);
    const receipt = await this.connection.write(call);
    const [created] = this.eventsOf<{ policyId: bigint }>(receipt, registry, tip403RegistryAbi, 'PolicyCreated');
    if (!created) throw new Error('createPolicy mined without a PolicyCreated event');
    return { policyId: created.policyId, ...written(receipt) };
  }

  async setPolicyMember(policyId: bigint, type: keyof typeof TIP403_POLICY_TYPE, account: Address, member: boolean): Promise<ChainWrite> {
    const registry = this.contracts.tip403Registry;
    const call =
      type === 'whitelist'
        ? contractCall(registry, tip403RegistryAbi, 'modifyPolicyWhitelist', [policyId, account, member])
        : contractCall(registry, tip403RegistryAbi, 'modifyPolicyBlacklist', [policyId, account, member]);
    return written(await this.connection.write(call));
  }

  // ---- virtual addresses ---------------------------------------------------------------------

  /**
   * Registers `master` (an employer's own key) as a virtual master with a mined salt; the
   * registry refuses a salt whose hash lacks the leading zero bytes (`ProofOfWorkFailed`).
   */
  async registerVirtualMaster(master: Account, salt: Hex, options?: EvmWriteOptions): Promise<{ masterId: Hex } & ChainWrite> {
    await this.fundGas?.(master.address);
    const own = evmConnection({
      chain: this.connection.chain,
      transport: this.connection.transport,
      signer: master,
      nonces: this.connection.nonces,
      pollingInterval: this.connection.pollingInterval,
    });
    const registry = this.contracts.addressRegistry;
    const receipt = await own.write(contractCall(registry, addressRegistryAbi, 'registerVirtualMaster', [salt]), options);
    const [registered] = this.eventsOf<{ masterId: Hex }>(receipt, registry, addressRegistryAbi, 'MasterRegistered');
    if (!registered) throw new Error('registerVirtualMaster mined without a MasterRegistered event');
    return { masterId: registered.masterId, ...written(receipt) };
  }

  /** The master registered under a 4-byte master id, or null when none is. */
  async virtualMaster(masterId: Hex): Promise<Address | null> {
    const master = await this.read<Address>(this.contracts.addressRegistry, addressRegistryAbi, 'getMaster', [masterId]);
    return /^0x0{40}$/.test(master) ? null : master;
  }

  /** Leading zero bytes the registry demands of keccak256(master, salt): our local registry's setting. */
  async virtualMasterZeroBytes(): Promise<number> {
    return Number(await this.read<number>(this.contracts.addressRegistry, addressRegistryAbi, 'proofOfWorkZeroBytes', []));
  }

  /** The master a virtual address forwards to, or null when its master is not registered. */
  resolveVirtualAddress(virtualAddress: Address): Promise<Address | null> {
    return this.readOrNull<Address>('VirtualAddressUnregistered', this.contracts.addressRegistry, addressRegistryAbi, 'resolveVirtualAddress', [
      virtualAddress,
    ]);
  }

  // ---- ERC-8004 ------------------------------------------------------------------------------

  /** Registers an agent owned by the service wallet; returns its id. */
  async registerAgent(agentUri: string): Promise<{ agentId: bigint } & ChainWrite> {
    const registry = this.contracts.agentIdentityRegistry;
    const receipt = await this.connection.write(contractCall(registry, agentIdentityRegistryAbi, 'register', [agentUri]));
    const [registered] = this.eventsOf<{ agentId: bigint }>(receipt, registry, agentIdentityRegistryAbi, 'Registered');
    if (!registered) throw new Error('register mined without a Registered event');
    return { agentId: registered.agentId, ...written(receipt) };
  }

  /** The agent's current owner, or null for an unknown agent. */
  agentOwner(agentId: bigint): Promise<Address | null> {
    return this.readOrNull<Address>('NonexistentAgent', this.contracts.agentIdentityRegistry, agentIdentityRegistryAbi, 'ownerOf', [agentId]);
  }

  /** Feedback from the service wallet (score 0-100). */
  async giveFeedback(
    feedback: { agentId: bigint; score: number; tag1: string; tag2: string; endpoint: string; feedbackUri: string; feedbackHash: Hex },
    options?: EvmWriteOptions,
  ): Promise<ChainWrite> {
    const call = contractCall(this.contracts.agentReputationRegistry, agentReputationRegistryAbi, 'giveFeedback', [
      feedback.agentId,
      feedback.score,
      feedback.tag1,
      feedback.tag2,
      feedback.endpoint,
      feedback.feedbackUri,
      feedback.feedbackHash,
    ]);
    return written(await this.connection.write(call, options));
  }

  /** Count and average score of an agent's unrevoked feedback (empty tags match any). */
  async feedbackSummary(agentId: bigint, filter: { clients?: Address[]; tag1?: string; tag2?: string } = {}): Promise<{ count: number; averageScore: number }> {
    const [count, averageScore] = await this.read<[bigint, number]>(
      this.contracts.agentReputationRegistry,
      agentReputationRegistryAbi,
      'getSummary',
      [agentId, filter.clients ?? [], filter.tag1 ?? '', filter.tag2 ?? ''],
    );
    return { count: Number(count), averageScore: Number(averageScore) };
  }
}

