import { encodeFunctionData, isAddressEqual, multicall3Abi, parseAbi, parseEventLogs, type Address, type Hex, type TransactionReceipt } from 'viem';
import { MULTICALL3_ADDRESS } from '../../chains/embedded/devnet.js';
import { asChainError, ChainRevertError, type EvmConnection } from '../../chains/evm/connection.js';

/** One EIP-3009 `transferWithAuthorization` to send: its calldata, and what its success logs. */
export interface Eip3009Settlement {
  token: Address;
  data: Hex;
  authorizer: Address;
  nonce: Hex;
}

interface Pending {
  settlement: Eip3009Settlement;
  resolve(hash: Hex): void;
  reject(error: unknown): void;
}

const authorizationUsedAbi = parseAbi(['event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)']);
// Each transfer costs well under 100k gas: 50 stay far below a block's 16.7M.
const MAX_BATCH = 50;

/**
 * Group commit for x402 settlements on an EVM chain (issue 25, part 2). While one settlement
 * transaction is in flight, new settlements queue; the next transaction carries all of them as
 * Multicall3 `aggregate3` calls that may fail one by one. An item settled when the token logged
 * `AuthorizationUsed(authorizer, nonce)` in that receipt; an item that did not fails only its own
 * request, with the revert its call gives on its own. An idle queue sends at once, as a plain
 * transaction, so one client waits no longer than before.
 */
export class Eip3009SettlementBatcher {
  private queue: Pending[] = [];
  private sending = false;

  constructor(private readonly connection: EvmConnection) {}

  /** The hash of the transaction that carried this settlement, once it mined with it. */
  settle(settlement: Eip3009Settlement): Promise<Hex> {
    return new Promise((resolve, reject) => {
      this.queue.push({ settlement, resolve, reject });
      if (!this.sending) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.sending = true;
    while (this.queue.length > 0) await this.send(this.queue.splice(0, MAX_BATCH));
    this.sending = false;
  }

  private async send(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    let receipt: TransactionReceipt;
    try {
      const calls = batch.map(({ settlement }) => ({ target: settlement.token, allowFailure: true, callData: settlement.data }));
      receipt = await this.connection.write({ to: MULTICALL3_ADDRESS, data: encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [calls] }) });
    } catch {
      // The batch itself could not be sent or reverted: each goes on its own, failing alone.
      await Promise.all(batch.map((pending) => this.sendAlone(pending)));
      return;
    }
    // Each log settles one item: the same authorization queued twice is paid, and answered, once.
    const used = parseEventLogs({ abi: authorizationUsedAbi, eventName: 'AuthorizationUsed', logs: receipt.logs });
    const failed: Pending[] = [];
    for (const pending of batch) {
      const { token, authorizer, nonce } = pending.settlement;
      const at = used.findIndex((log) => isAddressEqual(log.address, token) && isAddressEqual(log.args.authorizer, authorizer) && log.args.nonce === nonce);
      if (at < 0) failed.push(pending);
      else {
        used.splice(at, 1);
        pending.resolve(receipt.transactionHash);
      }
    }
    await Promise.all(failed.map(async ({ settlement, reject }) => reject(await this.whyItFailed(settlement, receipt.transactionHash))));
  }

  private async sendAlone({ settlement, resolve, reject }: Pending): Promise<void> {
    try {
      resolve((await this.connection.write({ to: settlement.token, data: settlement.data })).transactionHash);
    } catch (error) {
      reject(error);
    }
  }

  /** The revert the failed call gives on its own now (e.g. the authorization is used), for the payer's answer. */
  private async whyItFailed(settlement: Eip3009Settlement, batchHash: Hex): Promise<unknown> {
    const { publicClient, signer } = this.connection;
    try {
      await publicClient.call({ account: signer.address, to: settlement.token, data: settlement.data });
    } catch (error) {
      return asChainError(error);
    }
    return new ChainRevertError('Reverted', [], `transferWithAuthorization did not settle in batch ${batchHash}`);
  }
}
