import { Session } from 'mppx/tempo';
import { concat, decodeFunctionData, isAddressEqual, keccak256, type Address, type Hex } from 'viem';
import { Transaction } from 'viem/tempo';
import { CHANNEL_ESCROW_ADDRESS, topUpGas, type EmbeddedEvmChain } from './devnet.js';
import { JsonRpcError } from './evm.js';
import {
  assertTempoTransactionTimely,
  settlementQueue,
  decodeTempoTransaction,
  InvalidTempoTransactionError,
  recoverTempoSender,
  sendAs,
  TEMPO_TX_TYPE,
} from './tempo-transactions.js';

const INTRINSIC_GAS = 21_000n;
const MAX_CALLS = 32;
// Escrow calls that bind the transaction's expiring nonce hash (TIP20ChannelEscrow.sol reads it appended).
const NONCE_BOUND_CALLS = new Set(['open', 'topUp']);

interface TempoCall {
  to?: unknown;
  data?: unknown;
  input?: unknown;
  value?: unknown;
}

type Rpc = (args: { method: string; params?: unknown }) => Promise<unknown>;
type Envelope = ReturnType<typeof decodeTempoTransaction>;
type RpcReceipt = Record<string, unknown> & { logs: Record<string, unknown>[] };

export interface TempoRpcOptions {
  /**
   * Also apply signed Tempo transactions with any calls, as a Tempo node does, answering under the
   * Tempo transaction's own hash (eth_sendRawTransaction[Sync], eth_getTransactionReceipt). The
   * devnet does, for live-mode services whose rail A (mppx's tempo.charge) broadcasts the payer's
   * transaction; local mode does not: its payment gate applies rail A's transactions itself.
   */
  applyCalls?: boolean;
}

/**
 * The embedded Tempo chain's JSON-RPC as Tempo clients (viem's Tempo chain, mppx) need it: a plain
 * EVM, plus
 * - `eth_estimateGas` and `eth_call` for Tempo's call batches (`calls`), which the EVM cannot run
 *   as one transaction: each call runs from the sender on its own (an estimate is the sum, less the
 *   intrinsic cost each repeats; a call that reverts fails the whole request, as on Tempo);
 * - `eth_sendRawTransaction` of signed Tempo transactions (type 0x76) to the TIP-1034 channel
 *   escrow (mppx sessions: open, top up, settle, close): signature, chain id and validity window
 *   checked, then the call applied as its signer, with the expiring nonce hash that binds a
 *   channel to its opening transaction appended. The answer is the hash of the applied EVM
 *   transaction, whose receipt carries the escrow's events. Other Tempo transactions are refused
 *   (rail A charges apply theirs through the payment gate) unless `applyCalls` is set.
 */
