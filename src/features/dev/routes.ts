import { createRoute, z } from '@hono/zod-openapi';
import type { LocalChains } from '../../chains/embedded/index.js';
import { errorResponses, jsonBody, jsonContent, usdAmountSchema } from '../../http/validation.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { parseUsd } from '../../money.js';
import type { DevIdentityProvider } from '../../providers/identity/dev-idp.js';
import type { Faucet } from './faucet.js';
import { answerJsonRpc } from '../../chains/embedded/json-rpc.js';
import { SANDBOX_PAYMENT_METHODS, type CardSandbox } from '../../payments/card/sandbox.js';

const TokenRequest = z
  .object({
    sub: z.string().trim().min(1).max(255).openapi({ example: 'demo-owner', description: 'The user id.' }),
    email: z.string().trim().max(254).pipe(z.email()).optional().openapi({ example: 'owner@demo.local' }),
  })
  .openapi('DevTokenRequest');
const TokenResponse = z.object({ token: z.string() }).openapi('DevTokenResponse');
const Jwks = z.object({ keys: z.array(z.object({}).loose()) }).openapi('Jwks');

const FaucetRequest = z
  .object({
    network: z.string().min(1).openapi({ example: 'eip155:4217', description: 'CAIP-2 id of an embedded network.' }),
    address: z.string().min(1).max(64).openapi({ description: 'An EVM (0x) or Solana (base58) address, matching the network.' }),
    amount: usdAmountSchema.openapi({ example: '1000', description: 'USD, at most 1,000,000.' }),
  })
  .openapi('DevFaucetRequest');
const FaucetResponse = z
  .object({ network: z.string(), address: z.string(), amount: z.string(), tx_hash: z.string() })
  .openapi('DevFaucetResponse');

const ChainsResponse = z
  .object({
    networks: z.array(
      z.object({ network: z.string(), chain_id: z.number().int().nullable(), rpc_url: z.string(), contracts: z.record(z.string(), z.string()) }),
    ),
  })
  .openapi('DevChains');

const CardTokenRequest = z
  .object({
    payment_method: z.enum(SANDBOX_PAYMENT_METHODS).openapi({ description: '`pm_card_chargeDeclined` is declined when charged.' }),
    amount: z.string().regex(/^[1-9]\d{0,11}$/, 'must be a positive integer (minor units)').openapi({ example: '100', description: 'Spending limit in minor units (cents).' }),
    currency: z.string().regex(/^[a-z]{3}$/, 'must be a lower-case ISO currency code').openapi({ example: 'usd' }),
    expires_at: z.number().int().positive().optional().openapi({ description: 'Unix seconds; default one hour from now.' }),
  })
  .openapi('DevCardTokenRequest');
const CardTokenResponse = z.object({ spt: z.string() }).openapi('DevCardTokenResponse');

export interface DevRouteDeps {
  idp: DevIdentityProvider;
  /** The embedded chains, when this process runs them. */
  chains?: LocalChains | undefined;
  /** The card sandbox behind the card fallback offer. */
  cardSandbox?: CardSandbox | undefined;
  /** Funds wallets on the embedded chains (with `chains`). */
  faucet?: Faucet | null | undefined;
}

/** Local mode only (ARCHITECTURE.md, "Local-mode contract"): never registered in live mode. */
export function devRoutes({ idp, chains, cardSandbox, faucet }: DevRouteDeps): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/dev/token',
      tags: ['Local development'],
      summary: 'Mint an identity token for any user (local mode only)',
      request: { body: jsonBody(TokenRequest) },
      responses: { 200: jsonContent(TokenResponse, 'A JWT valid for one hour.'), ...errorResponses(400, 415) },
    }),
    async (c) => {
      const { sub, email } = c.req.valid('json');
      return c.json({ token: await idp.issue({ sub, email }) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/dev/jwks.json',
      tags: ['Local development'],
      summary: "The development identity provider's public keys",
      responses: { 200: jsonContent(Jwks, 'JWKS.') },
    }),
    (c) => c.json(idp.jwks(), 200),
  );

  if (cardSandbox) {
    app.openapi(
      createRoute({
        method: 'post',
        path: '/api/dev/card/token',
        tags: ['Local development'],
        summary: "A test shared payment token for the card sandbox (the stripe client's createToken; local mode only)",
        request: { body: jsonBody(CardTokenRequest) },
        responses: { 200: jsonContent(CardTokenResponse, 'A token that pays one charge up to its amount.'), ...errorResponses(400, 415) },
      }),
      async (c) => {
        const body = c.req.valid('json');
        const spt = await cardSandbox.issueToken({
          paymentMethod: body.payment_method,
          currency: body.currency,
          maxAmount: BigInt(body.amount),
          expiresAt: new Date((body.expires_at ?? Math.floor(Date.now() / 1000) + 3600) * 1000),
        });
        return c.json({ spt }, 200);
      },
    );
  }

  if (!chains || !faucet) return app;

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/dev/faucet',
      tags: ['Local development'],
      summary: 'Credit stablecoin (and gas) on an embedded chain (local mode only)',
      request: { body: jsonBody(FaucetRequest) },
      responses: { 200: jsonContent(FaucetResponse, 'Minted.'), ...errorResponses(400, 415) },
    }),
    async (c) => {
      const { network, address, amount } = c.req.valid('json');
      const { txHash } = await faucet.fund(network, address, parseUsd(amount)!);
      return c.json({ network, address, amount, tx_hash: txHash }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/dev/chains',
      tags: ['Local development'],
      summary: 'The embedded networks, their RPC endpoints and contract addresses (local mode only)',
      responses: { 200: jsonContent(ChainsResponse, 'Embedded networks.') },
    }),
    (c) =>
      c.json(
        {
          networks: [
            ...[chains.tempo, chains.base].map((chain) => ({
              network: `eip155:${chain.chain.id}`,
              chain_id: chain.chain.id,
              rpc_url: `/api/dev/rpc/${chain.kind}`,
              contracts: chain.contracts,
            })),
            {
              network: chains.solana.network,
              chain_id: null,
              rpc_url: '/api/dev/rpc/solana',
              contracts: { mint: chains.solana.mint, operator: chains.solana.operator.address },
            },
          ],
        },
        200,
      ),
  );

  const rpcTargets = [
    ['tempo', `the embedded Tempo chain (eip155:${chains.tempo.chain.id}), with Tempo call-batch gas estimates`, chains.rpc.tempo],
    ['base', `the embedded Base chain (eip155:${chains.base.chain.id})`, chains.rpc.base],
    ['solana', `the embedded Solana chain (${chains.solana.network})`, chains.rpc.solana],
  ] as const;
  for (const [name, description, target] of rpcTargets) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/api/dev/rpc/${name}`,
        tags: ['Local development'],
        summary: `JSON-RPC 2.0 endpoint of ${description}`,
        description: 'Send a JSON-RPC request or batch; errors are JSON-RPC error objects.',
        responses: { 200: { description: 'JSON-RPC response(s).', content: { 'application/json': { schema: z.unknown() } } } },
      }),
      async (c) => c.json((await answerJsonRpc(target, await c.req.text())) as never, 200),
    );
  }
  return app;
}
