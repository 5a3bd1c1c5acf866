import type { Database } from '../../db/client.js';
import { openEmbeddedEvmChain, type EmbeddedEvmChain, type EmbeddedEvmOptions } from './devnet.js';
import { claimChainJournal } from './ownership.js';
import { EmbeddedSolana } from './solana.js';

/** Local mode's chains: Tempo and Base on EDR, Solana on LiteSVM. */
export interface EmbeddedChains {
  tempo: EmbeddedEvmChain;
  base: EmbeddedEvmChain;
  solana: EmbeddedSolana;
  /** The EVM chain of a CAIP-2 network id (eip155:4217 or eip155:8453). */
  evmByNetwork(network: string): EmbeddedEvmChain | undefined;
  /** Gives up this process's claim on the database's chain journal. */
  close(): Promise<void>;
}

export async function openEmbeddedChains(database: Database, options: EmbeddedEvmOptions = {}): Promise<EmbeddedChains> {
  const claim = await claimChainJournal(database);
  try {
    const tempo = await openEmbeddedEvmChain(database, 'tempo', options);
    const base = await openEmbeddedEvmChain(database, 'base', options);
    const solana = await EmbeddedSolana.open(database.db);
    const evm: Record<string, EmbeddedEvmChain> = { 'eip155:4217': tempo, 'eip155:8453': base };
    return { tempo, base, solana, evmByNetwork: (network) => evm[network], close: claim.release };
  } catch (error) {
    await claim.release();
    throw error;
  }
}