export function tempoRpc(chain: EmbeddedEvmChain, options: TempoRpcOptions = {}) {
  const evm = chain.evm.request as unknown as Rpc;
  // Receipts of applied Tempo transactions by their Tempo hash (in memory: a devnet restart forgets them).
  const appliedReceipts = new Map<Hex, RpcReceipt>();
  const queue = settlementQueue(chain.evm);

  async function eachCall<T>(transaction: { calls?: unknown; from?: unknown }, run: (call: Record<string, unknown>) => Promise<T>) {
    const calls = transaction.calls;
    if (!Array.isArray(calls) || calls.length === 0 || calls.length > MAX_CALLS) {
      throw new JsonRpcError(-32602, `Invalid params: calls must hold 1-${MAX_CALLS} calls`);
    }
    const results: T[] = [];
    for (const call of calls as TempoCall[]) {
      const value = call.value === '0x' ? '0x0' : call.value; // viem sends an empty value as "0x"
      results.push(await run({ from: transaction.from, to: call.to, data: call.data ?? call.input, ...(value === undefined ? {} : { value }) }));
    }
    return results;
  }

  async function sendTempoTransaction(serialized: Hex): Promise<Hex> {
    try {
      const envelope = decodeTempoTransaction(serialized);
      if (envelope.chainId !== chain.chain.id) throw new InvalidTempoTransactionError(`the transaction is signed for chain ${envelope.chainId}`);
      const sender = recoverTempoSender(envelope);
      assertTempoTransactionTimely(envelope);
      if (options.applyCalls && !isEscrowTransaction(envelope)) return await queue(() => applyCalls(envelope, sender, serialized));
      return await sendEscrowCall(sender, channelEscrowCall(envelope, sender, serialized));
    } catch (error) {
      if (error instanceof InvalidTempoTransactionError) throw new JsonRpcError(-32003, `Transaction rejected: ${error.reason}`);
      throw error;
    }
  }

  async function sendEscrowCall(sender: Address, data: Hex): Promise<Hex> {
    const call = { from: sender, to: CHANNEL_ESCROW_ADDRESS, data };
    // The service's own closes and settlements (mppx signs them with the operator key): signed with a
    // nonce from the shared ledger like every other operator write, never beside it.
    if (isAddressEqual(sender, chain.operator.address)) return (await chain.connection.write({ to: CHANNEL_ESCROW_ADDRESS, data })).transactionHash;
    // A call that would revert is refused before anything is sent, as a node refuses it.
    const gas = BigInt((await evm({ method: 'eth_estimateGas', params: [call] })) as Hex);
    await topUpGas(chain, sender); // the signer may hold no ETH: the operator pays its gas
    return sendAs(chain.evm, { ...call, gas });
  }

  /**
   * A Tempo transaction's calls applied one by one as its signer, each estimated first (a call that
   * would revert refuses the whole transaction before anything moves; Tempo runs them atomically).
   * The receipt is the calls' logs under the Tempo hash; the same bytes sent again are not re-applied.
   */
  async function applyCalls(envelope: Envelope, sender: Address, serialized: Hex): Promise<Hex> {
    const hash = keccak256(serialized);
    if (appliedReceipts.has(hash)) return hash;
    const calls = (envelope.calls ?? []).map((call) => {
      if (!call.to) throw new InvalidTempoTransactionError('a call creates a contract, which the devnet does not apply');
      if (call.value) throw new InvalidTempoTransactionError('a call sends native value, which Tempo does not have');
      return { from: sender, to: call.to as Address, data: (call.data ?? '0x') as Hex };
    });
    if (calls.length === 0 || calls.length > MAX_CALLS) throw new InvalidTempoTransactionError(`the transaction must hold 1-${MAX_CALLS} calls`);
    const gas: bigint[] = [];
    for (const call of calls) gas.push(BigInt((await evm({ method: 'eth_estimateGas', params: [call] })) as Hex));
    await topUpGas(chain, sender);
    const receipts: RpcReceipt[] = [];
    for (const [index, call] of calls.entries()) {
      const applied = await sendAs(chain.evm, { ...call, gas: gas[index]! });
      receipts.push((await evm({ method: 'eth_getTransactionReceipt', params: [applied] })) as RpcReceipt);
    }
    const last = receipts.at(-1)!;
    const logs = receipts.flatMap((r) => r.logs).map((log, i) => ({ ...log, transactionHash: hash, logIndex: `0x${i.toString(16)}` }));
    const failed = receipts.some((r) => r.status !== '0x1');
    appliedReceipts.set(hash, { ...last, transactionHash: hash, from: sender, to: calls[0]!.to, logs, status: failed ? '0x0' : '0x1' });
    return hash;
  }

  async function receiptOf(hash: Hex): Promise<unknown> {
    return appliedReceipts.get(hash.toLowerCase() as Hex) ?? evm({ method: 'eth_getTransactionReceipt', params: [hash] });
  }

  return {
    async request(args: { method: string; params?: unknown }): Promise<unknown> {
      const params = (Array.isArray(args.params) ? args.params : []) as unknown[];
      const [transaction, block] = params as [{ calls?: unknown; from?: unknown } | null, unknown];
      const withBlock = (call: unknown) => (block === undefined ? [call] : [call, block]);
      if (args.method === 'eth_estimateGas' && transaction?.calls !== undefined) {
        const estimates = await eachCall(transaction, async (call) => BigInt((await evm({ method: 'eth_estimateGas', params: withBlock(call) })) as string));
        return `0x${estimates.reduce((total, estimate) => total + estimate - INTRINSIC_GAS, INTRINSIC_GAS).toString(16)}`;
      }
      if (args.method === 'eth_call' && transaction?.calls !== undefined) {
        const results = await eachCall(transaction, (call) => evm({ method: 'eth_call', params: withBlock(call) }));
        return results.at(-1);
      }
      const tempoTransaction = typeof params[0] === 'string' && params[0].toLowerCase().startsWith(TEMPO_TX_TYPE) ? (params[0] as Hex) : null;
      if (args.method === 'eth_sendRawTransaction' && tempoTransaction) return sendTempoTransaction(tempoTransaction);
      // EIP-7966, which mppx's tempo.charge broadcasts with: the receipt in the answer.
      if (args.method === 'eth_sendRawTransactionSync' && tempoTransaction && options.applyCalls) {
        return receiptOf(await sendTempoTransaction(tempoTransaction));
      }
      if (args.method === 'eth_getTransactionReceipt' && typeof params[0] === 'string') return receiptOf(params[0] as Hex);
      return evm(args);
    },
  };
}

function isEscrowTransaction(envelope: Envelope): boolean {
  const calls = envelope.calls ?? [];
  return calls.length === 1 && Boolean(calls[0]?.to) && isAddressEqual(calls[0]!.to as Address, CHANNEL_ESCROW_ADDRESS);
}

/**
 * The one escrow call of a channel transaction, as the EVM should receive it. The expiring nonce
 * hash is Tempo's: keccak256 of the transaction's signing encoding and its sender.
 */
function channelEscrowCall(envelope: Envelope, sender: Address, serialized: Hex): Hex {
  const calls = envelope.calls ?? [];
  const [call] = calls;
  if (calls.length !== 1 || !call?.to || !isAddressEqual(call.to as Address, CHANNEL_ESCROW_ADDRESS)) {
    throw new InvalidTempoTransactionError('the embedded Tempo chain applies signed Tempo transactions with one call to the channel escrow only');
  }
  if (call.value) throw new InvalidTempoTransactionError('the escrow call sends native value');
  const input = (call.data ?? '0x') as Hex;
  let functionName: string;
  try {
    functionName = decodeFunctionData({ abi: Session.Precompile.escrowAbi, data: input }).functionName;
  } catch {
    throw new InvalidTempoTransactionError('the call is not a channel escrow function');
  }
  if (!NONCE_BOUND_CALLS.has(functionName)) return input;
  const signed = Transaction.deserialize(serialized as Transaction.TransactionSerializedTempo);
  const { Channel } = Session.Precompile;
  const expiringNonceHash = Channel.computeExpiringNonceHash(Channel.transactionForExpiringNonceHash({ transaction: signed } as never) as never, {
    sender,
  });
  return concat([input, expiringNonceHash]);
}
