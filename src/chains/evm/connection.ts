import {
  BaseError,
  RpcError,
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
  TransactionNotFoundError,
  WaitForTransactionReceiptTimeoutError,
} from 'viem';
import { contractErrorsAbi } from './abis.js';
import type { NonceLedger, SignerKey } from './nonces.js';

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
 * One EVM chain as the service sees it: a public client, the service's signer and its writes, whose
 * nonces come from the shared ledger (nonces.ts). Embedded and live chains differ only in the
 * transport (in-process EDR or HTTP RPC).
 */
export interface EvmConnection {
  chain: Chain;
  transport: Transport;
  pollingInterval: number;
  publicClient: PublicClient;
  walletClient: WalletClient;
  signer: Account;
  nonces: NonceLedger;
  /** Signs and broadcasts one call from the service signer, waits for it, and fails on a revert. */
  write(call: EvmCall, options?: EvmWriteOptions): Promise<TransactionReceipt>;
  /** Sends an already signed transaction again (recovery after a crash); the same bytes mine once. */
  rebroadcast(raw: Hex): Promise<void>;
  /** The receipt of a transaction, or null if it has not been mined. */
  receipt(hash: Hex): Promise<TransactionReceipt | null>;
  /** Where a signed transaction stands: its receipt once mined, 'pending' while a node holds it, null when none knows it (it never will land). */
  fate(hash: Hex): Promise<TransactionReceipt | 'pending' | null>;
  /**
   * Makes sure no nonce of the signer is left as a gap (the nonce watcher job): writes signed
   * `staleMs` ago and still unmined are broadcast again, and those the chain refuses are filled.
   */
  settleNonces(staleMs: number): Promise<{ rebroadcast: number; filled: number }>;
}

/** The chain already used the transaction's nonce (it mined, or another transaction took it). */
export const isNonceTaken = (error: unknown): boolean =>
  error !== null && /nonce too low|nonce.*(lower|already used)/i.test(String((error as Error)?.message ?? error));

const isAlreadyKnown = (error: unknown): boolean => /already known|known transaction|already imported/i.test(String((error as Error)?.message ?? error));

/** The node answered and refused (not a transport failure, after which the transaction may be in). */
const isRefusedByNode = (error: unknown): boolean => error instanceof BaseError && Boolean(error.walk((e) => e instanceof RpcError));

export function evmConnection(options: {
  chain: Chain;
  transport: Transport;
  signer: Account;
  nonces: NonceLedger;
  /** How often to poll for a receipt: a few ms on an embedded chain, about a block on a live one. */
  pollingInterval: number;
  /**
   * A write with no receipt after this long may be waiting behind a nonce another instance signed
   * and never broadcast (it died): the writer then settles the key's stalled nonces itself instead
   * of waiting for the watcher job. Default 10 s.
   */
  stallMs?: number;
}): EvmConnection {
  const { chain, transport, signer, nonces, pollingInterval, stallMs = 10_000 } = options;
  const publicClient = createPublicClient({ chain, transport, pollingInterval }) as PublicClient;
  const walletClient = createWalletClient({ chain, transport, account: signer, pollingInterval });
  const key: SignerKey = { chain: `eip155:${chain.id}`, address: signer.address };
  const writer: Writer = { chain, signer, nonces, key, publicClient, walletClient, pollingInterval, stallMs };

  return {
    chain,
    transport,
    pollingInterval,
    publicClient,
    walletClient,
    signer,
    nonces,
    write: (call, writeOptions) => write(writer, call, writeOptions),
    async rebroadcast(raw) {
      await broadcast(writer, raw);
    },
    async receipt(hash) {
      return publicClient.getTransactionReceipt({ hash }).catch(() => null);
    },
    fate: (hash) => fateOf(publicClient, hash),
    settleNonces: (staleMs) => settleNonces(writer, staleMs),
  };
}

/** What the service signer's writes share: its clients, its nonce ledger and its key in it. */
interface Writer {
  chain: Chain;
  signer: Account;
  nonces: NonceLedger;
  key: SignerKey;
  publicClient: PublicClient;
  walletClient: WalletClient<Transport, Chain, Account>;
  pollingInterval: number;
  stallMs: number;
}

