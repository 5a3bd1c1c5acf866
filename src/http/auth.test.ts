import { createHmac } from 'node:crypto';
import { exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A token signed by the real development key, with claims and header adjustable per case. */
async function signed(options: { claims?: Record<string, unknown>; iss?: string; aud?: string; exp?: number; nbf?: number } = {}) {
  const privateJwk = JSON.parse((await import('node:fs')).readFileSync(`${t.dataDir}/dev-idp-key.json`, 'utf8'));
  const key = await importJWK(privateJwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...options.claims })
    .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid })
    .setSubject('attacker-target')
    .setIssuer(options.iss ?? t.config.idp.issuer)
    .setAudience(options.aud ?? t.config.idp.audience)
    .setIssuedAt(now)
    .setExpirationTime(options.exp ?? now + 600);
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(key);
}

async function callWith(authorization: string | undefined) {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  return t.request('POST', '/api/employers', { headers, body: { name: 'Probe' } });
}

describe('identity tokens on internal routes', () => {
  it('accepts a valid token from the identity provider', async () => {
    const res = await callWith(`Bearer ${await signed()}`);
    expect(res.status).toBe(201);
  });

  const attacks: [string, () => Promise<string | undefined>][] = [
    ['no Authorization header', async () => undefined],
    ['a non-Bearer scheme', async () => `Basic ${b64url('a:b')}`],
    ['garbage instead of a JWT', async () => 'Bearer not.a.jwt'],
    [
      'a tampered payload (bad signature)',
      async () => {
        const [header, , signature] = (await signed()).split('.');
        const payload = b64url(JSON.stringify({ sub: 'someone-else', iss: t.config.idp.issuer, aud: t.config.idp.audience, exp: 9e9 }));
        return `Bearer ${header}.${payload}.${signature}`;
      },
    ],
    [
      'alg: none',
      async () => {
        const header = b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }));
        const payload = b64url(
          JSON.stringify({ sub: 'admin', iss: t.config.idp.issuer, aud: t.config.idp.audience, exp: Math.floor(Date.now() / 1000) + 600 }),
        );
        return `Bearer ${header}.${payload}.`;
      },
    ],
    [
      'HS256 signed with the public key as the secret',
      async () => {
        const publicJwk = t.idp.publicJwk;
        const pem = await exportSPKI((await importJWK({ ...publicJwk }, 'ES256')) as CryptoKey);
        const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: publicJwk.kid }));
        const payload = b64url(
          JSON.stringify({ sub: 'admin', iss: t.config.idp.issuer, aud: t.config.idp.audience, exp: Math.floor(Date.now() / 1000) + 600 }),
        );
        const sig = createHmac('sha256', pem).update(`${header}.${payload}`).digest('base64url');
        return `Bearer ${header}.${payload}.${sig}`;
      },
    ],
    [
      'a key the provider never published',
      async () => {
        const { privateKey } = await generateKeyPair('ES256');
        const token = await new SignJWT({})
          .setProtectedHeader({ alg: 'ES256', kid: t.idp.publicJwk.kid ?? 'dev' })
          .setSubject('admin')
          .setIssuer(t.config.idp.issuer)
          .setAudience(t.config.idp.audience)
          .setExpirationTime('10m')
          .sign(privateKey);
        return `Bearer ${token}`;
      },
    ],
    ['the wrong issuer', async () => `Bearer ${await signed({ iss: 'https://evil.example' })}`],
    ['the wrong audience', async () => `Bearer ${await signed({ aud: 'another-api' })}`],
    ['an expired token', async () => `Bearer ${await signed({ exp: Math.floor(Date.now() / 1000) - 60 })}`],
    ['a token not yet valid', async () => `Bearer ${await signed({ nbf: Math.floor(Date.now() / 1000) + 600 })}`],
    [
      'a token without exp',
      async () => {
        const privateJwk = JSON.parse((await import('node:fs')).readFileSync(`${t.dataDir}/dev-idp-key.json`, 'utf8'));
        const token = await new SignJWT({})
          .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid })
          .setSubject('admin')
          .setIssuer(t.config.idp.issuer)
          .setAudience(t.config.idp.audience)
          .sign(await importJWK(privateJwk, 'ES256'));
        return `Bearer ${token}`;
      },
    ],
  ];

  for (const [name, makeAuthorization] of attacks) {
    it(`refuses ${name} with 401`, async () => {
      const res = await callWith(await makeAuthorization());
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    });
  }

  it('created nothing for any refused token', async () => {
    const { rows } = await t.database.pool.query("SELECT count(*)::int AS n FROM users WHERE id IN ('admin', 'someone-else')");
    expect(rows[0].n).toBe(0);
  });

  it('serves its public keys at /api/dev/jwks.json without the private part', async () => {
    const res = await t.request('GET', '/api/dev/jwks.json');
    const jwks = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('mints tokens at /api/dev/token that the API accepts', async () => {
    const res = await t.request('POST', '/api/dev/token', { body: { sub: 'minted', email: 'minted@example.com' } });
    expect(res.status).toBe(200);
    const { token } = (await res.json()) as { token: string };
    expect((await callWith(`Bearer ${token}`)).status).toBe(201);
  });
});

describe('platform admins', () => {
  it('are the ids in ADMIN_USER_IDS', async () => {
    const admin = await t.services.users.resolveCaller({ sub: 'demo-admin', email: null, emailVerified: false });
    const other = await t.services.users.resolveCaller({ sub: 'demo-owner', email: null, emailVerified: false });
    expect(admin.isPlatformAdmin).toBe(true);
    expect(other.isPlatformAdmin).toBe(false);
  });
});
