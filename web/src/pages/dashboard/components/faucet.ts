import { api, type DevNetwork } from '../../../lib/api';
import { usdToUnits } from '../../../lib/money';

export const TEMPO_NETWORK = 'eip155:4217';

/**
 * Local mode only. The employer's treasury is an account of the PayrollTreasury contract, not an
 * address: tokens minted straight to the contract would not be credited to the account. So the
 * dashboard uses a throwaway wallet: the dev faucet mints `amount` (and gas) to it, then it
 * approves the treasury contract and calls `deposit(accountId, amount)` through the embedded
 * chain's dev RPC. viem is loaded only when this runs.
 */
export async function fundTreasuryFromFaucet(accountId: string, amount: string, onStep?: (step: string) => void): Promise<{ mintTx: string; depositTx: string }> {
  const { networks } = await api<{ networks: DevNetwork[] }>('/api/dev/chains');
  const tempo = networks.find((n) => n.network === TEMPO_NETWORK);
  const stablecoin = tempo?.contracts.stablecoin;
  const treasury = tempo?.contracts.payrollTreasury;
  if (!tempo || tempo.chain_id === null || !stablecoin || !treasury) throw new Error('The local Tempo chain does not list its stablecoin and treasury contracts.');

  const [{ createPublicClient, createWalletClient, defineChain, http, parseAbi }, { generatePrivateKey, privateKeyToAccount }] = await Promise.all([
    import('viem'),
    import('viem/accounts'),
  ]);
  const chain = defineChain({
    id: tempo.chain_id,
    name: 'Tempo (local)',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [new URL(tempo.rpc_url, window.location.origin).href] } },
  });
  const account = privateKeyToAccount(generatePrivateKey());

  onStep?.('Minting test tokens…');
  const minted = await api<{ tx_hash: string }>('/api/dev/faucet', { method: 'POST', body: { network: TEMPO_NETWORK, address: account.address, amount } });

  const units = usdToUnits(amount);
  const abi = parseAbi(['function approve(address spender, uint256 amount) returns (bool)', 'function deposit(uint256 accountId, uint256 amount)']);
  const wallet = createWalletClient({ account, chain, transport: http() });
  const reader = createPublicClient({ chain, transport: http() });

  onStep?.('Approving the treasury contract…');
  const approval = await wallet.writeContract({ address: stablecoin as `0x${string}`, abi, functionName: 'approve', args: [treasury as `0x${string}`, units] });
  if ((await reader.waitForTransactionReceipt({ hash: approval })).status !== 'success') throw new Error('The approval was reverted.');

  onStep?.('Depositing into the treasury…');
  const deposit = await wallet.writeContract({ address: treasury as `0x${string}`, abi, functionName: 'deposit', args: [BigInt(accountId), units] });
  if ((await reader.waitForTransactionReceipt({ hash: deposit })).status !== 'success') throw new Error('The deposit was reverted.');
  return { mintTx: minted.tx_hash, depositTx: deposit };
}
