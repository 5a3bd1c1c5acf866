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
import { custom, hexToBytes, type Address, type EIP1193RequestFn, type Transport } from 'viem';

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
      defaultTransactionGasLimit: 10_000_000n,
      genesisState: genesis,
      hardfork: HARDFORK,
      initialBaseFeePerGas: 1n,
      minGasPrice: 0n,
      mining: { autoMine: true, blockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT, memPool: { order: MineOrdering.Priority } },
      network: { genesisBlockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT },
      networkId: BigInt(options.chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder(),
  );

  const request = (async ({ method, params }: { method: string; params?: unknown }) => {
    const response = await provider.handleRequest(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? [] }));
    const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (body.error) throw normaliseError(body.error);
    return body.result;
  }) as EIP1193RequestFn;

  return { chainId: options.chainId, request, transport: custom({ request }, { retryCount: 0 }) };
}

/** EDR reports a revert as -32000 with `data: {data: <hex>}`; clients expect code 3 and hex data. */
function normaliseError(error: { code: number; message: string; data?: unknown }): JsonRpcError {
  const data = error.data as { data?: unknown } | string | undefined;
  const revertData = typeof data === 'object' && data !== null && typeof data.data === 'string' ? data.data : undefined;
  if (revertData !== undefined) return new JsonRpcError(3, error.message, revertData);
  return new JsonRpcError(error.code, error.message, typeof data === 'string' ? data : undefined);
}
