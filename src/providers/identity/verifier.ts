import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWK } from 'jose';

export interface IdentityClaims {
  sub: string;
  email: string | null;
  emailVerified: boolean;
}

export type IdentityVerifier = (token: string) => Promise<IdentityClaims>;

/** Seconds of clock skew allowed on `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE = 5;

/**
 * Verifies identity-provider JWTs (spec 5.3): signature against the provider's JWKS, asymmetric
 * algorithms only (so `alg: none` and HS256-signed-with-the-public-key are refused), exact issuer
 * and audience, `exp` required, `nbf` honoured, `iat` not in the future. Throws on any failure.
 */
export function createIdentityVerifier(options: {
  issuer: string;
  audience: string;
  jwks: { url: string } | { keys: JWK[] };
}): IdentityVerifier {
  const keySet = 'url' in options.jwks ? createRemoteJWKSet(new URL(options.jwks.url)) : createLocalJWKSet(options.jwks);
  return async (token) => {
    const { payload } = await jwtVerify(token, keySet, {
      issuer: options.issuer,
      audience: options.audience,
      algorithms: ['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'],
      requiredClaims: ['sub', 'exp'],
      clockTolerance: CLOCK_TOLERANCE,
    });
    // jose checks `iat` only with maxTokenAge; a token issued in the future was not issued by a sane clock.
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + CLOCK_TOLERANCE) throw new Error('token issued in the future');
    if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 255) {
      throw new Error('token subject is missing or malformed');
    }
    return {
      sub: payload.sub,
      email: typeof payload.email === 'string' ? payload.email.toLowerCase() : null,
      emailVerified: payload.email_verified === true,
    };
  };
}
