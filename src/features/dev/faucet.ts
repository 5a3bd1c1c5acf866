import { address as solanaAddress, isAddress as isSolanaAddress } from '@solana/kit';
import { createPublicClient, createWalletClient, isAddress as isEvmAddress, parseAbi, parseEther, type Address, type Hex } from 'viem';
import type { EmbeddedChains } from '../../chains/embedded/index.js';
import type { EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { serialQueue } from '../../chains/embedded/serial.js';
import { badRequest } from '../../http/errors.js';

const STABLECOIN = parseAbi(['function mint(address to, uint256 amount)']);
const GAS_TOP_UP = parseEther('1');
const GAS_FLOOR = parseEther('0.1');
const SOL_TOP_UP = 1_000_000_000n; // 1 SOL for fees
const SOL_FLOOR = 100_000_000n;

/**
 * Local mode's faucet: mints the embedded stablecoin (and some gas) to an address. The operator
 * signs one transaction at a time per chain, so concurrent requests never reuse a nonce.
 */
export class Faucet {
  private readonly queues = new WeakMap<EmbeddedEvmChain, ReturnType<typeof serialQueue>>();

  constructor(private readonly chains: EmbeddedChains) {}

  /** Credits `amount` base units; returns the EVM tx hash or the Solana signature. */
  async fund(network: string, address: string, amount: bigint): Promise<{ txHash: string }> {
    const solana = this.chains.solana;
    if (network === solana.network) {
      if (!isSolanaAddress(address)) throw badRequest('address', `must be a base58 Solana address on ${network}`);
      const owner = solanaAddress(address);
      if (solana.getBalance(owner) < SOL_FLOOR) await solana.airdrop(owner, SOL_TOP_UP);
      const minted = await solana.mintTo(owner, amount);
      if (minted.error) throw new Error(`faucet mint failed: ${minted.error}`);
      return { txHash: minted.signature };
    }
    const chain = this.chains.evmByNetwork(network);
    if (!chain) throw badRequest('network', `is not an embedded network here (eip155:4217, eip155:8453 or ${solana.network})`);
    if (!isEvmAddress(address, { strict: false })) throw badRequest('address', 'must be a 0x-prefixed 20-byte hex address');
    return this.evmMint(chain, address, amount);
  }

  private evmMint(chain: EmbeddedEvmChain, address: Address, amount: bigint): Promise<{ txHash: Hex }> {
    return this.serialised(chain, async () => {
      const wallet = createWalletClient({ chain: chain.chain, account: chain.operator, transport: chain.evm.transport });
      const client = createPublicClient({ chain: chain.chain, transport: chain.evm.transport });
      if ((await client.getBalance({ address })) < GAS_FLOOR) {
        await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: address, value: GAS_TOP_UP }), pollingInterval: 5 });
      }
      const txHash = await wallet.writeContract({
        address: chain.contracts.stablecoin!,
        abi: STABLECOIN,
        functionName: 'mint',
        args: [address, amount],
      });
      await client.waitForTransactionReceipt({ hash: txHash, pollingInterval: 5 });
      return { txHash };
    });
  }

  private serialised<T>(chain: EmbeddedEvmChain, work: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(chain);
    if (!queue) this.queues.set(chain, (queue = serialQueue()));
    return queue(work);
  }
}
