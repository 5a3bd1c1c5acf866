import type { Address, Hex } from 'viem';
import { ChainRevertError, type SignedEvmTransaction } from '../../chains/evm/connection.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';

export interface TreasuryTransfer {
  accountId: bigint;
  to: Address;
  amount: bigint;
  memo: Hex;
  /** Runs with the signed transaction before it is broadcast (the caller records its hash). */
  beforeBroadcast(signed: SignedEvmTransaction): Promise<void>;
}

interface Pending {
  transfer: TreasuryTransfer;
  resolve(result: { txHash: Hex }): void;
  reject(error: unknown): void;
}

/** Most payments in one transaction (gas and calldata stay far below a block's limits). */
const MAX_BATCH = 100;

/**
 * Group commit for agent payments from one treasury account. Every write is a transaction of its
 * own (signed, recorded in the nonce ledger, mined), so payments sent one by one cost one each. Instead,
 * whatever arrives while the account's previous transaction is in flight goes out together as
 * one `executeBatchPayroll` (each payment keeps its own recipient, amount and memo). A batch pays
 * all or nothing; when it reverts, its payments are retried one at a time so that one payment
 * the treasury cannot cover fails alone and the others still pay.
 */
export class TreasuryTransferBatcher {
  private readonly queues = new Map<bigint, Pending[]>();
  private readonly flushing = new Set<bigint>();

  constructor(private readonly tempo: TempoChain) {}

  transfer(transfer: TreasuryTransfer): Promise<{ txHash: Hex }> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(transfer.accountId) ?? [];
      queue.push({ transfer, resolve, reject });
      this.queues.set(transfer.accountId, queue);
      if (!this.flushing.has(transfer.accountId)) void this.flush(transfer.accountId);
    });
  }

  private async flush(accountId: bigint): Promise<void> {
    this.flushing.add(accountId);
    try {
      for (;;) {
        const queue = this.queues.get(accountId) ?? [];
        if (queue.length === 0) break;
        const batch = queue.splice(0, MAX_BATCH);
        await (batch.length === 1 ? this.sendOne(batch[0]!) : this.sendBatch(accountId, batch));
      }
    } finally {
      this.flushing.delete(accountId);
      this.queues.delete(accountId);
    }
  }

  private async sendOne({ transfer, resolve, reject }: Pending): Promise<void> {
    try {
      const { txHash } = await this.tempo.transferFromTreasury(transfer.accountId, transfer.to, transfer.amount, transfer.memo, {
        beforeBroadcast: (signed) => transfer.beforeBroadcast(signed),
      });
      resolve({ txHash });
    } catch (error) {
      reject(error);
    }
  }

  private async sendBatch(accountId: bigint, batch: Pending[]): Promise<void> {
    try {
      const { txHash } = await this.tempo.executeBatchPayroll(
        accountId,
        batch.map(({ transfer }) => ({ recipient: transfer.to, amount: transfer.amount, memo: transfer.memo })),
        { beforeBroadcast: async (signed) => void (await Promise.all(batch.map(({ transfer }) => transfer.beforeBroadcast(signed)))) },
      );
      for (const pending of batch) pending.resolve({ txHash });
    } catch (error) {
      if (!(error instanceof ChainRevertError)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      for (const pending of batch) await this.sendOne(pending);
    }
  }
}
