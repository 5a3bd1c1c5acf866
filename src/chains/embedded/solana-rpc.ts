import {
  address,
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  isAddress,
  type Address,
  type Signature,
} from '@solana/kit';
import { JsonRpcError } from './evm.js';
import type { EmbeddedSolana } from './solana.js';

/** Blocks a blockhash stays usable on a real cluster; reported so clients set sane lifetimes. */
const BLOCKHASH_VALIDITY = 150n;

const params = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function accountAddress(value: unknown): Address {
  if (typeof value !== 'string' || !isAddress(value)) throw new JsonRpcError(-32602, 'Invalid params: not a base58 address');
  return address(value);
}

function signature(value: unknown): Signature {
  if (typeof value !== 'string') throw new JsonRpcError(-32602, 'Invalid params: not a signature');
  try {
    if (getBase58Encoder().encode(value).length === 64) return value as Signature;
  } catch {
    // not base58
  }
  throw new JsonRpcError(-32602, 'Invalid params: not a signature');
}

function wireTransaction(value: unknown, config: unknown): string {
  const encoding = (config as { encoding?: unknown } | undefined)?.encoding;
  if (encoding !== undefined && encoding !== 'base64') throw new JsonRpcError(-32602, 'Invalid params: only base64 encoding is served');
  if (typeof value !== 'string') throw new JsonRpcError(-32602, 'Invalid params: transaction must be a base64 string');
  return value;
}

/**
 * The Solana JSON-RPC methods clients need to build and send payments on the embedded chain
 * (@solana/kit, the x402 SVM client): accounts, balances, blockhash, send, simulate, statuses.
 */
export function solanaRpc(chain: EmbeddedSolana) {
  const context = () => ({ slot: Number(chain.slot()) });
  const encodeAccount = (account: ReturnType<EmbeddedSolana['getAccount']>) =>
    account.exists
      ? {
          data: [Buffer.from(account.data).toString('base64'), 'base64'],
          executable: account.executable,
          lamports: Number(account.lamports),
          owner: account.programAddress,
          rentEpoch: 0,
          space: account.data.length,
        }
      : null;

  const methods: Record<string, (args: unknown[]) => unknown> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.2.0-litesvm', 'feature-set': 0 }),
    getGenesisHash: () => chain.network.slice('solana:'.length),
    getSlot: () => Number(chain.slot()),
    getBlockHeight: () => Number(chain.slot()),
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: chain.latestBlockhash(), lastValidBlockHeight: Number(chain.slot() + BLOCKHASH_VALIDITY) },
    }),
    getBalance: ([who]) => ({ context: context(), value: Number(chain.getBalance(accountAddress(who))) }),
    getAccountInfo: ([who]) => ({ context: context(), value: encodeAccount(chain.getAccount(accountAddress(who))) }),
    getMultipleAccounts: ([list]) => ({
      context: context(),
      value: params(list).map((who) => encodeAccount(chain.getAccount(accountAddress(who)))),
    }),
    getMinimumBalanceForRentExemption: ([size]) => {
      if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) throw new JsonRpcError(-32602, 'Invalid params: size');
      return Number(chain.minimumBalanceForRentExemption(BigInt(size)));
    },
    getSignatureStatuses: ([list]) => ({
      context: context(),
      value: params(list).map((sig) => {
        const status = chain.transactionStatus(signature(sig));
        if (!status) return null;
        const err = status.error ? { error: status.error } : null;
        return { slot: Number(chain.slot()), confirmations: null, err, confirmationStatus: 'finalized' };
      }),
    }),
    getTransaction: ([sig, config]) => {
      const found = chain.transaction(signature(sig));
      if (!found) return null;
      const encoding = (config as { encoding?: unknown } | undefined)?.encoding ?? 'json';
      if (encoding !== 'json' && encoding !== 'base64') throw new JsonRpcError(-32602, 'Invalid params: encoding must be json or base64');
      const meta = {
        err: found.error ? { error: found.error } : null,
        status: found.error ? { Err: { error: found.error } } : { Ok: null },
        fee: 5000,
        logMessages: found.logs,
        preBalances: [],
        postBalances: [],
        innerInstructions: [],
        preTokenBalances: [],
        postTokenBalances: [],
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
      };
      const transaction = encoding === 'base64' ? [found.wireBase64, 'base64'] : jsonTransaction(found.wireBase64);
      return { slot: Number(chain.slot()), blockTime: null, version: 0, meta, transaction };
    },
    simulateTransaction: ([tx, config]) => {
      const outcome = chain.simulate(wireTransaction(tx, config));
      return {
        context: context(),
        value: { err: outcome.error ? { error: outcome.error } : null, logs: outcome.logs, unitsConsumed: Number(outcome.unitsConsumed) },
      };
    },
    sendTransaction: async ([tx, config]) => {
      const result = await chain.sendTransaction(wireTransaction(tx, config));
      if (result.error) throw new JsonRpcError(-32002, `Transaction failed: ${result.error}`, { signature: result.signature });
      return result.signature;
    },
    requestAirdrop: async ([who, amount]) => {
      if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) throw new JsonRpcError(-32602, 'Invalid params: lamports');
      const result = await chain.airdrop(accountAddress(who), BigInt(amount));
      if (result.error) throw new JsonRpcError(-32002, `Airdrop failed: ${result.error}`);
      return result.signature;
    },
    // Not a Solana method: the dev clock's advance reaches a shared devnet's chain through it.
    localAdvanceClock: async ([seconds]) => {
      if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds <= 0) throw new JsonRpcError(-32602, 'Invalid params: seconds');
      await chain.advanceClock(seconds);
      return null;
    },
  };

  return {
    async request({ method, params: args }: { method: string; params?: unknown }): Promise<unknown> {
      const handler = methods[method];
      if (!handler) throw new JsonRpcError(-32601, `Method not found: ${method}`);
      try {
        return await handler(params(args));
      } catch (error) {
        if (error instanceof JsonRpcError) throw error;
        throw new JsonRpcError(-32602, `Invalid params: ${(error as Error).message}`);
      }
    },
  };
}

/** A transaction in the RPC's `json` encoding: signatures and the compiled message. */
function jsonTransaction(wireBase64: string) {
  const transaction = getTransactionDecoder().decode(Buffer.from(wireBase64, 'base64'));
  const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  const base58 = getBase58Decoder();
  return {
    signatures: Object.values(transaction.signatures).map((bytes) => (bytes ? base58.decode(bytes) : null)),
    message: {
      accountKeys: message.staticAccounts,
      header: message.header,
      recentBlockhash: message.lifetimeToken,
      // v1 messages (not produced by our clients) carry no plain instruction list.
      instructions: ('instructions' in message ? message.instructions : []).map((instruction) => ({
        programIdIndex: instruction.programAddressIndex,
        accounts: instruction.accountIndices ?? [],
        data: base58.decode(instruction.data ?? new Uint8Array()),
        stackHeight: null,
      })),
    },
  };
}
