/**
 * Local mode: funds an employer's treasury with test tokens, as the Treasury page's "Fund from
 * faucet" does (web/src/pages/dashboard/components/faucet.ts). The treasury is an account of the
 * PayrollTreasury contract, so tokens sent straight to the contract are not credited: a fresh
 * wallet gets the tokens from the dev faucet, approves the contract and calls deposit(account, amount).
 */
import { parseArgs } from 'node:util';
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { displayUsd, parseUsd } from '../src/money.js';
import { DEFAULT_BASE_URL, serverUrl } from './server-url.js';

const USAGE = `usage: npx tsx examples/fund-treasury.ts --employer ID --amount USD --identity-token JWT [--base-url URL]

Local mode only: mints test tokens with the dev faucet and deposits them into the employer's
treasury on the local Tempo chain. The token is the employer owner's (README "Try it" makes one).
  --base-url URL          the server (default: $BASE_URL, else ${DEFAULT_BASE_URL}); printed first
  --employer ID           the employer whose treasury to fund
  --amount USD            how much, e.g. 50000 or 1234.56 (at most 1,000,000 a run)
  --identity-token JWT    the owner's bearer token, to read the employer's treasury account
`;

const TEMPO = 'eip155:4217';
const abi = parseAbi(['function approve(address spender, uint256 amount) returns (bool)', 'function deposit(uint256 accountId, uint256 amount)']);

interface Treasury {
  employer_account_id: string;
  available_usd: string;
}

class FundError extends Error {}

async function call<T>(url: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (!response.ok) throw new FundError(`${new URL(url).pathname} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** The amount in base units: a plain USD decimal above 0 (the faucet caps a request at 1,000,000). */
function toBaseUnits(usd: string): bigint {
  const units = parseUsd(usd);
  if (!units) throw new FundError(`--amount must be a USD amount above 0 with at most 6 decimals, not ${usd}`);
  return units;
}

async function fund(baseUrl: string, employer: string, amount: string, token: string): Promise<Treasury> {
  const units = toBaseUnits(amount);
  const treasuryUrl = `${baseUrl}/api/employers/${employer}/treasury`;
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const { employer_account_id: accountId } = await call<Treasury>(treasuryUrl, auth);
  const { networks } = await call<{ networks: { network: string; chain_id: number; rpc_url: string; contracts: Record<string, Hex> }[] }>(`${baseUrl}/api/dev/chains`);
  const tempo = networks.find((n) => n.network === TEMPO)!;
  const { stablecoin, payrollTreasury } = tempo.contracts;

  const account = privateKeyToAccount(generatePrivateKey());
  await call(`${baseUrl}/api/dev/faucet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network: TEMPO, address: account.address, amount }) });
  const chain = defineChain({ id: tempo.chain_id, name: 'Tempo (local)', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [new URL(tempo.rpc_url, baseUrl).href] } } });
  const wallet = createWalletClient({ account, chain, transport: http() });
  const reader = createPublicClient({ chain, transport: http() });
  for (const [address, functionName, args] of [
    [stablecoin!, 'approve', [payrollTreasury!, units]],
    [payrollTreasury!, 'deposit', [BigInt(accountId), units]],
  ] as const) {
    const hash = await wallet.writeContract({ address, abi, functionName, args } as Parameters<typeof wallet.writeContract>[0]);
    if ((await reader.waitForTransactionReceipt({ hash })).status !== 'success') throw new FundError(`${functionName} was reverted (${hash})`);
  }
  return call<Treasury>(treasuryUrl, auth);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'base-url': { type: 'string' }, employer: { type: 'string' }, amount: { type: 'string' }, 'identity-token': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return void process.stdout.write(USAGE);
  const server = serverUrl(values['base-url']);
  if ('problem' in server) throw new FundError(server.problem);
  process.stdout.write(`Server: ${server.baseUrl} (${server.from})\n`);
  if (!values.employer || !values.amount || !values['identity-token']) throw new FundError('--employer, --amount and --identity-token are all needed (--help)');
  const treasury = await fund(server.baseUrl, values.employer, values.amount, values['identity-token']);
  const available = displayUsd(parseUsd(treasury.available_usd)!);
  process.stdout.write(`Deposited ${displayUsd(toBaseUnits(values.amount))} into treasury account #${treasury.employer_account_id}: ${available} available\n`);
}

await main().catch((error: unknown) => {
  const cause = (error as { cause?: { code?: string } }).cause;
  const message = error instanceof FundError ? error.message : cause?.code ? `cannot reach the server: ${cause.code}` : String((error as Error).message ?? error).split('\n')[0];
  process.stderr.write(`fund-treasury: ${message}\n`);
  process.exitCode = 1;
});
