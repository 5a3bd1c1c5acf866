/**
 * Pays one paid route of a local server with the real client libraries, on the rail you choose.
 *
 *   npm start                                   # in another terminal
 *   npm run pay -- A GET /api/mpp/treasury/yield-rates
 *   npm run pay -- B GET /api/mpp/treasury/yield-rates
 *   npm run pay -- C GET /api/mpp/treasury/yield-rates
 *   npm run pay -- card POST /api/mpp/payroll/execute '{"payrollRunId":"..."}'
 *
 * Rails: A = MPP on Tempo (mppx), B = x402 on Base, C = x402 on Solana (@x402/fetch), card = the
 * card fallback (mppx's stripe method against the local card sandbox). A fresh payer key is made
 * and funded with $5 from the dev faucet each time. BASE_URL defaults to http://localhost:3000.
 */
import { generateKeyPairSigner } from '@solana/kit';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { Mppx, stripe, tempo } from 'mppx/client';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const RAILS = ['A', 'B', 'C', 'card'] as const;
type PayRail = (typeof RAILS)[number];

interface DevChains {
  networks: { network: string; chain_id: number | null; contracts: Record<string, string> }[];
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(`${BASE_URL}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}
const fund = (network: string, address: string) => post('/api/dev/faucet', { network, address, amount: '5' });

/** A fetch that pays on the chosen rail, with a freshly funded payer. */
async function payingFetch(rail: PayRail): Promise<typeof fetch> {
  const chains = (await (await fetch(`${BASE_URL}/api/dev/chains`)).json()) as DevChains;
  const byPrefix = (prefix: string) => chains.networks.find((n) => n.network.startsWith(prefix))!;

  if (rail === 'A') {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund('eip155:4217', account.address);
    const client = createClient({ chain: tempoChain, transport: http(`${BASE_URL}/api/dev/rpc/tempo`), account });
    return Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false }).fetch as typeof fetch;
  }
  if (rail === 'card') {
    const method = stripe.charge({
      paymentMethod: 'pm_card_visa',
      // Stripe issues shared payment tokens from a server; locally the dev route does.
      createToken: async ({ amount, currency, expiresAt, paymentMethod }) =>
        (await post<{ spt: string }>('/api/dev/card/token', { payment_method: paymentMethod, amount, currency, expires_at: expiresAt })).spt,
    });
    return Mppx.create({ methods: [method], polyfill: false }).fetch as typeof fetch;
  }

  // x402 clients pay only assets they are told to: local tokens live at their own addresses.
  const base = byPrefix('eip155:8453');
  const solana = byPrefix('solana:');
  const client = new x402Client().setSpendControls({
    allowedAssets: [
      { network: 'eip155:8453', asset: base.contracts.stablecoin!, maxAmountPerPayment: '5000000' },
      { network: solana.network as Network, asset: solana.contracts.mint!, maxAmountPerPayment: '5000000' },
    ],
  });
  if (rail === 'B') {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund('eip155:8453', account.address);
    client.register('eip155:8453', new ExactEvmScheme(account));
  } else {
    const signer = await generateKeyPairSigner();
    await fund(solana.network, signer.address);
    client.register(solana.network as Network, new ExactSvmScheme(signer, { rpcUrl: `${BASE_URL}/api/dev/rpc/solana` }));
  }
  return wrapFetchWithPayment(fetch, client);
}

async function main() {
  const [rail, method = 'GET', path, body] = process.argv.slice(2);
  if (!RAILS.includes(rail as PayRail) || !path) {
    process.stderr.write('usage: npm run pay -- <A|B|C|card> <GET|POST> <path> [json body]\n');
    process.exit(2);
  }
  const pay = await payingFetch(rail as PayRail);
  const response = await pay(`${BASE_URL}${path}`, {
    method,
    ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
  });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`${method} ${path} on rail ${rail}: ${response.status}`);
  const receipt = response.headers.get('payment-receipt');
  if (receipt) out(`Payment-Receipt: ${Buffer.from(receipt, 'base64url').toString('utf8')}`);
  for (const header of ['PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE']) {
    const value = response.headers.get(header);
    if (value) out(`${header}: ${JSON.stringify(decodePaymentResponseHeader(value))}`);
  }
  out(await response.text());
  if (response.status >= 400) process.exitCode = 1;
}

await main();
