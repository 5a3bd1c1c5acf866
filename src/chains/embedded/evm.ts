import {
  ContractDecoder,
  EdrContext,
  L1_CHAIN_TYPE,
  l1GenesisState,
  l1HardforkFromString,
  l1ProviderFactory,
  MineOrdering,
  type Provider,
} from '@nomicfoundation/edr';
import { custom, hexToBytes, keccak256, parseTransaction, recoverTransactionAddress, type Address, type EIP1193RequestFn, type Hex, type Transport } from 'viem';
import { serialQueue } from '../serial.js';

const HARDFORK = 'Prague'; // EDR's spelling
// ARCHITECTURE.md: keep the block gas limit at or below 2^24.
export const EMBEDDED_BLOCK_GAS_LIMIT = 16_777_216n;

let context: Promise<EdrContext> | undefined;

/** EDR wants one context per process, with each chain type's factory registered once. */
function edrContext(): Promise<EdrContext> {
  context ??= (async () => {
    const created = new EdrContext();
    await created.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory());
    return created;
  })();
  return context;
}

export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

/** A call that changed (or may have changed) chain state, as journaled. */
export interface JournalEntry {
  id: number;
  method: string;
  params: unknown[];
  /** The timestamp of the block the call mined; null if the process stopped before it was known. */
  blockTimestamp: bigint | null;
}

/** Where an embedded chain (EVM or Solana) keeps the calls that rebuild its state (journal.ts). */
export interface ChainJournal {
  entries(): Promise<JournalEntry[]>;
  append(method: string, params: unknown[]): Promise<number>;
  stamp(id: number, blockTimestamp: bigint): Promise<void>;
  /** The call was refused and changed nothing. */
  discard(id: number): Promise<void>;
}

// Calls that change state, and among them those that mine a block.
const MINING = new Set(['eth_sendRawTransaction', 'eth_sendTransaction', 'evm_mine', 'hardhat_mine']);
const STATE_CHANGING = new Set([
  ...MINING,
  'evm_increaseTime',
  'evm_setNextBlockTimestamp',
  'hardhat_setCode',
  'hardhat_setBalance',
  'hardhat_setNonce',
  'hardhat_setStorageAt',
  // Impersonated eth_sendTransaction (local settlement of signed Tempo transactions) replays only
  // if the impersonation replays before it.
  'hardhat_impersonateAccount',
  'hardhat_stopImpersonatingAccount',
]);

/**
 * `embedded_sendTransactionAs [transaction]`: sends `transaction` as its `from` without that key
 * (local settlement of signed Tempo transactions), atomically, so instances sharing a devnet never
 * end each other's impersonation.
 */
export const SEND_AS = 'embedded_sendTransactionAs';

export interface EmbeddedEvm {
  chainId: number;
  /** EIP-1193 request, with errors in the standard shape (reverts: code 3 and hex data). */
  request: EIP1193RequestFn;
  /** A viem transport over `request`. */
  transport: Transport;
}

/**
 * An in-process EVM (EDR) for one chain id. Calls that revert are errors (`bailOnCallFailure`),
 * otherwise a simulation of a reverting call, and with it a replayed authorization, would pass.
 */
