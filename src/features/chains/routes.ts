import { createRoute } from '@hono/zod-openapi';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { CHANNEL_ESCROW_ADDRESS } from '../../chains/embedded/devnet.js';
import type { Chains } from '../../chains/index.js';
import { jsonContent } from '../../http/validation.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { PublicChainsResponse } from './schema.js';

const publicChains = createRoute({
  method: 'get',
  path: '/api/chains',
  tags: ['Chains'],
  summary: "The networks the service pays and is paid on, with every public contract and program id a client needs (no sign-in)",
  description:
    "The same ids in local and live mode, from the service's own configuration: a client building a transaction (a deliver-signed escrow " +
    "submission, a session channel) reads them here. Local mode's `GET /api/dev/chains` adds each embedded chain's RPC endpoint.",
  responses: { 200: jsonContent(PublicChainsResponse, 'The networks.') },
});

/** `GET /api/chains`: public, in both modes. */
export function publicChainRoutes(deps: { chains: Chains }): FeatureApp {
  const app = featureApp();
  const networks = publicNetworks(deps.chains);
  app.openapi(publicChains, (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json({ networks }, 200);
  });
  return app;
}

/** Each network's public ids (none of them changes while the service runs). */
export function publicNetworks(chains: Chains) {
  const { tempo, base, solana } = chains;
  return [
    {
      network: tempo.network,
      chain_id: tempo.connection.chain.id,
      token: tempo.token,
      pay_to: tempo.serviceAddress,
      // MPP sessions' escrow is a Tempo precompile: the same address on every Tempo chain.
      contracts: { ...tempo.contracts, channelEscrow: CHANNEL_ESCROW_ADDRESS } as Record<string, string>,
    },
    { network: base.network, chain_id: base.connection.chain.id, token: base.token, pay_to: base.serviceAddress, contracts: { usdc: base.token } as Record<string, string> },
    {
      network: solana.network,
      chain_id: null,
      token: solana.mint,
      pay_to: solana.serviceAddress,
      contracts: { mint: solana.mint, tokenProgram: TOKEN_PROGRAM_ADDRESS, ...(solana.escrowProgram ? { escrowProgram: solana.escrowProgram } : {}) } as Record<string, string>,
    },
  ];
}
