import { getBase58Encoder } from '@solana/kit';

/**
 * What an agent identifier names (spec 5.2): an ERC-8004 agent (`erc8004:<chain>:<agent_id>`,
 * chain `tempo` or `eip155:4217`), a Solana identity (`solana:<base58 key>` or the bare key), an
 * EVM address, or anything else (an agent-card URI or an opaque token, proven by HMAC).
 */
export type AgentIdentity =
  | { kind: 'erc8004'; agentId: bigint }
  | { kind: 'solana'; publicKey: string }
  | { kind: 'evm'; address: string }
  | { kind: 'opaque' };

const ERC8004 = /^erc8004:(?:tempo|eip155:4217):(0|[1-9]\d{0,76})$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT256_MAX = (1n << 256n) - 1n;

export function parseAgentIdentifier(identifier: string): AgentIdentity {
  const erc8004 = ERC8004.exec(identifier);
  if (erc8004) {
    const agentId = BigInt(erc8004[1]!);
    if (agentId <= UINT256_MAX) return { kind: 'erc8004', agentId };
  }
  const key = identifier.startsWith('solana:') ? identifier.slice('solana:'.length) : identifier;
  if (isSolanaKey(key)) return { kind: 'solana', publicKey: key };
  if (EVM_ADDRESS.test(identifier)) return { kind: 'evm', address: identifier.toLowerCase() };
  return { kind: 'opaque' };
}

/** A base58 string of exactly 32 bytes. */
export function isSolanaKey(value: string): boolean {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(value)) return false;
  try {
    return getBase58Encoder().encode(value).length === 32;
  } catch {
    return false;
  }
}

/**
 * The one normalisation of identifiers: an EVM address is case-insensitive, so it is stored and
 * matched lower-cased. Everything else is compared exactly as sent (no wildcards, no trimming).
 */
export function normaliseIdentifier(identifier: string): string {
  return EVM_ADDRESS.test(identifier) ? identifier.toLowerCase() : identifier;
}
