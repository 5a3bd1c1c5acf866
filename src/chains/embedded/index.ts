import type { Db } from '../../db/client.js';
import { openEmbeddedEvmChain, type EmbeddedEvmChain, type EmbeddedEvmOptions } from './devnet.js';

/** Local mode's chains, by CAIP-2 network id. */
export interface EmbeddedChains {
  tempo: EmbeddedEvmChain;
  base: EmbeddedEvmChain;
  byNetwork(network: string): EmbeddedEvmChain | undefined;
}

export async function openEmbeddedChains(db: Db, options: EmbeddedEvmOptions = {}): Promise<EmbeddedChains> {
  const tempo = await openEmbeddedEvmChain(db, 'tempo', options);
  const base = await openEmbeddedEvmChain(db, 'base', options);
  const networks: Record<string, EmbeddedEvmChain> = { 'eip155:4217': tempo, 'eip155:8453': base };
  return { tempo, base, byNetwork: (network) => networks[network] };
}
