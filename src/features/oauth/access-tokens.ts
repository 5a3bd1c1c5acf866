import fs from 'node:fs/promises';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { ServiceClock } from '../../clock/clock.js';

/** Spec 5.5: the MCP access token lives one hour and carries scope `mcp:tools`. */
export const ACCESS_TOKEN_SECONDS = 3600;
export const MCP_SCOPE = 'mcp:tools';
const KEY_FILE = 'oauth-signing-key.json';

export interface AccessTokenClaims {
  userId: string;
  clientId: string;
  scopes: string[];
  /** The grant (refresh-token family) the token was issued for: revoking it ends the token too. */
  familyId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The time tokens are issued and checked at: the service's clock (database.clock) in the service. */
type TokenClock = Pick<ServiceClock, 'now'>;

const realTime: TokenClock = { now: () => new Date() };

/**
 * MCP access tokens: ES256 JWTs issued by this service (`iss` = the public base URL) for one
 * audience, the MCP endpoint URL. Both come from configuration, never from a request's Host.
 * The signing key is OAUTH_SIGNING_KEY (a private JWK) or, in local mode, a key generated under the
 * data directory on first use: loading it lazily keeps building the app free of I/O.
 */
export class AccessTokens {
  private keys: Promise<{ privateKey: CryptoKey; publicKey: CryptoKey; kid: string }> | undefined;
  private readonly clock: TokenClock;

  /** `clock`: the service's clock, so a token's hour is the service's (the dev clock ages it); the real time without it. */
  constructor(
    private readonly options: { issuer: string; audience: string; configuredKey: string | undefined; dataDir: string; clock?: TokenClock | undefined },
  ) {
    this.clock = options.clock ?? realTime;
  }

  get audience(): string {
    return this.options.audience;
  }

  async issue(claims: AccessTokenClaims): Promise<{ token: string; expiresIn: number }> {
    const { privateKey, kid } = await this.loadKeys();
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    const token = await new SignJWT({ client_id: claims.clientId, scope: claims.scopes.join(' '), family_id: claims.familyId })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(this.options.issuer)
      .setAudience(this.options.audience)
      .setSubject(claims.userId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ACCESS_TOKEN_SECONDS)
      .setJti(crypto.randomUUID())
      .sign(privateKey);
    return { token, expiresIn: ACCESS_TOKEN_SECONDS };
  }

  /**
   * The token's claims; throws for a bad signature, another issuer or audience, expiry, `iat` in
   * the future, a bad subject or family, or a missing scope. Whether its family is still live is
   * the caller's question (OAuthService.authenticate): this needs no database.
   */
  async verify(token: string): Promise<AccessTokenClaims> {
    const { publicKey } = await this.loadKeys();
    const now = this.clock.now();
    const { payload } = await jwtVerify(token, publicKey, {
      currentDate: now,
      algorithms: ['ES256'],
      issuer: this.options.issuer,
      audience: this.options.audience,
      typ: 'at+jwt',
      requiredClaims: ['sub', 'exp', 'client_id', 'scope', 'family_id'],
    });
    // jose checks `iat` only with maxTokenAge; allow a few seconds of skew between instances.
    if (typeof payload.iat === 'number' && payload.iat > now.getTime() / 1000 + 5) throw new Error('the token was issued in the future');
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('the token subject is missing or malformed');
    if (typeof payload.family_id !== 'string' || !UUID.test(payload.family_id)) throw new Error('the token family is missing or malformed');
    const scopes = String(payload.scope).split(' ').filter(Boolean);
    if (!scopes.includes(MCP_SCOPE)) throw new Error(`the token lacks scope ${MCP_SCOPE}`);
    return { userId: payload.sub, clientId: String(payload.client_id), scopes, familyId: payload.family_id };
  }

  private loadKeys() {
    this.keys ??= this.readPrivateJwk().then(async (jwk) => {
      const { d: _private, ...publicJwk } = jwk;
      return {
        privateKey: (await importJWK(jwk, 'ES256')) as CryptoKey,
        publicKey: (await importJWK(publicJwk, 'ES256')) as CryptoKey,
        kid: jwk.kid ?? 'oauth',
      };
    });
    return this.keys;
  }

  private async readPrivateJwk(): Promise<JWK> {
    if (this.options.configuredKey) return JSON.parse(this.options.configuredKey) as JWK;
    const file = path.join(this.options.dataDir, KEY_FILE);
    try {
      return JSON.parse(await fs.readFile(file, 'utf8')) as JWK;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    // The key id only has to differ from an earlier key's: the real time is enough.
    const jwk: JWK = { ...(await exportJWK(privateKey)), kid: `oauth-${Date.now().toString(36)}`, alg: 'ES256' };
    await fs.mkdir(this.options.dataDir, { recursive: true });
    // `wx`: when two processes race to create it, the loser reads the winner's key.
    try {
      await fs.writeFile(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
      return jwk;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return JSON.parse(await fs.readFile(file, 'utf8')) as JWK;
    }
  }
}
