import { createDefaultRpcTransport, type Address } from '@solana/kit';
import { http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base, tempo as tempoMainnet } from 'viem/chains';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { SecretRedactor } from '../secrets.js';
import { EMBEDDED_POLLING_MS, topUpGas } from './embedded/devnet.js';
import type { LocalChains } from './embedded/index.js';
import { embeddedSolanaTransport } from './embedded/solana-transport.js';
import { evmConnection } from './evm/connection.js';
import { NonceLedger } from './evm/nonces.js';
import { redactedEvmTransport } from './redacted-transports.js';
import { TempoChain, type TempoContracts } from './evm/tempo-chain.js';
import { EvmTokenChain } from './evm/token-chain.js';
import { LOCAL_ESCROW_PROGRAM_ID } from './solana/escrow-program/index.js';
import { SolanaChain } from './solana/solana-chain.js';

/** The chain ports features use; local and live mode differ only in how they were opened. */
export interface Chains {
  tempo: TempoChain;
  base: EvmTokenChain;
  solana: SolanaChain;
}

/** Ports over local mode's embedded chains; the operator is the service wallet. */
export async function embeddedChainPorts(embedded: LocalChains): Promise<Chains> {
  return {
    tempo: new TempoChain(embedded.tempo.connection, embedded.tempo.contracts as unknown as TempoContracts, (account) =>
      topUpGas(embedded.tempo, account),
    ),
    base: new EvmTokenChain(embedded.base.connection, 'eip155:8453', embedded.base.contracts.stablecoin!),
    solana: await SolanaChain.create({
      transport: embeddedSolanaTransport(embedded.rpc.solana),
      network: embedded.solana.network,
      mint: embedded.solana.mint,
      seed: embedded.solana.operatorSeed,
      escrowProgram: LOCAL_ESCROW_PROGRAM_ID,
      pollingInterval: EMBEDDED_POLLING_MS,
    }),
  };
}

/** Ports over the live chains' RPC endpoints, with the service's keys and addresses from config. */
export async function liveChainPorts(live: Config['live'], database: Database, redactor: SecretRedactor): Promise<Chains> {
  const { tempoRpcUrl, baseRpcUrl, solanaRpcUrl, evmServiceKey, solanaServiceSeed, tempoContracts } = live;
  if (!tempoRpcUrl || !baseRpcUrl || !solanaRpcUrl || !evmServiceKey || !solanaServiceSeed || !tempoContracts) {
    throw new Error('live chains need the RPC URLs, service keys and Tempo contract addresses (config refuses to start without them)');
  }
  const signer = privateKeyToAccount(evmServiceKey);
  const nonces = new NonceLedger(database);
  return {
    tempo: new TempoChain(
      evmConnection({ chain: tempoMainnet, transport: redactedEvmTransport(http(tempoRpcUrl), redactor), signer, nonces, pollingInterval: 500 }),
      tempoContracts as TempoContracts,
    ),
    base: new EvmTokenChain(evmConnection({ chain: base, transport: redactedEvmTransport(http(baseRpcUrl), redactor), signer, nonces, pollingInterval: 1000 }), 'eip155:8453', live.baseUsdcAddress),
    solana: await SolanaChain.create({
      transport: createDefaultRpcTransport({ url: solanaRpcUrl }),
      network: live.solanaNetwork,
      mint: live.solanaUsdcMint as Address,
      seed: solanaServiceSeed,
      escrowProgram: (live.solanaEscrowProgramId as Address | undefined) ?? null,
      pollingInterval: 400,
    }),
  };
}
