import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';

/**
 * Local mode's identity provider: an ES256 key kept under DATA_DIR (so tokens outlive restarts),
 * its public JWKS, and token minting for `POST /api/dev/token`. Live mode never creates one.
 */
export class DevIdentityProvider {
  private constructor(
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK,
    readonly issuer: string,
    readonly audience: string,
  ) {}

  static async open(options: { dataDir: string; issuer: string; audience: string }): Promise<DevIdentityProvider> {
    const file = path.join(options.dataDir, 'dev-idp-key.json');
    let privateJwk: JWK;
    if (fs.existsSync(file)) {
      privateJwk = JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
    } else {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      privateJwk = { ...(await exportJWK(privateKey)), kid: `dev-${Date.now().toString(36)}`, alg: 'ES256' };
      fs.mkdirSync(options.dataDir, { recursive: true });
      fs.writeFileSync(file, JSON.stringify(privateJwk), { mode: 0o600 });
    }
    const { d: _private, ...publicJwk } = privateJwk;
    const key = (await importJWK(privateJwk, 'ES256')) as CryptoKey;
    return new DevIdentityProvider(key, { ...publicJwk, use: 'sig' }, options.issuer, options.audience);
  }

  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  async issue(claims: { sub: string; email?: string | undefined }, ttlSeconds = 3600): Promise<string> {
    const payload = claims.email ? { email: claims.email, email_verified: true } : {};
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: this.publicJwk.kid ?? 'dev', typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(this.privateKey);
  }
}
