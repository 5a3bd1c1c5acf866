import type { Address as SolanaAddress } from '@solana/kit';
import { generateKeyPairSigner } from '@solana/kit';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { Network, PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { Challenge } from 'mppx';
import { Mppx, stripe, tempo } from 'mppx/client';
import { createClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { Session } from 'mppx/tempo';
import type { TestApp } from './app.js';

/**
 * Paying clients for tests: the unmodified libraries real callers use, against a test app served
 * on loopback (`serveOnLoopback`) with embedded chains. Each payer is fresh and funded by the faucet.
 */
export type PayingFetch = (path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }) => Promise<Response>;

/** What a payer needs of the service: its dev faucet (a TestApp in process, or a RemoteService). */
type FaucetHost = Pick<TestApp, 'request'>;

/** The embedded chains' tokens an x402 payer is allowed to spend. */
export interface LocalAssets {
  baseStablecoin: string;
  solanaNetwork: string;
  solanaMint: string;
}

async function faucet(t: FaucetHost, network: string, address: string, amount: string): Promise<void> {
  const response = await t.request('POST', '/api/dev/faucet', { body: { network, address, amount } });
  if (response.status !== 200) throw new Error(`faucet answered ${response.status}: ${await response.text()}`);
}

function withJson(pay: typeof fetch, baseUrl: string): PayingFetch {
  return (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    return pay(`${baseUrl}${path}`, { method: init.method ?? 'GET', headers, ...(body === undefined ? {} : { body }) });
  };
}

/** Rail A: mppx's Tempo charge, signing with a fresh funded key against the dev RPC. */
export async function railA(t: FaucetHost, baseUrl: string, amountUsd = '5'): Promise<{ pay: PayingFetch; payer: Address }> {
  const account = privateKeyToAccount(generatePrivateKey());
  await faucet(t, 'eip155:4217', account.address, amountUsd);
  const client = createClient({ chain: tempoChain, transport: http(`${baseUrl}/api/dev/rpc/tempo`), account });
  const mppx = Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false });
  return { pay: withJson(mppx.fetch as typeof fetch, baseUrl), payer: account.address };
}

/**
 * Proofs made before anything is sent, for a test that presents several at once (the fetch
 * wrappers pay one 402 at a time): each `proof` answers a fresh 402 of `method path` and returns
 * the header that carries it. Rail A signs with mppx's Tempo charge, B and C with @x402's clients;
 * the payer is fresh and funded with `amountUsd` (so a test can fund exactly one fee).
 */
