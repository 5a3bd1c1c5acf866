/**
 * Rail A: an MPP charge on Tempo with mppx's stock `tempo` method, paying one paid route.
 *
 *   BASE_URL=http://localhost:3000 npx tsx mppx-charge.ts
 *
 * Local mode: a fresh payer key, funded by the dev faucet; the chain is the service's embedded
 * Tempo, reached through /api/dev/rpc/tempo (without `getClient` mppx goes to the public Tempo RPC).
 * Exits 0 only on a 200 with a Payment-Receipt header. Runs in CI (run-all.sh).
 */
import { Mppx, tempo } from 'mppx/client';
import { Receipt } from 'mppx';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const print = (line: string) => process.stdout.write(`${line}\n`);

// 1. A payer key with $5 of the local stablecoin (live: your own funded key, no faucet).
const account = privateKeyToAccount(generatePrivateKey());
const funded = await fetch(`${BASE_URL}/api/dev/faucet`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ network: 'eip155:4217', address: account.address, amount: '5' }),
});
if (!funded.ok) throw new Error(`faucet: ${funded.status} ${await funded.text()}`);

// 2. mppx signs and sends the payment on the chain its viem client reaches: the local RPC here.
const client = createClient({ chain: tempoChain, transport: http(`${BASE_URL}/api/dev/rpc/tempo`), account });
const mppx = Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false });

// 3. The paid route: the 402 is answered with a credential and the request retried, once.
const response = await mppx.fetch(`${BASE_URL}/api/mpp/treasury/yield-rates`);
print(`GET /api/mpp/treasury/yield-rates: ${response.status}`);
const receipt = response.headers.get('payment-receipt');
if (receipt) print(`Payment-Receipt: ${JSON.stringify(Receipt.deserialize(receipt))}`);
print(await response.text());
if (response.status !== 200 || !receipt) process.exit(1);