export async function startEmbeddedEvm(options: {
  chainId: number;
  funded?: { address: Address; balance: bigint }[];
  /** Unix seconds of the genesis block (default: now). A journaled chain needs the same one each start. */
  genesisTime?: bigint;
  /** Without a journal the chain lives in memory only. */
  journal?: ChainJournal;
}): Promise<EmbeddedEvm> {
  const edr = await edrContext();
  const genesis = l1GenesisState(l1HardforkFromString(HARDFORK)).concat(
    (options.funded ?? []).map(({ address, balance }) => ({ address: hexToBytes(address), balance })),
  );
  const provider: Provider = await edr.createProvider(
    L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: true,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: true,
      bailOnTransactionFailure: false,
      chainId: BigInt(options.chainId),
      coinbase: new Uint8Array(20),
      // Also the cap of eth_estimateGas without a gas field: a batch may use a whole block, as on a real node.
      defaultTransactionGasLimit: EMBEDDED_BLOCK_GAS_LIMIT,
      genesisState: genesis,
      hardfork: HARDFORK,
      initialBaseFeePerGas: 1n,
      minGasPrice: 0n,
      mining: { autoMine: true, blockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT, memPool: { order: MineOrdering.Priority } },
      network: {
        genesisBlockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT,
        ...(options.genesisTime === undefined ? {} : { genesisBlockTime: options.genesisTime }),
      },
      networkId: BigInt(options.chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder(),
  );

  const raw = async (method: string, params: unknown[] = []): Promise<unknown> => {
    const response = await provider.handleRequest(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
    const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (body.error) throw normaliseError(body.error);
    return body.result;
  };
  const latestTimestamp = async () =>
    BigInt(((await raw('eth_getBlockByNumber', ['latest', false])) as { timestamp: string }).timestamp);

  const journal = options.journal;
  if (journal) {
    // Rebuild the state: the same calls, in order, in blocks with the same timestamps.
    for (const entry of await journal.entries()) {
      if (entry.blockTimestamp !== null && MINING.has(entry.method)) {
        await raw('evm_setNextBlockTimestamp', [`0x${entry.blockTimestamp.toString(16)}`]);
      }
      // A call journaled just before a crash may have been refused then; it is refused again now.
      await raw(entry.method, entry.params).catch(() => {});
    }
  }

  // State changes run one at a time, so the journal's order is the chain's order.
  const serialised = serialQueue();
  const journaled = async (method: string, params: unknown[]) => {
    if (!journal) return raw(method, params);
    const id = await journal.append(method, params);
    let result: unknown;
    try {
      result = await raw(method, params);
    } catch (error) {
      await journal.discard(id);
      throw error;
    }
    if (MINING.has(method)) await journal.stamp(id, await latestTimestamp());
    return result;
  };
  const mempool = futureNonceMempool(raw, journaled);
  const mutate = (method: string, params: unknown[]) =>
    serialised(async () => {
      if (method === 'eth_sendRawTransaction') return mempool.send(params);
      const result = method === SEND_AS ? await sendAs(params) : await journaled(method, params);
      if (MINING.has(method) || method === SEND_AS) await mempool.release();
      return result;
    });
  // Impersonation is chain-wide state: taken and given back around one send, with nothing between.
  const sendAs = async ([transaction]: unknown[]) => {
    const from = (transaction as { from?: unknown } | undefined)?.from;
    if (typeof from !== 'string') throw new JsonRpcError(-32602, `Invalid params: ${SEND_AS} needs a transaction with from`);
    await journaled('hardhat_impersonateAccount', [from]);
    try {
      return await journaled('eth_sendTransaction', [transaction]);
    } finally {
      await journaled('hardhat_stopImpersonatingAccount', [from]);
    }
  };

  const request = (async ({ method, params }: { method: string; params?: unknown }) => {
    const args = (params ?? []) as unknown[];
    return STATE_CHANGING.has(method) || method === SEND_AS ? mutate(method, args) : raw(method, args);
  }) as EIP1193RequestFn;

  return { chainId: options.chainId, request, transport: custom({ request }, { retryCount: 0 }) };
}

/**
 * What a node's mempool does for writers that share a key (several service instances take nonces
 * from one ledger and may broadcast out of order): a transaction whose nonce is ahead of its
 * sender's waits until the nonces before it are mined, then mines. EDR's automine refuses it
 * instead ("can't be queued when automining"). Runs inside the chain's serial queue.
 */
function futureNonceMempool(raw: (method: string, params: unknown[]) => Promise<unknown>, send: (method: string, params: unknown[]) => Promise<unknown>) {
  const waiting = new Map<Address, Map<number, unknown[]>>();

  /** Mines what waited for the nonces now mined; a waiting transaction the chain refuses is dropped, as a node drops it. */
  async function release(): Promise<void> {
    for (const [sender, queue] of waiting) {
      for (;;) {
        const next = Number(await raw('eth_getTransactionCount', [sender, 'latest']));
        const params = queue.get(next);
        if (!params) break;
        queue.delete(next);
        await send('eth_sendRawTransaction', params).catch(() => {});
      }
      if (queue.size === 0) waiting.delete(sender);
    }
  }

  return {
    release,
    async send(params: unknown[]): Promise<unknown> {
      try {
        const result = await send('eth_sendRawTransaction', params);
        if (waiting.size > 0) await release();
        return result;
      } catch (error) {
        if (!/nonce too high/i.test((error as Error).message)) throw error;
        const serialized = params[0] as Hex;
        const sender = await recoverTransactionAddress({ serializedTransaction: serialized as never });
        const { nonce } = parseTransaction(serialized);
        const queue = waiting.get(sender) ?? new Map<number, unknown[]>();
        waiting.set(sender, queue.set(Number(nonce), params));
        return keccak256(serialized);
      }
    },
  };
}

/** EDR reports a revert as -32000 with `data: {data: <hex>}`; clients expect code 3 and hex data. */
function normaliseError(error: { code: number; message: string; data?: unknown }): JsonRpcError {
  const data = error.data as { data?: unknown } | string | undefined;
  const revertData = typeof data === 'object' && data !== null && typeof data.data === 'string' ? data.data : undefined;
  if (revertData !== undefined) return new JsonRpcError(3, error.message, revertData);
  return new JsonRpcError(error.code, error.message, typeof data === 'string' ? data : undefined);
}
