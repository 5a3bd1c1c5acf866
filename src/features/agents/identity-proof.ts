import { createHash, createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import { getBase58Encoder } from '@solana/kit';
import { hashMessage, isAddressEqual, type Address, type Hex } from 'viem';
import { recoverSigner } from '../../chains/evm/secp256k1.js';

/**
 * Agent identity proof (spec 5.2): `X-Agent-Identifier`, `X-Agent-Timestamp` (integer epoch
 * seconds) and `X-Agent-Signature` over one canonical message that binds the request: the
 * identifier, the method, the path with its query, the timestamp and the SHA-256 of the body
 * (docs/api.md, "Agent identity proof", with a worked example).
 */

export const PROOF_VERSION = 'agent-proof-v1';
/** A timestamp further than this from the server's clock is refused (spec 5.2: 5 minutes). */
export const PROOF_WINDOW_SECONDS = 300;

export interface ProofRequest {
  identifier: string;
  method: string;
  /** The path and query exactly as sent, e.g. `/api/mpp/agent/pay?x=1`. */
  pathWithQuery: string;
  timestamp: number;
  body: Uint8Array;
}

/** The signed text: six lines, the last the body's SHA-256 in lower-case hex (of zero bytes when there is no body). */
export function canonicalMessage(request: ProofRequest): string {
  const bodyHash = createHash('sha256').update(request.body).digest('hex');
  return [PROOF_VERSION, request.identifier, request.method.toUpperCase(), request.pathWithQuery, String(request.timestamp), bodyHash].join('\n');
}

/** How the authorization's identity proves itself. */
export type ProofScheme =
  | { kind: 'hmac'; secret: string }
  /** ERC-8004: an EIP-191 signature by the agent's current owner in the identity registry. */
  | { kind: 'erc8004'; agentId: bigint; ownerOf(agentId: bigint): Promise<Address | null> }
  /** An EVM address: an EIP-191 (`personal_sign`) signature by that address's key. */
  | { kind: 'evm'; address: Address }
  /** A Solana identity: an Ed25519 signature by the 32-byte key (base58). */
  | { kind: 'ed25519'; publicKey: string };

export type ProofFailure = 'PROOF_MISSING' | 'PROOF_STALE' | 'PROOF_INVALID' | 'PROOF_REPLAYED';
export type ProofResult = { ok: true } | { ok: false; code: ProofFailure; reason: string };

const fail = (code: ProofFailure, reason: string): ProofResult => ({ ok: false, code, reason });

/** The proof headers, read strictly: an integer timestamp and a signature, or a refusal naming what is wrong. */
export function readProofHeaders(headers: Headers): { ok: true; timestamp: number; signature: string } | { ok: false; code: ProofFailure; reason: string } {
  const timestamp = headers.get('X-Agent-Timestamp');
  const signature = headers.get('X-Agent-Signature');
  if (!timestamp || !signature) return { ok: false, code: 'PROOF_MISSING', reason: 'X-Agent-Timestamp and X-Agent-Signature are required for this agent' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, code: 'PROOF_INVALID', reason: 'X-Agent-Timestamp must be integer epoch seconds' };
  return { ok: true, timestamp: Number(timestamp), signature: signature.trim() };
}

/**
 * Checks one proof: the timestamp inside the window, then the signature for the scheme, then that
 * this signed request was never accepted before (`claimOnce` records it, answering false for a replay).
 */
export async function verifyProof(
  request: ProofRequest,
  signature: string,
  scheme: ProofScheme,
  options: { nowSeconds: number; claimOnce(signatureHash: string, expiresAt: Date): Promise<boolean> },
): Promise<ProofResult> {
  if (Math.abs(options.nowSeconds - request.timestamp) > PROOF_WINDOW_SECONDS) {
    return fail('PROOF_STALE', `X-Agent-Timestamp is more than ${PROOF_WINDOW_SECONDS} s from the server's clock`);
  }
  const message = canonicalMessage(request);
  if (!(await signatureMatches(message, signature, scheme))) return fail('PROOF_INVALID', 'X-Agent-Signature does not sign this request');
  // The claim is the signed request and the key that proved it, not the signature's spelling: the
  // same proof can be re-encoded (0x or not, hex or base58, ECDSA's v and high-s twins) and would
  // otherwise pass as new.
  const replayKey = createHash('sha256').update(`${signerOf(scheme)}\n${message}`).digest('hex');
  const expiresAt = new Date((request.timestamp + PROOF_WINDOW_SECONDS) * 1000);
  if (!(await options.claimOnce(replayKey, expiresAt))) return fail('PROOF_REPLAYED', 'this X-Agent-Signature was already used');
  return { ok: true };
}

/** Who a scheme's signature comes from (two keys may each prove one request, e.g. a linked Solana key). */
function signerOf(scheme: ProofScheme): string {
  switch (scheme.kind) {
    case 'hmac':
      return 'hmac';
    case 'erc8004':
      return `erc8004:${scheme.agentId}`;
    case 'evm':
      return `evm:${scheme.address.toLowerCase()}`;
    case 'ed25519':
      return `ed25519:${scheme.publicKey}`;
  }
}

async function signatureMatches(message: string, signature: string, scheme: ProofScheme): Promise<boolean> {
  switch (scheme.kind) {
    case 'hmac': {
      const expected = createHmac('sha256', scheme.secret).update(message).digest();
      const given = hexBytes(signature);
      return given !== null && given.length === expected.length && timingSafeEqual(given, expected);
    }
    case 'erc8004': {
      const signer = eip191Signer(message, signature);
      if (signer === null) return false;
      const owner = await scheme.ownerOf(scheme.agentId);
      return owner !== null && isAddressEqual(signer, owner);
    }
    case 'evm': {
      const signer = eip191Signer(message, signature);
      return signer !== null && isAddressEqual(signer, scheme.address);
    }
    case 'ed25519': {
      const key = base58Bytes(scheme.publicKey);
      const sig = signature.startsWith('0x') ? hexBytes(signature) : base58Bytes(signature);
      return key !== null && sig !== null && ed25519Verify(key, Buffer.from(message), sig);
    }
  }
}

/** Who signed `message` with EIP-191 `personal_sign` (`0x` + 65 bytes), or null. */
function eip191Signer(message: string, signature: string): Address | null {
  return /^0x[0-9a-fA-F]{130}$/.test(signature) ? recoverSigner(hashMessage(message), signature as Hex) : null;
}

/** Ed25519 over raw bytes: a 32-byte public key and a 64-byte signature (anything else is false). */
export function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
  return verify(null, message, key, signature);
}

/** `0x`-prefixed (or bare) hex, or null. */
function hexBytes(value: string): Buffer | null {
  const hex = value.startsWith('0x') ? value.slice(2) : value;
  return /^(?:[0-9a-fA-F]{2})+$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

function base58Bytes(value: string): Uint8Array | null {
  try {
    return new Uint8Array(getBase58Encoder().encode(value));
  } catch {
    return null;
  }
}
