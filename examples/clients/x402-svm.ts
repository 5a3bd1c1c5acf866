/**
 * Rail C: x402 on Solana with @x402/fetch and @x402/svm, paying one paid route.
 *
 *   BASE_URL=http://localhost:3000 npx tsx x402-svm.ts
 *
 * Local mode: the mint is the embedded Solana chain's own, which @x402/fetch refuses until
 * `setSpendControls({ allowedAssets })` names it, and the scheme builds its transaction against
 * /api/dev/rpc/solana: `new ExactSvmScheme(signer, { rpcUrl })` (without rpcUrl it asks the public
 * devnet). Live: the real USDC mint and a mainnet RPC. Exits 0 only on a 200 with a PAYMENT-RESPONSE
 * header. Runs in CI (run-all.sh).
 */
import { generateKeyPairSigner } from '@solana/kit';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client, type Network } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const print = (line: string) => process.stdout.write(`${line}\n`);

interface DevChains {
  networks: { network: string; rpc_url: string; contracts: Record<string, string> }[];
}

// 1. The local network id (solana:<genesis hash>), mint and RPC, and a payer funded with $5.
const chains = (await (await fetch(`${BASE_URL}/api/dev/chains`)).json()) as DevChains;
const solana = chains.networks.find((n) => n.network.startsWith('solana:'))!;
const network = solana.network as Network;
const signer = await generateKeyPairSigner();
const funded = await fetch(`${BASE_URL}/api/dev/faucet`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ network, address: signer.address, amount: '5' }),
});
if (!funded.ok) throw new Error(`faucet: ${funded.status} ${await funded.text()}`);

// 2. An x402 client allowed to pay that mint, at most $1 a payment, building against the local RPC.
const client = new x402Client()
  .setSpendControls({ allowedAssets: [{ network, asset: solana.contracts.mint!, maxAmountPerPayment: '1000000' }] })
  .register(network, new ExactSvmScheme(signer, { rpcUrl: `${BASE_URL}${solana.rpc_url}` }));
const payingFetch = wrapFetchWithPayment(fetch, client);

// 3. The paid route: the client signs a token transfer, the service co-signs as fee payer and settles.
const response = await payingFetch(`${BASE_URL}/api/mpp/treasury/yield-rates`);
print(`GET /api/mpp/treasury/yield-rates: ${response.status}`);
const receipt = response.headers.get('payment-response');
if (receipt) print(`PAYMENT-RESPONSE: ${JSON.stringify(decodePaymentResponseHeader(receipt))}`);
print(await response.text());
if (response.status !== 200 || !receipt) process.exit(1);
