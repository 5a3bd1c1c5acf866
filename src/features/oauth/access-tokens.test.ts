import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_TOKEN_SECONDS, AccessTokens, MCP_SCOPE } from './access-tokens.js';

/**
 * Claim checks jose leaves to the caller (issue 12, auth attacks): an access token signed with the
 * service's own key but issued in the future, or whose subject is not a non-empty string.
 */
const ISSUER = 'https://payroll.example';
const AUDIENCE = `${ISSUER}/api/mcp`;
const FAMILY = randomUUID();
let dataDir: string;
let tokens: AccessTokens;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-tokens-'));
  tokens = new AccessTokens({ issuer: ISSUER, audience: AUDIENCE, configuredKey: undefined, dataDir });
  await tokens.issue({ userId: 'u', clientId: 'c', scopes: [MCP_SCOPE], familyId: FAMILY }); // creates the key file
});

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** A token signed with the service's own key, with the given claims. */
async function signed(claims: Record<string, unknown>) {
  const jwk = JSON.parse(fs.readFileSync(path.join(dataDir, 'oauth-signing-key.json'), 'utf8')) as JWK;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: 'c', scope: MCP_SCOPE, family_id: FAMILY, sub: 'user-1', iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .sign(await importJWK(jwk, 'ES256'));
}

describe('AccessTokens.verify', () => {
  it('accepts its own tokens', async () => {
    const { token } = await tokens.issue({ userId: 'user-1', clientId: 'c', scopes: [MCP_SCOPE], familyId: FAMILY });
    await expect(tokens.verify(token)).resolves.toEqual({ userId: 'user-1', clientId: 'c', scopes: [MCP_SCOPE], familyId: FAMILY });
    await expect(tokens.verify(await signed({}))).resolves.toMatchObject({ userId: 'user-1' });
  });

  it('refuses a token issued in the future, beyond 5 s', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect(tokens.verify(await signed({ iat: now + 3600, exp: now + 7200 }))).rejects.toThrow(/future/);
    await expect(tokens.verify(await signed({ iat: now + 3 }))).resolves.toMatchObject({ userId: 'user-1' });
  });

  it('refuses a token without its grant family, or with one that is not a UUID', async () => {
    await expect(tokens.verify(await signed({ family_id: undefined }))).rejects.toThrow(/family_id/);
    await expect(tokens.verify(await signed({ family_id: 'family' }))).rejects.toThrow(/family/);
    await expect(tokens.verify(await signed({ family_id: 7 }))).rejects.toThrow(/family/);
  });

  it('refuses an empty or non-string subject', async () => {
    await expect(tokens.verify(await signed({ sub: '' }))).rejects.toThrow(/subject/);
    await expect(tokens.verify(await signed({ sub: 42 }))).rejects.toThrow(/subject/);
  });
});

describe('AccessTokens on the service clock', () => {
  it('issues and checks the hour on its clock: a token stops verifying once the clock passes its lifetime', async () => {
    let offsetMs = 0;
    const clocked = new AccessTokens({ issuer: ISSUER, audience: AUDIENCE, configuredKey: undefined, dataDir, clock: { now: () => new Date(Date.now() + offsetMs) } });
    offsetMs = 86_400_000; // a token issued a day ahead of the real time is not "issued in the future" on its own clock
    const { token, expiresIn } = await clocked.issue({ userId: 'user-1', clientId: 'c', scopes: [MCP_SCOPE], familyId: FAMILY });
    expect(expiresIn).toBe(ACCESS_TOKEN_SECONDS);
    await expect(clocked.verify(token)).resolves.toMatchObject({ userId: 'user-1' });
    offsetMs += (ACCESS_TOKEN_SECONDS - 60) * 1000;
    await expect(clocked.verify(token)).resolves.toMatchObject({ userId: 'user-1' });
    offsetMs += 120_000;
    await expect(clocked.verify(token)).rejects.toThrow(/exp/);
  });
});
