import type { Db } from '../../db/client.js';
import { openEmbeddedEvmChain, type EmbeddedEvmChain, type EmbeddedEvmOptions } from './devnet.js';
import { EmbeddedSolana } from './solana.js';

/** Local mode's chains: Tempo and Base on EDR, Solana on LiteSVM. */
export interface EmbeddedChains {
  tempo: EmbeddedEvmChain;
  base: EmbeddedEvmChain;
  solana: EmbeddedSolana;
  /** The EVM chain of a CAIP-2 network id (eip155:4217 or eip155:8453). */
  evmByNetwork(network: string): EmbeddedEvmChain | undefined;
}

export async function openEmbeddedChains(db: Db, options: EmbeddedEvmOptions = {}): Promise<EmbeddedChains> {
  const tempo = await openEmbeddedEvmChain(db, 'tempo', options);
  const base = await openEmbeddedEvmChain(db, 'base', options);
  const solana = await EmbeddedSolana.open(db);
  const evm: Record<string, EmbeddedEvmChain> = { 'eip155:4217': tempo, 'eip155:8453': base };
  return { tempo, base, solana, evmByNetwork: (network) => evm[network] };
}
