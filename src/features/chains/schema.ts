import { z } from '@hono/zod-openapi';

export const PublicNetwork = z
  .object({
    network: z.string().openapi({ example: 'eip155:4217', description: 'CAIP-2 id.' }),
    chain_id: z.number().int().nullable().openapi({ description: 'The EVM chain id; null for Solana.' }),
    token: z.string().openapi({ description: 'The stablecoin the service is paid and pays in: a token contract, or a Solana mint.' }),
    pay_to: z.string().openapi({ description: "The service's own address on the network: where paid calls are paid." }),
    contracts: z.record(z.string(), z.string()).openapi({
      description:
        'Every contract or program a client may need, by name. Tempo: `stablecoin`, `payrollTreasury`, `streamVesting`, `yieldRouter`, ' +
        '`tip403Registry`, `addressRegistry`, `agentIdentityRegistry`, `agentReputationRegistry` and `channelEscrow` (MPP sessions). ' +
        'Solana: `mint`, `tokenProgram` and, where one is configured, `escrowProgram` (the agent escrow; its instructions are in docs/api.md).',
    }),
  })
  .openapi('PublicNetwork');

export const PublicChainsResponse = z.object({ networks: z.array(PublicNetwork) }).openapi('PublicChains');
