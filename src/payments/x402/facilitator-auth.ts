import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import type { FacilitatorConfig } from '@x402/core/server';
import { SignJWT } from 'jose';

/**
 * Signed-JWT auth for hosted x402 facilitators (Coinbase CDP's scheme): per request, a JWT with
 * `iss` cdp, `sub` the key id, `uris` ["METHOD host/path"], two minutes of validity, and header
 * `kid` (key id) and `nonce`, signed with the API key (ES256 from a PEM EC key, EdDSA from a
 * base64 Ed25519 key), sent as `Authorization: Bearer`.
 */

export interface FacilitatorApiKey {
  keyId: string;
  /** PEM EC private key (ES256) or base64 of 64 bytes: Ed25519 seed then public key (EdDSA). */
  keySecret: string;
}

/** What the facilitator client asks headers for, and how each is called. */
const FACILITATOR_CALLS = { verify: 'POST', settle: 'POST', supported: 'GET' } as const;
/** CDP refuses a token valid for longer; a fresh one is signed per request anyway. */
const TOKEN_SECONDS = 120;

interface SigningKey {
  alg: 'ES256' | 'EdDSA';
  key: KeyObject;
}

/**
 * The key behind an API key secret. Throws a message that never contains the secret (it ends in
 * logs and start-up errors).
 */
export function facilitatorSigningKey(keySecret: string): SigningKey {
  const secret = keySecret.trim().replace(/\\n/g, '\n');
  if (secret.startsWith('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPrivateKey(secret);
    } catch {
      throw new Error('the PEM key cannot be read');
    }
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('a PEM key must be an EC P-256 key (ES256)');
    return { alg: 'ES256', key };
  }
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(secret) ? Buffer.from(secret, 'base64') : Buffer.alloc(0);
  if (bytes.length !== 64) throw new Error('an Ed25519 key must be base64 of 64 bytes (seed and public key)');
  const x = bytes.subarray(32).toString('base64url');
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: bytes.subarray(0, 32).toString('base64url'), x }, format: 'jwk' });
  // Node derives the public key from the seed and ignores `x`: a damaged half would sign with a key nobody registered.
  if (key.export({ format: 'jwk' }).x !== x) throw new Error('the Ed25519 key\'s public half does not match its seed');
  return { alg: 'EdDSA', key };
}

/** `createAuthHeaders` for @x402/core's HTTP facilitator client: fresh tokens on every call. */
export function facilitatorAuthHeaders(facilitatorUrl: string, apiKey: FacilitatorApiKey): NonNullable<FacilitatorConfig['createAuthHeaders']> {
  const signing = facilitatorSigningKey(apiKey.keySecret);
  const url = new URL(facilitatorUrl);
  const base = `${url.host}${url.pathname.replace(/\/+$/, '')}`;
  const bearer = async (method: string, path: string) => ({ Authorization: `Bearer ${await signToken(signing, apiKey.keyId, `${method} ${base}/${path}`)}` });
  return async () => {
    const [verify, settle, supported] = await Promise.all(Object.entries(FACILITATOR_CALLS).map(([path, method]) => bearer(method, path)));
    return { verify: verify!, settle: settle!, supported: supported! };
  };
}

function signToken(signing: SigningKey, keyId: string, uri: string): Promise<string> {
  // Real time: the facilitator checks the token's nbf/iat/exp against its own clock.
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ uris: [uri] })
    .setProtectedHeader({ alg: signing.alg, kid: keyId, typ: 'JWT', nonce: randomBytes(16).toString('hex') })
    .setIssuer('cdp')
    .setSubject(keyId)
    .setNotBefore(now)
    .setIssuedAt(now)
    .setExpirationTime(now + TOKEN_SECONDS)
    .sign(signing.key);
}
