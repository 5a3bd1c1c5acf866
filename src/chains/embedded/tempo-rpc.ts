import { Session } from 'mppx/tempo';
import { concat, decodeFunctionData, isAddressEqual, type Address, type Hex } from 'viem';
import { Transaction } from 'viem/tempo';
import { CHANNEL_ESCROW_ADDRESS, topUpGas, type EmbeddedEvmChain } from './devnet.js';
import { JsonRpcError } from './evm.js';
import {
  assertTempoTransactionTimely,
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
 *   transaction, whose receipt carries the escrow's events. Other Tempo transactions are refused:
 *   rail A charges apply theirs through the payment gate.
 */
export function tempoRpc(chain: EmbeddedEvmChain) {
  const evm = chain.evm.request as unknown as Rpc;

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
    let sender: Address;
    let data: Hex;
    try {
      const envelope = decodeTempoTransaction(serialized);
      if (envelope.chainId !== chain.chain.id) throw new InvalidTempoTransactionError(`the transaction is signed for chain ${envelope.chainId}`);
      sender = recoverTempoSender(envelope);
      assertTempoTransactionTimely(envelope);
      data = channelEscrowCall(envelope, sender, serialized);
    } catch (error) {
      if (error instanceof InvalidTempoTransactionError) throw new JsonRpcError(-32003, `Transaction rejected: ${error.reason}`);
      throw error;
    }
    const call = { from: sender, to: CHANNEL_ESCROW_ADDRESS, data };
    // The service's own closes and settlements (mppx signs them with the operator key): signed with a
    // nonce from the shared ledger like every other operator write, never beside it.
    if (isAddressEqual(sender, chain.operator.address)) return (await chain.connection.write({ to: CHANNEL_ESCROW_ADDRESS, data })).transactionHash;
    // A call that would revert is refused before anything is sent, as a node refuses it.
    const gas = BigInt((await evm({ method: 'eth_estimateGas', params: [call] })) as Hex);
    await topUpGas(chain, sender); // the signer may hold no ETH: the operator pays its gas
    return sendAs(chain.evm, { ...call, gas });
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
      if (args.method === 'eth_sendRawTransaction' && typeof params[0] === 'string' && params[0].toLowerCase().startsWith(TEMPO_TX_TYPE)) {
        return sendTempoTransaction(params[0] as Hex);
      }
      return evm(args);
    },
  };
}

/**
 * The one escrow call of a channel transaction, as the EVM should receive it. The expiring nonce
 * hash is Tempo's: keccak256 of the transaction's signing encoding and its sender.
 */
function channelEscrowCall(envelope: ReturnType<typeof decodeTempoTransaction>, sender: Address, serialized: Hex): Hex {
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
