import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIdentityVerifier } from './verifier.js';

/** Claim checks jose leaves to the caller (issue 12, auth attacks): `iat` in the future. */
let privateKey: CryptoKey;
let publicJwk: JWK;
const options = { issuer: 'urn:test-idp', audience: 'api' };

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
});

const token = (iat: number) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setSubject('user-1')
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(iat)
    .setExpirationTime(Math.floor(Date.now() / 1000) + 7200)
    .sign(privateKey);

describe('createIdentityVerifier', () => {
  it('refuses a token issued in the future, beyond the 5 s clock tolerance', async () => {
    const verify = createIdentityVerifier({ ...options, jwks: { keys: [publicJwk] } });
    const now = Math.floor(Date.now() / 1000);
    await expect(verify(await token(now + 3600))).rejects.toThrow(/future/);
    await expect(verify(await token(now + 60))).rejects.toThrow(/future/);
    await expect(verify(await token(now + 3))).resolves.toMatchObject({ sub: 'user-1' });
    await expect(verify(await token(now - 60))).resolves.toMatchObject({ sub: 'user-1' });
  });
});
