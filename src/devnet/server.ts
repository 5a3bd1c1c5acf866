import { Hono } from 'hono';
import type { LocalChains } from '../chains/embedded/index.js';
import { answerJsonRpc } from '../chains/embedded/json-rpc.js';
import { tempoRpc } from '../chains/embedded/tempo-rpc.js';
import { Faucet } from '../features/dev/faucet.js';
import { errorResponse } from '../http/errors.js';
import { AppError, badRequest } from '../errors.js';
import { parseUsd } from '../money.js';
import { embeddedFacilitator } from '../payments/x402/embedded-facilitator.js';

/** What an instance needs to use the devnet's chains as its own (`GET /`). */
export interface DevnetInfo {
  tempo: DevnetEvmInfo;
  base: DevnetEvmInfo;
  solana: { network: string; mint: string; operator_seed: string };
}

interface DevnetEvmInfo {
  chain_id: number;
  contracts: Record<string, string>;
  /** The chain's operator, which local mode uses as the service wallet. It signs on this devnet only. */
  operator_key: string;
}

/**
 * The shared devnet (`npm run devnet`): the embedded Tempo, Base and Solana chains of one process,
 * for every service instance and wallet. JSON-RPC at /tempo, /base and /solana; a faucet; at `/`
 * the chain ids, contracts and operator keys instances start from; and at /x402 the x402
 * facilitator HTTP API (GET /supported, POST /verify and /settle) over the devnet's Base and
 * Solana, for a live-mode service pointed at the devnet (X402_FACILITATOR_URL).
 */
export function devnetApp(chains: LocalChains): Hono {
  const app = new Hono();
  const faucet = new Faucet({ chains });
  const evmInfo = (chain: LocalChains['tempo']): DevnetEvmInfo => ({
    chain_id: chain.chain.id,
    contracts: chain.contracts,
    operator_key: chain.operatorKey,
  });

  app.get('/', (c) =>
    c.json({
      tempo: evmInfo(chains.tempo),
      base: evmInfo(chains.base),
      solana: { network: chains.solana.network, mint: chains.solana.mint, operator_seed: Buffer.from(chains.solana.operatorSeed).toString('hex') },
    } satisfies DevnetInfo),
  );
  // Tempo as a node serves it: signed Tempo transactions of any calls are applied (a live-mode
  // service's rail A broadcasts its payers' there); instances in local mode apply theirs themselves.
  const rpc = { ...chains.rpc, tempo: tempoRpc(chains.tempo, { applyCalls: true }) };
  for (const name of ['tempo', 'base', 'solana'] as const) {
    app.post(`/${name}`, async (c) => c.json(await answerJsonRpc(rpc[name], await c.req.text())));
  }
  const facilitator = embeddedFacilitator(chains);
  app.get('/x402/supported', async (c) => c.json(await facilitator.getSupported()));
  for (const step of ['verify', 'settle'] as const) {
    app.post(`/x402/${step}`, async (c) => {
      const body = (await c.req.json().catch(() => null)) as { paymentPayload?: unknown; paymentRequirements?: unknown } | null;
      if (typeof body?.paymentPayload !== 'object' || body.paymentPayload === null) throw badRequest('paymentPayload', 'is required');
      if (typeof body.paymentRequirements !== 'object' || body.paymentRequirements === null) throw badRequest('paymentRequirements', 'is required');
      const [payload, requirements] = [body.paymentPayload, body.paymentRequirements] as Parameters<typeof facilitator.verify>;
      return c.json(step === 'verify' ? await facilitator.verify(payload, requirements) : await facilitator.settle(payload, requirements));
    });
  }
  app.post('/faucet', async (c) => {
    const body = (await c.req.json().catch(() => null)) as { network?: unknown; address?: unknown; amount?: unknown } | null;
    if (typeof body?.network !== 'string') throw badRequest('network', 'is required');
    if (typeof body.address !== 'string') throw badRequest('address', 'is required');
    const amount = typeof body.amount === 'string' ? parseUsd(body.amount) : null;
    if (amount === null) throw badRequest('amount', 'must be a USD amount such as "100.00"');
    const { txHash } = await faucet.fund(body.network, body.address, amount);
    return c.json({ network: body.network, address: body.address, amount: body.amount, tx_hash: txHash });
  });
  app.onError((error, c) => (error instanceof AppError ? errorResponse(c, error) : c.json({ error: { code: 'INTERNAL', message: error.message } }, 500)));
  return app;
}
