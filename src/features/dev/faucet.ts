import { createPublicClient, createWalletClient, parseAbi, parseEther, type Address, type Hex } from 'viem';
import type { EmbeddedChains } from '../../chains/embedded/index.js';
import type { EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { badRequest } from '../../http/errors.js';

const STABLECOIN = parseAbi(['function mint(address to, uint256 amount)']);
const GAS_TOP_UP = parseEther('1');
const GAS_FLOOR = parseEther('0.1');

/**
 * Local mode's faucet: mints the embedded stablecoin (and some gas) to an address. The operator
 * signs one transaction at a time per chain, so concurrent requests never reuse a nonce.
 */
export class Faucet {
  private readonly locks = new WeakMap<EmbeddedEvmChain, Promise<unknown>>();

  constructor(private readonly chains: EmbeddedChains) {}

  async fund(network: string, address: Address, amount: bigint): Promise<{ txHash: Hex }> {
    const chain = this.chains.byNetwork(network);
    if (!chain) throw badRequest('network', `is not an embedded network here (eip155:4217 or eip155:8453)`);
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
    const previous = this.locks.get(chain) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.locks.set(chain, next.catch(() => {}));
    return next;
  }
}