export async function proofMaker(t: FaucetHost, baseUrl: string, rail: 'A' | 'B' | 'C', amountUsd = '5', assets?: LocalAssets) {
  const challenge = (path: string, method: string) =>
    fetch(`${baseUrl}${path}`, { method, ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
  if (rail === 'A') {
    const account = privateKeyToAccount(generatePrivateKey());
    await faucet(t, 'eip155:4217', account.address, amountUsd);
    const client = createClient({ chain: tempoChain, transport: http(`${baseUrl}/api/dev/rpc/tempo`), account });
    const method = tempo.charge({ account, getClient: () => client });
    return {
      payer: account.address as string,
      async proof(path: string, requestMethod = 'POST'): Promise<Record<string, string>> {
        // A single charge (a per-session route offers a session challenge first).
        const charge = Challenge.fromResponseList(await challenge(path, requestMethod)).find((c) => c.intent === 'charge');
        const credential = await method.createCredential({ challenge: charge, context: {} } as never);
        return { authorization: credential };
      },
    };
  }
  // A service in another process names its assets (GET /api/dev/chains); a TestApp has them at hand.
  const local = assets ?? localAssets(t as TestApp);
  const { client, payer } = await x402Payer(t, local, baseUrl, rail, amountUsd);
  return {
    payer,
    async proof(path: string, requestMethod = 'POST'): Promise<Record<string, string>> {
      const required = decodePaymentRequiredHeader((await challenge(path, requestMethod)).headers.get('PAYMENT-REQUIRED')!);
      const network = rail === 'B' ? 'eip155:8453' : local.solanaNetwork;
      const payload = await client.createPaymentPayload({ ...required, accepts: required.accepts.filter((a) => a.network === network) });
      return { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') };
    },
  };
}

/** The card fallback: mppx's stripe method against the local card sandbox. */
export function card(baseUrl: string, paymentMethod = 'pm_card_visa', onToken: (spt: string) => void = () => {}): PayingFetch {
  const method = stripe.charge({
    paymentMethod,
    createToken: async ({ amount, currency, expiresAt, paymentMethod: pm }) => {
      const response = await fetch(`${baseUrl}/api/dev/card/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payment_method: pm, amount, currency, expires_at: expiresAt }),
      });
      const { spt } = (await response.json()) as { spt: string };
      onToken(spt);
      return spt;
    },
  });
  return withJson(Mppx.create({ methods: [method], polyfill: false }).fetch as typeof fetch, baseUrl);
}

/** A payer's stablecoin on a rail's embedded chain (Tempo, Base or Solana). */
export async function railBalance(t: TestApp, rail: 'A' | 'B' | 'C', payer: string): Promise<bigint> {
  const chains = t.embeddedChains!;
  if (rail === 'C') return chains.solana.tokenBalance(payer as SolanaAddress);
  const chain = rail === 'A' ? chains.tempo : chains.base;
  return chain.connection.publicClient.readContract({ address: chain.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [payer as Address] });
}

/** A funded x402 client for rail B (Base) or C (Solana), with local mode's tokens allowed. */
async function x402Payer(t: FaucetHost, assets: LocalAssets, baseUrl: string, rail: 'B' | 'C', amountUsd: string): Promise<{ client: x402Client; payer: string }> {
  const cap = '5000000';
  const client = new x402Client().setSpendControls({
    allowedAssets: [
      { network: 'eip155:8453', asset: assets.baseStablecoin, maxAmountPerPayment: cap },
      { network: assets.solanaNetwork as Network, asset: assets.solanaMint, maxAmountPerPayment: cap },
    ],
  });
  if (rail === 'B') {
    const account = privateKeyToAccount(generatePrivateKey());
    await faucet(t, 'eip155:8453', account.address, amountUsd);
    client.register('eip155:8453', new ExactEvmScheme(account));
    return { client, payer: account.address };
  }
  const signer = await generateKeyPairSigner();
  await faucet(t, assets.solanaNetwork, signer.address as SolanaAddress, amountUsd);
  client.register(assets.solanaNetwork as Network, new ExactSvmScheme(signer, { rpcUrl: `${baseUrl}/api/dev/rpc/solana` }));
  return { client, payer: signer.address };
}

function localAssets(t: TestApp): LocalAssets {
  const chains = t.localChains!;
  return { baseStablecoin: chains.base.contracts.stablecoin!, solanaNetwork: chains.solana.network, solanaMint: chains.solana.mint };
}

/** Rails B (x402 on Base) and C (x402 on Solana), through @x402/fetch. */
export async function x402(t: TestApp, baseUrl: string, rail: 'B' | 'C', amountUsd = '5'): Promise<{ pay: PayingFetch; payer: string }> {
  return x402WithAssets(t, localAssets(t), baseUrl, rail, amountUsd);
}

/** `x402` for a service in another process: its assets from GET /api/dev/chains. */
export async function x402WithAssets(t: FaucetHost, assets: LocalAssets, baseUrl: string, rail: 'B' | 'C', amountUsd = '5'): Promise<{ pay: PayingFetch; payer: string }> {
  const { client, payer } = await x402Payer(t, assets, baseUrl, rail, amountUsd);
  return { pay: withJson(wrapFetchWithPayment(fetch, client), baseUrl), payer };
}

/** Rails B and C without HTTP: a challenge's `paymentRequired` in, a signed PaymentPayload out (as @x402/fetch makes on a 402). */
export async function x402Payloads(t: TestApp, baseUrl: string, rail: 'B' | 'C', amountUsd = '5'): Promise<(required: PaymentRequired) => Promise<PaymentPayload>> {
  const { client } = await x402Payer(t, localAssets(t), baseUrl, rail, amountUsd);
  return (required) => client.createPaymentPayload(required);
}

/**
 * Rail A sessions: mppx's session manager (TIP-1034 payment channels), unmodified, with a fresh
 * funded key; `maxDeposit` bounds what the channel can ever pay.
 */
export async function railASession(t: TestApp, baseUrl: string, maxDeposit = '0.05') {
  const account = privateKeyToAccount(generatePrivateKey());
  await faucet(t, 'eip155:4217', account.address, '5');
  const client = createClient({ chain: tempoChain, transport: http(`${baseUrl}/api/dev/rpc/tempo`), account });
  return Session.Client.sessionManager({ account, client, maxDeposit });
}

/**
 * What a crash between a fee's settlement and its answer leaves (issue 24): the payment settled,
 * unserved, nobody holding it, no receipt. By its id, or as the one payment a payer made; returns the id.
 */
export async function loseAnswer(t: Pick<TestApp, 'database'>, payment: { id: string } | { payer: string }): Promise<string> {
  let id: string;
  if ('id' in payment) id = payment.id;
  else {
    const { rows } = await t.database.pool.query<{ id: string }>('SELECT id FROM payments WHERE lower(payer) = lower($1)', [payment.payer]);
    if (rows.length !== 1) throw new Error(`payer ${payment.payer} made ${rows.length} payments, not one`);
    id = rows[0]!.id;
  }
  await t.database.pool.query("UPDATE payments SET status = 'settled', served_at = NULL, lease_until = now() - interval '1 second' WHERE id = $1", [id]);
  await t.database.pool.query('DELETE FROM payment_receipts WHERE payment_id = $1', [id]);
  return id;
}
