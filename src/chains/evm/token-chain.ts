import { zeroHash, type Address, type Hex, type TransactionReceipt } from 'viem';
import { stablecoinAbi, transferEvent } from './abis.js';
import { contractCall, type EvmConnection, type EvmWriteOptions } from './connection.js';

/** A mined transaction. */
export interface ChainWrite {
  txHash: Hex;
  blockNumber: bigint;
}

/** One `Transfer` event of a token. */
export interface TokenTransfer {
  token: Address;
  txHash: Hex;
  logIndex: number;
  blockNumber: bigint;
  from: Address;
  to: Address;
  amount: bigint;
}

export const written = (receipt: TransactionReceipt): ChainWrite => ({ txHash: receipt.transactionHash, blockNumber: receipt.blockNumber });

/**
 * The port of an EVM chain's stablecoin (6 decimals), paid from the service's wallet. Base uses
 * it as is; Tempo extends it with the treasury, payroll and registries.
 */
export class EvmTokenChain {
  constructor(
    readonly connection: EvmConnection,
    /** CAIP-2 id, e.g. eip155:8453. */
    readonly network: string,
    readonly token: Address,
  ) {}

  get serviceAddress(): Address {
    return this.connection.signer.address;
  }

  blockNumber(): Promise<bigint> {
    return this.connection.publicClient.getBlockNumber({ cacheTime: 0 });
  }

  balanceOf(owner: Address, token: Address = this.token): Promise<bigint> {
    return this.connection.publicClient.readContract({ address: token, abi: stablecoinAbi, functionName: 'balanceOf', args: [owner] });
  }

  /** Pays from the service wallet; with a memo, as a TIP-20 `transferWithMemo`. */
  async transfer(to: Address, amount: bigint, memo: Hex = zeroHash, options?: EvmWriteOptions): Promise<ChainWrite> {
    const call =
      memo === zeroHash
        ? contractCall(this.token, stablecoinAbi, 'transfer', [to, amount])
        : contractCall(this.token, stablecoinAbi, 'transferWithMemo', [to, amount, memo]);
    return written(await this.connection.write(call, options));
  }

  /** `Transfer` events of a token in a block range (inclusive), optionally only to one address. */
  async transfers(query: { fromBlock: bigint; toBlock: bigint; to?: Address; token?: Address }): Promise<TokenTransfer[]> {
    const token = query.token ?? this.token;
    const logs = await this.connection.publicClient.getLogs({
      address: token,
      event: transferEvent,
      args: query.to ? { to: query.to } : {},
      fromBlock: query.fromBlock,
      toBlock: query.toBlock,
      strict: true,
    });
    return logs.map((log) => ({
      token,
      txHash: log.transactionHash,
      logIndex: log.logIndex,
      blockNumber: log.blockNumber,
      from: log.args.from,
      to: log.args.to,
      amount: log.args.amount,
    }));
  }
}
