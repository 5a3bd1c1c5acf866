import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { custom, type Address as EvmAddress, type EIP1193RequestFn, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { embeddedChainDefinition, type EmbeddedEvmChain, type EvmChainKind } from '../chains/embedded/devnet.js';
import { JsonRpcError } from '../chains/embedded/evm.js';
import { evmNetworks, type LocalChains } from '../chains/embedded/index.js';
import type { RpcTarget } from '../chains/embedded/json-rpc.js';
import { distinctMemo, mintToInstructions, type LocalSolana, type SolanaSendResult } from '../chains/embedded/solana.js';
import { tempoRpc } from '../chains/embedded/tempo-rpc.js';
import { evmConnection } from '../chains/evm/connection.js';
import { NonceLedger } from '../chains/evm/nonces.js';
import type { Database } from '../db/client.js';
import type { DevnetInfo } from './server.js';

// A receipt on the devnet is there as soon as the send returns; poll it often.
const DEVNET_POLLING_MS = 10;

/**
 * Local mode on a shared devnet (`DEVNET_URL`): the devnet's chains as this instance's embedded
 * chains. Its operator keys sign as the service wallet, with nonces from this database's ledger, so
 * every instance on the database shares them.
 */
export async function openDevnetChains(url: string, database: Database): Promise<LocalChains> {
  const response = await fetch(url).catch((error: unknown) => {
    throw new Error(`the devnet at ${url} does not answer (start it with npm run devnet): ${(error as Error).message}`);
  });
  if (!response.ok) throw new Error(`the devnet at ${url} answered ${response.status}`);
  const info = (await response.json()) as DevnetInfo;
  const nonces = new NonceLedger(database);
  const tempo = devnetEvmChain(url, 'tempo', info.tempo, nonces);
  const base = devnetEvmChain(url, 'base', info.base, nonces);
  const solanaRpc = jsonRpcClient(`${url}/solana`);
  const seed = Uint8Array.from(Buffer.from(info.solana.operator_seed, 'hex'));
  const solana = new DevnetSolana(solanaRpc, info.solana.network, address(info.solana.mint), await createKeyPairSignerFromPrivateKeyBytes(seed), seed);
  return {
    tempo,
    base,
    solana,
    // Tempo transactions are applied here, as an in-process chain does (the devnet passes the rest on).
    rpc: { tempo: tempoRpc(tempo), base: base.evm, solana: solanaRpc },
    evmByNetwork: evmNetworks(tempo, base),
    close: async () => {},
  };
}

function devnetEvmChain(url: string, kind: EvmChainKind, info: DevnetInfo['tempo'], nonces: NonceLedger): EmbeddedEvmChain {
  const chain = embeddedChainDefinition(kind);
  if (chain.id !== info.chain_id) throw new Error(`the devnet's ${kind} chain is ${info.chain_id}, not ${chain.id}`);
  const request = jsonRpcClient(`${url}/${kind}`).request as EIP1193RequestFn;
  const transport = custom({ request }, { retryCount: 0 });
  const operator = privateKeyToAccount(info.operator_key as Hex);
  return {
    kind,
    chain,
    evm: { chainId: chain.id, request, transport },
    operator,
    operatorKey: info.operator_key as Hex,
    contracts: info.contracts as Record<string, EvmAddress>,
    connection: evmConnection({ chain, transport, signer: operator, nonces, pollingInterval: DEVNET_POLLING_MS }),
  };
}

/** JSON-RPC over HTTP whose errors keep the node's code and data (JsonRpcError), as in process. */
function jsonRpcClient(url: string): RpcTarget {
  let id = 0;
  return {
    async request({ method, params }) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: params ?? [] }),
      });
      const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
      if (body.error) throw new JsonRpcError(body.error.code, body.error.message, body.error.data);
      return body.result;
    },
  };
}

/** The devnet's Solana through its JSON-RPC; the operator's transactions are signed here. */
class DevnetSolana implements LocalSolana {
  constructor(
    private readonly rpc: RpcTarget,
    readonly network: string,
    readonly mint: Address,
    readonly operator: KeyPairSigner,
    readonly operatorSeed: Uint8Array,
  ) {}

  private call<T>(method: string, ...params: unknown[]): Promise<T> {
    return this.rpc.request({ method, params }) as Promise<T>;
  }

  async lamports(account: Address): Promise<bigint> {
    return BigInt((await this.call<{ value: number }>('getBalance', account)).value);
  }

  async hasAccount(account: Address): Promise<boolean> {
    return (await this.call<{ value: unknown }>('getAccountInfo', account, { encoding: 'base64' })).value !== null;
  }

  async trySimulate(wireBase64: string): Promise<{ error?: string }> {
    const { value } = await this.call<{ value: { err: { error: string } | null } }>('simulateTransaction', wireBase64, { encoding: 'base64' });
    return value.err ? { error: value.err.error } : {};
  }

  async sendTransaction(wireBase64: string): Promise<SolanaSendResult> {
    try {
      return { signature: await this.call<Signature>('sendTransaction', wireBase64, { encoding: 'base64' }) };
    } catch (error) {
      // The chain ran it and it failed: the devnet says so with its signature (solana-rpc.ts).
      if (!(error instanceof JsonRpcError)) throw error;
      const failed = error.data as { signature?: Signature } | undefined;
      if (!failed?.signature) throw error;
      return { signature: failed.signature, error: error.message.replace(/^Transaction failed: /, '') };
    }
  }

  async statusOf(signature: Signature): Promise<{ error?: string } | null> {
    const { value } = await this.call<{ value: ({ err: { error: string } | null } | null)[] }>('getSignatureStatuses', [signature]);
    const status = value[0];
    if (!status) return null;
    return status.err ? { error: status.err.error } : {};
  }

  async submit(instructions: Instruction[]): Promise<SolanaSendResult> {
    const { value } = await this.call<{ value: { blockhash: Blockhash; lastValidBlockHeight: number } }>('getLatestBlockhash');
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(this.operator, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: value.blockhash, lastValidBlockHeight: BigInt(value.lastValidBlockHeight) }, m),
      (m) => appendTransactionMessageInstructions([...instructions, distinctMemo()], m),
    );
    return this.sendTransaction(getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message)));
  }

  async mintTo(owner: Address, amount: bigint): Promise<SolanaSendResult> {
    return this.submit(await mintToInstructions(this, owner, amount));
  }

  async airdrop(to: Address, amount: bigint): Promise<SolanaSendResult> {
    return { signature: await this.call<Signature>('requestAirdrop', to, Number(amount)) };
  }

  async advanceClock(seconds: number): Promise<void> {
    await this.call('localAdvanceClock', seconds);
  }
}
