import { createRequire } from 'node:module';
import { PublicKey, Secp256k1, Signature } from 'ox';
import { getAddress, hexToBytes, keccak256, numberToBytes, type Address, type ByteArray, type Hex } from 'viem';

/** The part of the `secp256k1` package's binding this module uses (libsecp256k1 through N-API). */
export interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array;
}

/**
 * libsecp256k1 from the `secp256k1` package's prebuilt binary, or null where it cannot load (another
 * platform, no binary): then the pure-JS code viem itself uses (ox, over @noble/curves) recovers.
 * The package's own fallback (elliptic) is skipped on purpose.
 */
function loadNative(): NativeSecp256k1 | null {
  try {
    return createRequire(import.meta.url)('secp256k1/bindings') as NativeSecp256k1;
  } catch {
    return null;
  }
}

/** Pure JavaScript: what viem's `recoverAddress` does, synchronously. */
function recoverPureJs(digest: Hex, signature: Hex): Address | null {
  try {
    return getAddress(Secp256k1.recoverAddress({ payload: digest, signature: Signature.fromHex(signature) }));
  } catch {
    return null;
  }
}

/**
 * Recovers the address that signed a 32-byte digest, from a 65-byte signature (r, s, v as 27/28 or
 * 0/1); null when the signature recovers no key. Used where our own code recovers signers: every
 * signed Tempo transaction (rail A, checked at verification and again at settlement) and every
 * ERC-8004 or EVM identity proof. libsecp256k1 does it about 40 times faster than pure JavaScript
 * here (BENCHMARKS.md). Like viem's, it recovers from a high-s signature too (the same signer as its
 * low-s twin).
 */
export function signerRecovery(native: NativeSecp256k1 | null): (digest: Hex, signature: Hex) => Address | null {
  if (!native) return recoverPureJs;
  return (digest, signature) => {
    const bytes = hexToBytes(signature);
    const v = bytes[64] ?? 0;
    const recid = v >= 27 ? v - 27 : v;
    // Other encodings (a 64-byte EIP-2098 signature, an unusual v) keep the pure-JS reading of them.
    if (bytes.length !== 65 || recid > 1) return recoverPureJs(digest, signature);
    try {
      const publicKey = native.ecdsaRecover(bytes.subarray(0, 64), recid, hexToBytes(digest), false);
      return getAddress(`0x${keccak256(publicKey.subarray(1)).slice(-40)}`);
    } catch {
      return null;
    }
  };
}

const native = loadNative();
/** libsecp256k1 as this process loaded it, or null (pure JavaScript recovers then). */
export const loadedSecp256k1 = (): NativeSecp256k1 | null => native;
export const recoverSigner = signerRecovery(native);

/**
 * `recover` remembering its last `capacity` answers: where one signature is checked more than once
 * (mppx checks each voucher when it validates the credential and again when it applies it), the
 * second check costs a map lookup. Recovery is a pure function, so a remembered answer is never stale.
 */
export function rememberingRecovery(recover: (digest: Hex, signature: Hex) => Address | null, capacity: number): (digest: Hex, signature: Hex) => Address | null {
  const answers = new Map<string, Address | null>();
  return (digest, signature) => {
    const key = `${digest}${signature}`.toLowerCase();
    if (answers.has(key)) return answers.get(key)!;
    const signer = recover(digest, signature);
    answers.set(key, signer);
    // A Map keeps insertion order: the first key is the oldest answer.
    if (answers.size > capacity) answers.delete(answers.keys().next().value!);
    return signer;
  };
}

/**
 * ox recovers a public key in pure JavaScript (noble), and ox recovers the sender of every Tempo
 * transaction it deserializes: mppx and viem's Tempo code do so twice or more for each channel
 * opened, milliseconds each. Our patch to ox (patches/ox+*.patch, docs/decisions.md) lets it ask
 * libsecp256k1 first. Where libsecp256k1 is not loaded this does nothing; a signature it cannot
 * recover goes to noble, which answers or throws as before.
 */
export function useNativeOxRecovery(): void {
  const ox = Secp256k1 as typeof Secp256k1 & { setPublicKeyRecovery?: unknown };
  if (typeof ox.setPublicKeyRecovery !== 'function') throw new Error('ox is not patched (patches/ox+*.patch): run npm install');
  if (native) Secp256k1.setPublicKeyRecovery(publicKeyRecovery(native));
}

/** ox's `recoverPublicKey` through libsecp256k1: null for what it does not take (the caller falls back). */
export function publicKeyRecovery(native: NativeSecp256k1): (payload: Hex | ByteArray, signature: Signature.Signature) => PublicKey.PublicKey | null {
  return (payload, signature) => {
    const digest = typeof payload === 'string' ? hexToBytes(payload) : payload;
    if (digest.length !== 32 || (signature.yParity !== 0 && signature.yParity !== 1)) return null;
    const compact = new Uint8Array(64);
    compact.set(numberToBytes(signature.r, { size: 32 }), 0);
    compact.set(numberToBytes(signature.s, { size: 32 }), 32);
    try {
      return PublicKey.from(native.ecdsaRecover(compact, signature.yParity, digest, false));
    } catch {
      return null;
    }
  };
}
