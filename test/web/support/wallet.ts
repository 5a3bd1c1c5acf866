import type { Page } from 'playwright-core';
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { baseUrl } from './harness.js';

/**
 * An EIP-1193 provider injected as `window.ethereum`, as a browser wallet extension would be: the
 * page's requests go to this process (page.exposeFunction), which signs with `privateKey` and
 * sends through the server's dev RPC for the embedded Tempo chain. What it signs is whatever the
 * page asks (eth_sendTransaction), so the web app's own wallet code is what is under test.
 */
export async function injectWallet(page: Page, privateKey: Hex): Promise<void> {
  const account = privateKeyToAccount(privateKey);
  const transport = http(`${baseUrl()}/api/dev/rpc/tempo`);
  const reader = createPublicClient({ transport });
  const chain = defineChain({ id: await reader.getChainId(), name: 'tempo (embedded)', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [] } } });
  const signer = createWalletClient({ account, chain, transport });

  await page.exposeFunction('__testWalletRequest', async ({ method, params }: { method: string; params?: unknown[] }) => {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [account.address];
      case 'eth_chainId':
        return `0x${chain.id.toString(16)}`;
      case 'wallet_switchEthereumChain':
        return null;
      case 'eth_sendTransaction': {
        const tx = params![0] as { to: Hex; data?: Hex; value?: Hex };
        return signer.sendTransaction({ to: tx.to, data: tx.data, value: tx.value ? BigInt(tx.value) : undefined });
      }
      default:
        return reader.request({ method, params } as never);
    }
  });
  await page.addInitScript(() => {
    // Runs in the page: globalThis is its window.
    const page = globalThis as unknown as { ethereum: unknown; __testWalletRequest: (args: unknown) => Promise<unknown> };
    page.ethereum = { request: (args: unknown) => page.__testWalletRequest(args), on: () => undefined, removeListener: () => undefined };
  });
}