const pendingCount = ({ publicClient, signer }: Writer) => publicClient.getTransactionCount({ address: signer.address, blockTag: 'pending' });
const broadcast = ({ walletClient }: Writer, raw: Hex) => walletClient.sendRawTransaction({ serializedTransaction: raw });

/** Every field but the nonce, which the ledger hands out when the transaction is signed. */
const prepare = ({ walletClient, signer, chain }: Writer, call: EvmCall) =>
  walletClient
    .prepareTransactionRequest({ account: signer, chain, to: call.to, data: call.data, value: call.value, parameters: ['chainId', 'fees', 'gas', 'type'] })
    .catch((error: unknown) => {
      throw asChainError(error);
    });

async function sign(w: Writer, call: EvmCall) {
  const request = await prepare(w, call);
  return w.nonces.sign(w.key, () => pendingCount(w), (nonce) => w.walletClient.signTransaction({ ...request, nonce } as never));
}

/** Takes a nonce's place with a zero-value transfer to the signer itself, so later nonces can mine. */
async function fill(w: Writer, nonce: number): Promise<boolean> {
  try {
    const request = await prepare(w, { to: w.signer.address, data: '0x' });
    const raw = await w.walletClient.signTransaction({ ...request, nonce } as never);
    await w.nonces.fill(w.key, { nonce, hash: keccak256(raw), raw });
    await broadcast(w, raw);
    return true;
  } catch {
    return false; // the nonce watcher tries again
  }
}

async function waitForReceipt(w: Writer, hash: Hex): Promise<TransactionReceipt> {
  const wait = (timeout?: number) => w.publicClient.waitForTransactionReceipt({ hash, pollingInterval: w.pollingInterval, retryCount: 0, timeout });
  const receipt = await wait(w.stallMs).catch(async (error: unknown) => {
    if (!(error instanceof WaitForTransactionReceiptTimeoutError)) throw error;
    await settleNonces(w, w.stallMs);
    return wait();
  });
  if (receipt.status !== 'success') throw new ChainRevertError('Reverted', [], `transaction ${hash} reverted`);
  return receipt;
}

async function settleNonces(w: Writer, staleMs: number): Promise<{ rebroadcast: number; filled: number }> {
  const mined = await w.publicClient.getTransactionCount({ address: w.signer.address, blockTag: 'latest' });
  const counts = { rebroadcast: 0, filled: 0 };
  for (const stale of await w.nonces.stale(w.key, mined, staleMs)) {
    try {
      await broadcast(w, stale.raw);
      counts.rebroadcast++;
    } catch (error) {
      if (isNonceTaken(error) || isAlreadyKnown(error) || !isRefusedByNode(error)) continue;
      if (await fill(w, stale.nonce)) counts.filled++;
    }
  }
  return counts;
}

async function write(w: Writer, call: EvmCall, writeOptions: EvmWriteOptions = {}, attempt = 1): Promise<TransactionReceipt> {
  const signed = await sign(w, call);
  try {
    await writeOptions.beforeBroadcast?.({ hash: signed.hash, raw: signed.raw });
  } catch (error) {
    await fill(w, signed.nonce);
    throw error;
  }
  try {
    await broadcast(w, signed.raw);
  } catch (error) {
    if (isNonceTaken(error) && attempt < 3) {
      // Something else signed with this key (an older deployment, a wallet): skip past its nonces.
      await w.nonces.forget(w.key, signed.nonce, signed.hash);
      await w.nonces.catchUp(w.key, await pendingCount(w));
      return write(w, call, writeOptions, attempt + 1);
    }
    if (isRefusedByNode(error)) await fill(w, signed.nonce);
    throw asChainError(error);
  }
  return waitForReceipt(w, signed.hash);
}

/** Where a signed transaction stands: its receipt once mined, 'pending' while a node holds it, null when none knows it. */
async function fateOf(publicClient: PublicClient, hash: Hex): Promise<TransactionReceipt | 'pending' | null> {
  const receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => null);
  if (receipt) return receipt;
  return publicClient.getTransaction({ hash }).then(
    () => 'pending' as const,
    (error: unknown) => {
      if (error instanceof TransactionNotFoundError) return null;
      throw error;
    },
  );
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
