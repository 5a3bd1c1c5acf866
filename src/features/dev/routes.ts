import { createRoute } from '@hono/zod-openapi';
import type { LocalChains } from '../../chains/embedded/index.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { parseUsd } from '../../money.js';
import type { DevIdentityProvider } from '../../providers/identity/dev-idp.js';
import type { Faucet } from './faucet.js';
import { DEV_WALLET_MNEMONIC, devWallets } from './wallets.js';
import { answerJsonRpc } from '../../chains/embedded/json-rpc.js';
import { LOCAL_ESCROW_PROGRAM_ID } from '../../chains/solana/escrow-program/index.js';
import type { CardSandbox } from '../../payments/card/sandbox.js';
import type { DevClock } from './clock.js';
import {
  CardTokenRequest,
  ClockAdvanceRequest,
  ClockReading,
  CardTokenResponse,
  ChainsResponse,
  DevWalletsResponse,
  FaucetRequest,
  FaucetResponse,
  JsonRpcAnswer,
  Jwks,
  TokenRequest,
  TokenResponse,
} from './schema.js';

export interface DevRouteDeps {
  idp: DevIdentityProvider;
  /** The embedded chains, when this process runs them. */
  chains?: LocalChains | undefined;
  /** The card sandbox behind the card fallback offer. */
  cardSandbox?: CardSandbox | undefined;
  /** Funds wallets on the embedded chains (with `chains`). */
  faucet?: Faucet | null | undefined;
  /** Moves the service's and the embedded chains' time forward (with `chains`). */
  clock?: DevClock | undefined;
}

const tags = ['Local development'];

const devToken = createRoute({
  method: 'post',
  path: '/api/dev/token',
  tags,
  summary: 'Mint an identity token for any user (local mode only)',
  request: { body: jsonBody(TokenRequest) },
  responses: { 200: jsonContent(TokenResponse, 'A JWT valid for one hour.'), ...errorResponses(400, 415) },
});

const devJwks = createRoute({
  method: 'get',
  path: '/api/dev/jwks.json',
  tags,
  summary: "The development identity provider's public keys",
  responses: { 200: jsonContent(Jwks, 'JWKS.') },
});

const cardToken = createRoute({
  method: 'post',
  path: '/api/dev/card/token',
  tags,
  summary: "A test shared payment token for the card sandbox (the stripe client's createToken; local mode only)",
  request: { body: jsonBody(CardTokenRequest) },
  responses: { 200: jsonContent(CardTokenResponse, 'A token that pays one charge up to its amount.'), ...errorResponses(400, 415) },
});

const faucetRoute = createRoute({
  method: 'post',
  path: '/api/dev/faucet',
  tags,
  summary: 'Credit stablecoin (and gas) on an embedded chain (local mode only)',
  request: { body: jsonBody(FaucetRequest) },
  responses: { 200: jsonContent(FaucetResponse, 'Minted.'), ...errorResponses(400, 415) },
});

const devWalletsRoute = createRoute({
  method: 'get',
  path: '/api/dev/wallets',
  tags,
  summary: "The development wallets' public test keys: the demo employees' wallets and the portal's development browser wallet (local mode only)",
  responses: { 200: jsonContent(DevWalletsResponse, 'The keys, in BIP-44 index order.') },
});

const devChains = createRoute({
  method: 'get',
  path: '/api/dev/chains',
  tags,
  summary: 'The embedded networks, their RPC endpoints and contract addresses (local mode only)',
  responses: { 200: jsonContent(ChainsResponse, 'Embedded networks.') },
});

const clockRoute = createRoute({
  method: 'get',
  path: '/api/dev/clock',
  tags,
  summary: "The service time, which every expiry, window and schedule follows (local mode only)",
  responses: { 200: jsonContent(ClockReading, 'The service time and how far it is ahead of the real time.') },
});

