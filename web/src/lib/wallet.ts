import { createPublicClient, createWalletClient, custom, defineChain, erc20Abi, http, isAddressEqual, type Account, type Address, type EIP1193Provider, type Hex, type Transport } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { api, ApiError, type Schema } from './api';
import { usdToUnits } from './money';

/**
 * Sending stablecoin from the employee's own wallet (a cash-out's deposit): through any EIP-1193
 * browser wallet (viem's custom transport), or in local mode through the development wallet,
 * which holds the public test key of a development address (GET /api/dev/wallets) and sends
 * through the embedded chain's RPC. Loaded on demand: viem stays out of the first page load.
 */

export type DepositInstructions = NonNullable<Schema<'OfframpTransfer'>['deposit_instructions']>;

declare global {
  interface Window {
    ethereum?: EIP1193Provider;
  }
}

export type WalletOption = { kind: 'browser'; provider: EIP1193Provider } | { kind: 'development'; privateKey: Hex; rpcUrl: string };

/** The wallets that can send from `from` on `network`: the browser's, and (local mode) the development wallet holding its key. */
export async function walletOptions(from: string, network: string): Promise<WalletOption[]> {
  const options: WalletOption[] = window.ethereum ? [{ kind: 'browser', provider: window.ethereum }] : [];
  const development = await developmentWallet(from, network);
  return development ? [...options, development] : options;
}

async function developmentWallet(from: string, network: string): Promise<WalletOption | null> {
  try {
    const [{ wallets }, { networks }] = await Promise.all([
      api<Schema<'DevWallets'>>('/api/dev/wallets'),
      api<Schema<'DevChains'>>('/api/dev/chains'),
    ]);
    const wallet = wallets.find((w) => isAddressEqual(w.address as Address, from as Address));
    const rpc = networks.find((n) => n.network === network)?.rpc_url;
    return wallet && rpc ? { kind: 'development', privateKey: wallet.private_key as Hex, rpcUrl: new URL(rpc, window.location.origin).href } : null;
  } catch (reason) {
    // Not local mode: there are no development routes.
    if (reason instanceof ApiError && reason.status === 404) return null;
    throw reason;
  }
}

/** Sends exactly the deposit from the payout wallet and waits for it to land; returns the transaction hash. */
export async function sendDeposit(option: WalletOption, deposit: DepositInstructions): Promise<Hex> {
  const chainId = Number(deposit.network.split(':')[1]);
  const chain = defineChain({ id: chainId, name: deposit.network, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [] } } });
  const transport: Transport = option.kind === 'browser' ? custom(option.provider) : http(option.rpcUrl);
  const account = option.kind === 'browser' ? await browserAccount(option.provider, deposit.from_address, chainId) : privateKeyToAccount(option.privateKey);
  const reader = createPublicClient({ chain, transport });
  const amount = usdToUnits(deposit.amount);
  const token = deposit.token as Address;
  const to = deposit.to_address as Address;
  // A deposit sent earlier (another tab, before a reload) is still waiting to be seen: never send it twice.
  if ((await reader.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [to] })) >= amount) {
    throw new Error('This deposit has already arrived; the cash-out moves on once the provider confirms it.');
  }
  const wallet = createWalletClient({ account, chain, transport });
  const hash = await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 1_000 });
  if (receipt.status !== 'success') throw new Error('The transfer was refused on chain; nothing was sent.');
  return hash;
}

/** The browser wallet's account, once it is the payout wallet on the right chain. */
async function browserAccount(provider: EIP1193Provider, from: string, chainId: number): Promise<Account | Address> {
  const wallet = createWalletClient({ transport: custom(provider) });
  const addresses = await wallet.requestAddresses();
  const account = addresses.find((a) => isAddressEqual(a, from as Address));
  if (!account) throw new Error(`Your browser wallet is not your payout wallet ${from}: switch to that account and try again.`);
  if ((await wallet.getChainId()) !== chainId) await wallet.switchChain({ id: chainId });
  return account;
}
