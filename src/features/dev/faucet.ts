import { address as solanaAddress, isAddress as isSolanaAddress } from '@solana/kit';
import { isAddress as isEvmAddress, parseAbi, type Address, type Hex } from 'viem';
import type { LocalChains } from '../../chains/embedded/index.js';
import { topUpGas, type EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { contractCall } from '../../chains/evm/connection.js';
import { badRequest } from '../../errors.js';

const STABLECOIN = parseAbi(['function mint(address to, uint256 amount)']);
const SOL_TOP_UP = 1_000_000_000n; // 1 SOL for fees
const SOL_FLOOR = 100_000_000n;

/** At most 1,000,000 USD (base units) per request. */
export const FAUCET_MAX_UNITS = 1_000_000n * 1_000_000n;

/** Local mode's faucet: mints the embedded stablecoin (and some gas or SOL) to an address. */
export class Faucet {
  private readonly chains: LocalChains;

  constructor({ chains }: { chains: LocalChains }) {
    this.chains = chains;
  }

  /** Credits `amount` base units; returns the EVM tx hash or the Solana signature. */
  async fund(network: string, address: string, amount: bigint): Promise<{ txHash: string }> {
    if (amount <= 0n || amount > FAUCET_MAX_UNITS) throw badRequest('amount', 'must be more than 0 and at most 1000000');
    const solana = this.chains.solana;
    if (network === solana.network) {
      if (!isSolanaAddress(address)) throw badRequest('address', `must be a base58 Solana address on ${network}`);
      const owner = solanaAddress(address);
      if ((await solana.lamports(owner)) < SOL_FLOOR) await solana.airdrop(owner, SOL_TOP_UP);
      const minted = await solana.mintTo(owner, amount);
      if (minted.error) throw new Error(`faucet mint failed: ${minted.error}`);
      return { txHash: minted.signature };
    }
    const chain = this.chains.evmByNetwork(network);
    if (!chain) throw badRequest('network', `is not an embedded network here (eip155:4217, eip155:8453 or ${solana.network})`);
    if (!isEvmAddress(address, { strict: false })) throw badRequest('address', 'must be a 0x-prefixed 20-byte hex address');
    return this.evmMint(chain, address, amount);
  }

  private async evmMint(chain: EmbeddedEvmChain, address: Address, amount: bigint): Promise<{ txHash: Hex }> {
    await topUpGas(chain, address);
    const receipt = await chain.connection.write(contractCall(chain.contracts.stablecoin!, STABLECOIN, 'mint', [address, amount]));
    return { txHash: receipt.transactionHash };
  }
}
