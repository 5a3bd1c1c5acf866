import {
  BaseError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  encodeFunctionData,
  keccak256,
  type Abi,
  type Account,
  type Address,
  type Chain,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem';
import { serialQueue } from '../serial.js';
import { contractErrorsAbi } from './abis.js';

/** A contract call to send as a transaction. */
export interface EvmCall {
  to: Address;
  data: Hex;
  value?: bigint;
}

/** A signed transaction, known by its hash before it is broadcast. */
export interface SignedEvmTransaction {
  hash: Hex;
  raw: Hex;
}

export interface EvmWriteOptions {
  /**
   * Runs after signing and before broadcasting: a caller that must pay exactly once records the
   * hash (and raw transaction) here, so after a crash it can look the transaction up or
   * rebroadcast the same bytes instead of signing a second payment. Throwing stops the broadcast.
   */
  beforeBroadcast?: (signed: SignedEvmTransaction) => Promise<void>;
}

/** The chain refused a call: a revert, named when it is one of our contracts' errors. */
export class ChainRevertError extends Error {
  constructor(
    readonly errorName: string,
    readonly args: readonly unknown[],
    message: string,
  ) {
    super(message);
    this.name = 'ChainRevertError';
  }
}

/**
 * One EVM chain as the service sees it: a public client, the service's signer and serialised
 * writes. Embedded and live chains differ only in the transport (in-process EDR or HTTP RPC).
 */
export interface EvmConnection {
  chain: Chain;
  transport: Transport;
  pollingInterval: number;
  publicClient: PublicClient;
  walletClient: WalletClient;
  signer: Account;
  /** Signs and broadcasts one call from the service signer, waits for it, and fails on a revert. */
  write(call: EvmCall, options?: EvmWriteOptions): Promise<TransactionReceipt>;
  /** Sends an already signed transaction again (recovery after a crash); the same bytes mine once. */
  rebroadcast(raw: Hex): Promise<void>;
  /** The receipt of a transaction, or null if it has not been mined. */
  receipt(hash: Hex): Promise<TransactionReceipt | null>;
}

export function evmConnection(options: {
  chain: Chain;
  transport: Transport;
  signer: Account;
  /** How often to poll for a receipt: a few ms on an embedded chain, about a block on a live one. */
  pollingInterval: number;
}): EvmConnection {
  const { chain, transport, signer, pollingInterval } = options;
  const publicClient = createPublicClient({ chain, transport, pollingInterval }) as PublicClient;
  const walletClient = createWalletClient({ chain, transport, account: signer, pollingInterval });
  // One write at a time: each reads the signer's next nonce after the previous one was mined.
  const serialised = serialQueue();

  const waitForReceipt = async (hash: Hex) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval, retryCount: 0 });
    if (receipt.status !== 'success') throw new ChainRevertError('Reverted', [], `transaction ${hash} reverted`);
    return receipt;
  };

  return {
    chain,
    transport,
    pollingInterval,
    publicClient,
    walletClient,
    signer,
    write: (call, writeOptions = {}) =>
      serialised(async () => {
        const request = await walletClient
          .prepareTransactionRequest({ account: signer, chain, to: call.to, data: call.data, value: call.value })
          .catch((error: unknown) => {
            throw asChainError(error);
          });
        const raw = await walletClient.signTransaction(request as never);
        const hash = keccak256(raw);
        await writeOptions.beforeBroadcast?.({ hash, raw });
        await walletClient.sendRawTransaction({ serializedTransaction: raw }).catch((error: unknown) => {
          throw asChainError(error);
        });
        return waitForReceipt(hash);
      }),
    async rebroadcast(raw) {
      await walletClient.sendRawTransaction({ serializedTransaction: raw });
    },
    async receipt(hash) {
      return publicClient.getTransactionReceipt({ hash }).catch(() => null);
    },
  };
}

/** Encodes a call to one of our contracts. */
export function contractCall<const abi extends Abi, name extends ContractFunctionName<abi, 'nonpayable' | 'payable'>>(
  to: Address,
  abi: abi,
  functionName: name,
  args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', name>,
): EvmCall {
  return { to, data: encodeFunctionData({ abi, functionName, args } as never) };
}

/** A revert anywhere in viem's error chain, named from our contracts' errors when possible. */
export function asChainError(error: unknown): unknown {
  if (!(error instanceof BaseError)) return error;
  const data = findRevertData(error);
  if (data === undefined) {
    const reverted = error.walk((e) => (e as { name?: string }).name === 'ExecutionRevertedError');
    return reverted ? new ChainRevertError('Reverted', [], error.shortMessage) : error;
  }
  try {
    const decoded = decodeErrorResult({ abi: contractErrorsAbi, data });
    return new ChainRevertError(decoded.errorName, decoded.args ?? [], `reverted with ${decoded.errorName}`);
  } catch {
    return new ChainRevertError('Reverted', [], `reverted (${data.slice(0, 10)})`);
  }
}

function findRevertData(error: BaseError): Hex | undefined {
  let found: Hex | undefined;
  error.walk((e) => {
    const data = (e as { data?: unknown }).data;
    if (typeof data === 'string' && /^0x[0-9a-fA-F]{8,}$/.test(data)) found = data as Hex;
    else if (typeof data === 'object' && data !== null && typeof (data as { data?: unknown }).data === 'string') {
      found = (data as { data: Hex }).data;
    }
    return false;
  });
  return found;
}
