import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import type { Address } from 'viem';
import { canonicalEvmAddress, EVM_ADDRESS_PATTERN } from '../../chains/evm/address.js';

/**
 * What an agent identifier names (spec 5.2), with its one canonical spelling:
 * - an ERC-8004 agent on Tempo: `erc8004:eip155:4217:<agent_id>` (alias `erc8004:tempo:<id>`);
 * - a Solana identity: `solana:<base58 key>` (or the bare key);
 * - an EVM address (under the API's address rule; its identifier is the lower-cased address, see
 *   `normaliseIdentifier`, while `address` is its EIP-55 spelling);
 * - anything else (an agent-card URI, an opaque token): itself, proven by HMAC.
 */
export type AgentIdentity =
  | { kind: 'erc8004'; canonical: string; agentId: bigint }
  | { kind: 'solana'; canonical: string; publicKey: string }
  | { kind: 'evm'; canonical: string; address: Address }
  | { kind: 'opaque'; canonical: string };

export const ERC8004_CHAIN = 'eip155:4217';
const ERC8004 = /^erc8004:(?:eip155:4217|tempo):(\d+)$/;
const BASE58_KEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const UINT256_MAX = (1n << 256n) - 1n;

export function parseAgentIdentifier(identifier: string): AgentIdentity {
  const erc8004 = ERC8004.exec(identifier);
  const agentId = erc8004 ? parseAgentId(erc8004[1]!) : null;
  if (agentId !== null) return { kind: 'erc8004', canonical: `erc8004:${ERC8004_CHAIN}:${agentId}`, agentId };
  const address = canonicalEvmAddress(identifier);
  if (address !== null) return { kind: 'evm', canonical: address.toLowerCase(), address };
  const key = identifier.startsWith('solana:') ? identifier.slice('solana:'.length) : identifier;
  if (isSolanaKey(key)) return { kind: 'solana', canonical: `solana:${key}`, publicKey: key };
  return { kind: 'opaque', canonical: identifier };
}

/** An ERC-8004 agent id in canonical decimal ("7", not "007"), at most uint256; else null. */
export function parseAgentId(decimal: string): bigint | null {
  if (!/^(?:0|[1-9]\d{0,77})$/.test(decimal)) return null;
  const id = BigInt(decimal);
  return id <= UINT256_MAX ? id : null;
}

/** Base58 of exactly 32 bytes, in its one canonical spelling. */
export function isSolanaKey(value: string): boolean {
  if (!BASE58_KEY.test(value)) return false;
  try {
    const bytes = getBase58Encoder().encode(value);
    return bytes.length === 32 && getBase58Decoder().decode(bytes) === value;
  } catch {
    return false;
  }
}

/**
 * How authorizations store and match identifiers: exactly as the owner wrote them (no wildcards,
 * no trimming), except that an EVM address is case-insensitive and so lower-cased. The identifier
 * is a key (authorizations, escrows, the directory, proof replays and failures all store it), and
 * keys written before #33 are lower case: it stays so, while the address it names is EIP-55.
 */
export function normaliseIdentifier(identifier: string): string {
  return canonicalEvmAddress(identifier)?.toLowerCase() ?? identifier;
}

/** An identifier spelled as an EVM address that breaks the address rule (a wrong EIP-55 checksum): refused with 400. */
export function breaksEvmAddressRule(identifier: string): boolean {
  return EVM_ADDRESS_PATTERN.test(identifier) && canonicalEvmAddress(identifier) === null;
}
