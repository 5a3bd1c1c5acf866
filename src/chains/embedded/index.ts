import type { Database } from '../../db/client.js';
import { openEmbeddedEvmChain, type EmbeddedEvmChain, type EmbeddedEvmOptions } from './devnet.js';
import type { RpcTarget } from './json-rpc.js';
import { claimChainJournal } from './ownership.js';
import { solanaRpc } from './solana-rpc.js';
import { EmbeddedSolana, type LocalSolana } from './solana.js';
import { tempoRpc } from './tempo-rpc.js';

/**
 * Local mode's chains: Tempo and Base on EDR, Solana on LiteSVM, run in this process
 * (`openEmbeddedChains`) or by a shared devnet several instances use (`openDevnetChains`).
 */
export interface LocalChains {
  tempo: EmbeddedEvmChain;
  base: EmbeddedEvmChain;
  solana: LocalSolana;
  /** Each chain's JSON-RPC, as wallets and tools reach it (/api/dev/rpc/<chain>). */
  rpc: Record<'tempo' | 'base' | 'solana', RpcTarget>;
  /** The EVM chain of a CAIP-2 network id (eip155:4217 or eip155:8453). */
  evmByNetwork(network: string): EmbeddedEvmChain | undefined;
  close(): Promise<void>;
}

/** The chains in this process, which tests also read directly. */
export interface EmbeddedChains extends LocalChains {
  solana: EmbeddedSolana;
}

/** The EVM chain of a CAIP-2 network id among Tempo and Base. */
export const evmNetworks = (tempo: EmbeddedEvmChain, base: EmbeddedEvmChain) => {
  const evm: Record<string, EmbeddedEvmChain> = { [`eip155:${tempo.chain.id}`]: tempo, [`eip155:${base.chain.id}`]: base };
  return (network: string): EmbeddedEvmChain | undefined => evm[network];
};

export interface EmbeddedChainsOptions extends EmbeddedEvmOptions {
  /** This process lost its claim on the chain journal (PostgreSQL only): stop writing. By default it is thrown, ending the process. */
  onJournalLost?: (error: Error) => void;
}

const crash = (error: Error) => {
  throw error;
};

/** What a process does when it lost the journal: says why and exits at once, writing nothing more (no graceful shutdown, which would). */
export const stopAtOnce =
  (log: { fatal(details: object, message: string): void }) =>
  (error: Error): never => {
    log.fatal({ err: error }, 'another instance may now run these chains: stopping at once');
    process.exit(1);
  };

export async function openEmbeddedChains(database: Database, options: EmbeddedChainsOptions = {}): Promise<EmbeddedChains> {
  const claim = await claimChainJournal(database, options.onJournalLost ?? crash);
  try {
    const tempo = await openEmbeddedEvmChain(database, 'tempo', options);
    const base = await openEmbeddedEvmChain(database, 'base', options);
    const solana = await EmbeddedSolana.open(database.db);
    const rpc = { tempo: tempoRpc(tempo), base: base.evm, solana: solanaRpc(solana) };
    // Gives up this process's claim on the database's chain journal.
    return { tempo, base, solana, rpc, evmByNetwork: evmNetworks(tempo, base), close: claim.release };
  } catch (error) {
    await claim.release();
    throw error;
  }
}
