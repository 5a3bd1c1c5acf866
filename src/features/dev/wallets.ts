import { bytesToHex, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';

/**
 * The development wallets: keys derived from the mnemonic every EVM development tool publishes
 * (Hardhat, Anvil), so they are test keys by definition. The demo tenant's employees are paid to
 * the first of them (src/features/demo/seed.ts), and local mode's browser wallet signs with them
 * (GET /api/dev/wallets): the demo employee can send money from their own wallet with one click.
 * Never used outside local mode.
 */
export const DEV_WALLET_MNEMONIC = 'test test test test test test test test test test test junk';

/** How many development wallets GET /api/dev/wallets lists. */
export const DEV_WALLET_COUNT = 10;

export interface DevWallet {
  address: Address;
  privateKey: Hex;
}

let derived: DevWallet[] | undefined;

/** The development wallets, BIP-44 paths m/44'/60'/0'/0/0 to /9 (derived once: each costs a key stretch). */
export function devWallets(): DevWallet[] {
  derived ??= Array.from({ length: DEV_WALLET_COUNT }, (_, index) => {
    const account = mnemonicToAccount(DEV_WALLET_MNEMONIC, { addressIndex: index });
    return { address: account.address, privateKey: bytesToHex(account.getHdKey().privateKey!) };
  });
  return derived;
}