const clockAdvanceRoute = createRoute({
  method: 'post',
  path: '/api/dev/clock/advance',
  tags,
  summary: "Move the service time and the embedded Tempo and Solana clocks forward together (local mode only)",
  description:
    'Expiries, rolling windows, token lifetimes and schedules pass as if the time had gone by; every scheduled job runs at once, so what fell due acts within seconds. Base stays on the real time (no rule of ours reads it; x402 authorizations carry the client\'s own clock). Time never goes back. Times checked against the caller\'s own clock stay on the real time (X-Agent-Timestamp, payment credentials, identity tokens).',
  request: { body: jsonBody(ClockAdvanceRequest) },
  responses: { 200: jsonContent(ClockReading, 'The service time after the advance.'), ...errorResponses(400, 415) },
});

/** The JSON-RPC endpoint of one embedded chain (its summary names the chain id, known only at runtime). */
const rpcRoute = (name: 'tempo' | 'base' | 'solana', description: string) =>
  createRoute({
    method: 'post',
    path: `/api/dev/rpc/${name}`,
    tags,
    summary: `JSON-RPC 2.0 endpoint of ${description}`,
    description: 'Send a JSON-RPC request or batch; errors are JSON-RPC error objects.',
    responses: { 200: { description: 'JSON-RPC response(s).', content: { 'application/json': { schema: JsonRpcAnswer } } } },
  });

/** Local mode only (ARCHITECTURE.md, "Local-mode contract"): never registered in live mode. */
export function devRoutes({ idp, chains, cardSandbox, faucet, clock }: DevRouteDeps): FeatureApp {
  const app = featureApp();
  app.openapi(devToken, async (c) => {
    const { sub, email } = c.req.valid('json');
    return c.json({ token: await idp.issue({ sub, email }) }, 200);
  });
  app.openapi(devJwks, (c) => c.json(idp.jwks(), 200));
  if (cardSandbox) {
    app.openapi(cardToken, async (c) => {
      const body = c.req.valid('json');
      const spt = await cardSandbox.issueToken({
        paymentMethod: body.payment_method,
        currency: body.currency,
        maxAmount: BigInt(body.amount),
        expiresAt: new Date((body.expires_at ?? Math.floor(Date.now() / 1000) + 3600) * 1000),
      });
      return c.json({ spt }, 200);
    });
  }
  if (!chains || !faucet || !clock) return app;
  app.openapi(clockRoute, (c) => c.json(clock.read(), 200));
  app.openapi(clockAdvanceRoute, async (c) => c.json(await clock.advance(c.req.valid('json').seconds), 200));
  app.openapi(faucetRoute, async (c) => {
    const { network, address, amount } = c.req.valid('json');
    const { txHash } = await faucet.fund(network, address, parseUsd(amount)!);
    return c.json({ network, address, amount, tx_hash: txHash }, 200);
  });
  app.openapi(devChains, (c) => c.json(embeddedNetworks(chains), 200));
  app.openapi(devWalletsRoute, (c) =>
    c.json({ mnemonic: DEV_WALLET_MNEMONIC, wallets: devWallets().map((w, index) => ({ index, address: w.address, private_key: w.privateKey })) }, 200),
  );
  const rpcTargets = [
    ['tempo', `the embedded Tempo chain (eip155:${chains.tempo.chain.id}), with Tempo call-batch gas estimates`, chains.rpc.tempo],
    ['base', `the embedded Base chain (eip155:${chains.base.chain.id})`, chains.rpc.base],
    ['solana', `the embedded Solana chain (${chains.solana.network})`, chains.rpc.solana],
  ] as const;
  for (const [name, description, target] of rpcTargets) {
    app.openapi(rpcRoute(name, description), async (c) => c.json((await answerJsonRpc(target, await c.req.text())) as never, 200));
  }
  return app;
}

/** `GET /api/dev/chains`: each embedded network, its RPC path and contracts (the public ones are also at `GET /api/chains`). */
function embeddedNetworks(chains: LocalChains) {
  return {
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
        contracts: { mint: chains.solana.mint, operator: chains.solana.operator.address, escrowProgram: LOCAL_ESCROW_PROGRAM_ID },
      },
    ],
  };
}
