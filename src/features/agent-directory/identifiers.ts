import { getBase58Decoder, getBase58Encoder } from '@solana/kit';

/**
 * The identifiers an agent can register under (docs/api.md, "Agent registration and directory"),
 * each with the key that proves it:
 *
 * - `erc8004:eip155:4217:<agent id>` (alias `erc8004:tempo:<agent id>`): an ERC-8004 agent on
 *   Tempo's identity registry, proven by an EIP-191 signature of its current owner;
 * - `solana:<base58 key>` (or the bare key): a Solana identity, proven by an Ed25519 signature of
 *   that key;
 * - `0x` + 40 hex: an EVM address, proven by an EIP-191 signature of that address.
 *
 * Each has one canonical spelling, which is what is stored and matched: `erc8004:eip155:4217:<id>`,
 * `solana:<key>`, and the lower-cased address (EVM addresses are case-insensitive).
 */
export type RegistrableIdentity =
  | { kind: 'erc8004'; identifier: string; agentId: bigint }
  | { kind: 'solana'; identifier: string; publicKey: string }
  | { kind: 'evm'; identifier: string; address: `0x${string}` };

/** The chain of ERC-8004 identifiers: Tempo, by its CAIP-2 id (canonical) or its name. */
export const ERC8004_CHAIN = 'eip155:4217';
const ERC8004 = /^erc8004:(?:eip155:4217|tempo):(0|[1-9][0-9]{0,77})$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const UINT256_MAX = (1n << 256n) - 1n;

export const IDENTIFIER_RULE =
  'must be erc8004:eip155:4217:<agent id> (or erc8004:tempo:<agent id>), solana:<base58 32-byte key>, or a 0x-prefixed 20-byte EVM address';

/** The identity an identifier names, in its canonical spelling; null for any other form. */
export function parseRegistrableIdentifier(value: string): RegistrableIdentity | null {
  const erc8004 = ERC8004.exec(value);
  if (erc8004) {
    const agentId = BigInt(erc8004[1]!);
    return agentId <= UINT256_MAX ? { kind: 'erc8004', identifier: `erc8004:${ERC8004_CHAIN}:${agentId}`, agentId } : null;
  }
  if (EVM_ADDRESS.test(value)) {
    const address = value.toLowerCase() as `0x${string}`;
    return { kind: 'evm', identifier: address, address };
  }
  const key = value.startsWith('solana:') ? value.slice('solana:'.length) : value;
  if (isSolanaPublicKey(key)) return { kind: 'solana', identifier: `solana:${key}`, publicKey: key };
  return null;
}

/** The canonical spelling of a registrable identifier, or null when it is not one. */
export function canonicalIdentifier(value: string): string | null {
  return parseRegistrableIdentifier(value)?.identifier ?? null;
}

/** Base58 of exactly 32 bytes, in its one canonical spelling. */
export function isSolanaPublicKey(value: string): boolean {
  if (!BASE58.test(value)) return false;
  try {
    const bytes = getBase58Encoder().encode(value);
    return bytes.length === 32 && getBase58Decoder().decode(bytes) === value;
  } catch {
    return false;
  }
}
