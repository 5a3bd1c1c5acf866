/**
 * Rail B: x402 on Base with @x402/fetch and @x402/evm, paying one paid route.
 *
 *   BASE_URL=http://localhost:3000 npx tsx x402-evm.ts
 *
 * Local mode: the stablecoin is the embedded Base chain's own token, which @x402/fetch refuses until
 * `setSpendControls({ allowedAssets })` names it (live: the real USDC address on Base). The exact
 * EVM scheme only signs an EIP-3009 authorization (the service settles it), so no RPC is needed.
 * Exits 0 only on a 200 with a PAYMENT-RESPONSE header. Runs in CI (run-all.sh).
 */
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const print = (line: string) => process.stdout.write(`${line}\n`);
const NETWORK = 'eip155:8453';

interface DevChains {
  networks: { network: string; contracts: Record<string, string> }[];
}

// 1. The local token's address, and a payer key with $5 of it (live: your own funded key, no faucet).
const chains = (await (await fetch(`${BASE_URL}/api/dev/chains`)).json()) as DevChains;
const stablecoin = chains.networks.find((n) => n.network === NETWORK)!.contracts.stablecoin!;
const account = privateKeyToAccount(generatePrivateKey());
const funded = await fetch(`${BASE_URL}/api/dev/faucet`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ network: NETWORK, address: account.address, amount: '5' }),
});
if (!funded.ok) throw new Error(`faucet: ${funded.status} ${await funded.text()}`);

// 2. An x402 client allowed to pay that token, at most $1 a payment (6 decimals: 1000000 base units).
const client = new x402Client()
  .setSpendControls({ allowedAssets: [{ network: NETWORK, asset: stablecoin, maxAmountPerPayment: '1000000' }] })
  .register(NETWORK, new ExactEvmScheme(account));
const payingFetch = wrapFetchWithPayment(fetch, client);

// 3. The paid route: the 402 lists rails A, B and C; the client pays the one it has a scheme for.
const response = await payingFetch(`${BASE_URL}/api/mpp/treasury/yield-rates`);
print(`GET /api/mpp/treasury/yield-rates: ${response.status}`);
const receipt = response.headers.get('payment-response');
if (receipt) print(`PAYMENT-RESPONSE: ${JSON.stringify(decodePaymentResponseHeader(receipt))}`);
print(await response.text());
if (response.status !== 200 || !receipt) process.exit(1);
