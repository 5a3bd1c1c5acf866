import { createHash, randomBytes } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS, startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { oauthClients, oauthCodes, oauthRefreshTokens } from './tables.js';
import { AccessTokens, MCP_SCOPE } from './access-tokens.js';

/**
 * The OAuth 2.1 authorization server in front of /api/mcp (spec 4.7, 5.5, 8.1): discovery
 * documents from configuration, dynamic registration, the authorization endpoint and its consent
 * page, programmatic consent through the decision route, the token endpoint with PKCE, single-use
 * codes, rotating refresh tokens with family revocation, and the MCP SDK client's whole flow.
 */
const BASE = 'https://payroll.example';
const MCP_URL = `${BASE}/api/mcp`;
const REDIRECT = 'http://127.0.0.1:33418/callback';

let t: TestApp;
let userToken: string;
let accessTokens: AccessTokens;

type Json = Record<string, any>;
const json = async (response: Response) => (await response.json()) as Json;
const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: sha256(verifier) };
}

const register = (body: unknown, headers: Record<string, string> = {}) => t.request('POST', '/api/oauth/register', { body, headers });

async function registerClient(redirectUris = [REDIRECT], clientName = 'Test MCP client'): Promise<string> {
  const response = await register({ client_name: clientName, redirect_uris: redirectUris });
  expect(response.status).toBe(201);
  return (await json(response)).client_id as string;
}

function authorizeParams(clientId: string, challenge: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: MCP_SCOPE,
    state: 'state-123',
    ...extra,
  };
}

const authorize = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  t.request('GET', `/api/oauth/authorize?${new URLSearchParams(params)}`, { headers });

/** `token: null` sends no bearer. */
const decide = (params: Record<string, unknown>, approve: boolean, token: string | null = userToken) =>
  t.request('POST', '/api/oauth/authorize/decision', { token: token ?? undefined, body: { ...params, approve } });

const tokenRequest = (form: Record<string, string>) =>
  t.request('POST', '/api/oauth/token', {
    body: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

/** Programmatic consent: the signed-in user approves; the code comes back on the redirect. */
async function approvedCode(clientId: string, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const response = await decide(authorizeParams(clientId, challenge, extra), true);
  expect(response.status).toBe(200);
  const redirectTo = new URL((await json(response)).redirect_to as string);
  return redirectTo.searchParams.get('code')!;
}

async function exchange(clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) {
  return tokenRequest({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT, ...extra });
}

/** A client with a fresh grant: its first token response. */
async function freshGrant(): Promise<{ clientId: string; tokens: Json }> {
  const clientId = await registerClient();
  const { verifier, challenge } = pkce();
  const response = await exchange(clientId, await approvedCode(clientId, challenge), verifier);
  expect(response.status).toBe(200);
  return { clientId, tokens: await json(response) };
}

const refresh = (clientId: string, refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...extra });

async function expectOAuthError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  const body = await json(response);
  expect(body).toEqual({ error, error_description: expect.any(String) });
  return body;
}

async function refreshRow(refreshToken: string) {
  const [row] = await t.database.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, sha256(refreshToken)));
  return row!;
}

beforeAll(async () => {
  t = await startTestApp({ PUBLIC_BASE_URL: BASE, ...NO_RATE_LIMITS });
  userToken = await t.token('oauth-user', 'oauth-user@example.com');
  accessTokens = new AccessTokens({ issuer: BASE, audience: MCP_URL, configuredKey: undefined, dataDir: t.config.dataDir });
});

afterAll(async () => {
  await t?.close();
});

describe('discovery documents', () => {
  const protectedResource = {
    resource: MCP_URL,
    authorization_servers: [BASE],
    scopes_supported: ['mcp:tools'],
    bearer_methods_supported: ['header'],
  };
  const authorizationServer = {
    issuer: BASE,
    authorization_endpoint: `${BASE}/api/oauth/authorize`,
    token_endpoint: `${BASE}/api/oauth/token`,
    registration_endpoint: `${BASE}/api/oauth/register`,
    scopes_supported: ['mcp:tools'],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };

  it('serves RFC 9728 and RFC 8414 metadata built from configuration, whatever the Host', async () => {
    const server = await serveOnLoopback(t.app.fetch);
    try {
      const headers = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'http' };
      for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
        const response = await fetch(`${server.url}${path}`, { headers });
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual(protectedResource);
      }
      const response = await fetch(`${server.url}/.well-known/oauth-authorization-server`, { headers });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(authorizationServer);
    } finally {
      await server.close();
    }
    // In process too, with a request URL on another origin.
    const other = await t.app.request('http://attacker.example/.well-known/oauth-authorization-server', { headers: { host: 'attacker.example' } });
    expect(await other.json()).toEqual(authorizationServer);
  });

  it('documents every OAuth route in a still-valid OpenAPI document', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as Json;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(document.paths['/.well-known/oauth-protected-resource'].get).toBeDefined();
    expect(document.paths['/.well-known/oauth-protected-resource/api/mcp'].get).toBeDefined();
    expect(document.paths['/.well-known/oauth-authorization-server'].get).toBeDefined();
    expect(document.paths['/api/oauth/register'].post.responses['201']).toBeDefined();
    expect(Object.keys(document.paths['/api/oauth/authorize'].get.responses['200'].content)).toEqual(['text/html']);
    expect(document.paths['/api/oauth/authorize/decision'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(document.paths['/api/oauth/token'].post.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
  });
});

describe('client registration (RFC 7591)', () => {
  it('registers a public client and answers exactly the registered metadata, without a secret', async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await register({
      client_name: 'Claude',
      redirect_uris: [REDIRECT, 'https://client.example/cb?x=1', 'http://[::1]:8080/cb', 'http://localhost/cb'],
      // What the SDK also sends; the server answers with what it registered.
      grant_types: ['authorization_code', 'refresh_token', 'password'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'mcp:tools offline_access',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Claude',
      redirect_uris: [REDIRECT, 'https://client.example/cb?x=1', 'http://[::1]:8080/cb', 'http://localhost/cb'],
      scope: 'mcp:tools',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(body.client_id_issued_at).toBeGreaterThanOrEqual(before - 1);
    expect(body).not.toHaveProperty('client_secret');
    const [row] = await t.database.db.select().from(oauthClients).where(eq(oauthClients.clientId, body.client_id));
    expect(row).toMatchObject({ clientName: 'Claude', redirectUris: body.redirect_uris });
  });

  it('omits client_name when none is given', async () => {
    const body = await json(await register({ redirect_uris: [REDIRECT] }));
    expect(body).not.toHaveProperty('client_name');
    expect(body.redirect_uris).toEqual([REDIRECT]);
  });

  it.each([
    ['http on a public host', ['http://client.example/cb']],
    ['a fragment', ['https://client.example/cb#frag']],
    ['an empty fragment', ['https://client.example/cb#']],
    ['not a URL', ['not a url']],
    ['a relative path', ['/callback']],
    ['a custom scheme', ['com.example.app:/callback']],
    ['javascript:', ['javascript:alert(1)']],
    ['credentials', ['https://user:pass@client.example/cb']],
    ['an empty list', []],
    ['eleven URIs', Array.from({ length: 11 }, (_, i) => `https://client.example/cb${i}`)],
    ['a non-string', [42]],
    ['one bad URI among good ones', [REDIRECT, 'http://10.0.0.1/cb']],
  ])('refuses redirect URIs with %s (invalid_redirect_uri)', async (_case, redirectUris) => {
    const count = async () => (await t.database.db.select({ n: sql<number>`count(*)::int` }).from(oauthClients))[0]!.n;
    const before = await count();
    await expectOAuthError(await register({ client_name: 'Bad', redirect_uris: redirectUris }), 400, 'invalid_redirect_uri');
    expect(await count()).toBe(before);
  });

  it('refuses bad client metadata in the RFC 7591 shape (invalid_client_metadata)', async () => {
    await expectOAuthError(await register({ client_name: 'x'.repeat(201), redirect_uris: [REDIRECT] }), 400, 'invalid_client_metadata');
    await expectOAuthError(await register({ client_name: 'bad\u0007name', redirect_uris: [REDIRECT] }), 400, 'invalid_client_metadata');
    await expectOAuthError(await register('{"redirect_uris": ['), 400, 'invalid_client_metadata');
    await expectOAuthError(await register('redirect_uris=x', { 'content-type': 'application/x-www-form-urlencoded' }), 400, 'invalid_client_metadata');
    await expectOAuthError(await register([REDIRECT]), 400, 'invalid_client_metadata');
  });
});

describe('authorization endpoint', () => {
  let clientId: string;
  const { challenge } = pkce();
  beforeAll(async () => {
    clientId = await registerClient([REDIRECT], 'Evil <script>alert(1)</script> & Co');
  });

  it('shows a 400 and never redirects for an unknown client or an unregistered redirect URI', async () => {
    const unknown = await authorize(authorizeParams('00000000-0000-4000-8000-000000000000', challenge));
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
    expect(await json(unknown)).toMatchObject({ error: 'invalid_client' });

    for (const redirectUri of ['http://127.0.0.1:33418/callback/other', 'http://127.0.0.1:33419/callback', 'https://attacker.example/cb']) {
      const mismatch = await authorize(authorizeParams(clientId, challenge, { redirect_uri: redirectUri }));
      expect(mismatch.status).toBe(400);
      expect(mismatch.headers.get('location')).toBeNull();
      expect(await json(mismatch)).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('redirect_uri') });
    }

    const missing = await authorize({ ...authorizeParams(clientId, challenge), redirect_uri: '' });
    expect(missing.status).toBe(400);
    expect(missing.headers.get('location')).toBeNull();

    // A browser gets an HTML page that runs nothing.
    const page = await authorize(authorizeParams(clientId, challenge, { redirect_uri: 'https://attacker.example/cb' }), { accept: 'text/html' });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'none'");
    expect(page.headers.get('location')).toBeNull();
  });

  it.each([
    ['the plain method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no method', { code_challenge_method: '' }, 'invalid_request'],
    ['no challenge', { code_challenge: '' }, 'invalid_request'],
    ['a short challenge', { code_challenge: 'abc' }, 'invalid_request'],
    ['a challenge with padding', { code_challenge: `${'A'.repeat(42)}=` }, 'invalid_request'],
    ['another response type', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response type', { response_type: '' }, 'invalid_request'],
    ['an unknown scope', { scope: 'mcp:tools admin' }, 'invalid_scope'],
    ['another resource', { resource: 'https://other.example/api/mcp' }, 'invalid_target'],
  ])('redirects back with an error for %s', async (_case, extra, error) => {
    const response = await authorize(authorizeParams(clientId, challenge, extra));
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(location.searchParams)).toEqual({ error, error_description: expect.any(String), state: 'state-123', iss: BASE });
  });

  it('answers a valid request with the consent page under a strict CSP', async () => {
    const response = await authorize(authorizeParams(clientId, challenge, { resource: MCP_URL }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    // The client's name is escaped, the redirect host and the scope are shown, both buttons exist.
    expect(html).toContain('Evil &#60;script&#62;alert(1)&#60;/script&#62; &#38; Co');
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('127.0.0.1:33418');
    expect(html).toContain('mcp:tools');
    expect(html).toMatch(/<button[^>]*id="approve"[^>]*>Approve<\/button>/);
    expect(html).toMatch(/<button[^>]*id="deny"[^>]*>Deny<\/button>/);
    expect(html).toContain('id="sign_in_as"'); // local mode signs in through /api/dev/token
    expect(html).toContain('/api/dev/token');
    expect(html).toContain(`value="${challenge}"`);

    // Exactly one script and one style, each allowed by its hash, nothing else.
    const csp = response.headers.get('content-security-policy')!;
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(csp).toContain(`script-src ${hash(scripts[0]!)}`);
    expect(csp).toContain(`style-src ${hash(styles[0]!)}`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers

    // Deny links straight back to the client with access_denied.
    const denyUrl = new URL(/data-deny-url="([^"]+)"/.exec(html)![1]!.replaceAll('&#38;', '&'));
    expect(Object.fromEntries(denyUrl.searchParams)).toMatchObject({ error: 'access_denied', state: 'state-123', iss: BASE });
  });

  it('defaults a missing scope to mcp:tools', async () => {
    const { scope: _scope, ...withoutScope } = authorizeParams(clientId, challenge);
    expect((await authorize(withoutScope)).status).toBe(200);
  });
});

describe('consent decision', () => {
  let clientId: string;
  const { challenge } = pkce();
  beforeAll(async () => {
    clientId = await registerClient();
  });

  it('requires the signed-in user', async () => {
    const response = await decide(authorizeParams(clientId, challenge), true, null);
    expect(response.status).toBe(401);
    expect(await json(response)).toMatchObject({ code: 'UNAUTHENTICATED' });
    const forged = await decide(authorizeParams(clientId, challenge), true, 'not.a.jwt');
    expect(forged.status).toBe(401);
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM oauth_codes WHERE client_id = $1', [clientId]);
    expect(rows[0].n).toBe(0);
  });

  it('answers a denial with access_denied, the state and the issuer', async () => {
    const response = await decide(authorizeParams(clientId, challenge), false);
    expect(response.status).toBe(200);
    const redirectTo = new URL((await json(response)).redirect_to);
    expect(`${redirectTo.origin}${redirectTo.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(redirectTo.searchParams)).toEqual({
      error: 'access_denied',
      error_description: expect.any(String),
      state: 'state-123',
      iss: BASE,
    });
  });

  it('answers an approval with a single-use code, stored only as its hash', async () => {
    const response = await decide(authorizeParams(clientId, challenge, { resource: MCP_URL }), true);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const redirectTo = new URL((await json(response)).redirect_to);
    const code = redirectTo.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(redirectTo.searchParams.get('state')).toBe('state-123');
    expect(redirectTo.searchParams.get('iss')).toBe(BASE);

    const rows = await t.database.db.select().from(oauthCodes).where(eq(oauthCodes.clientId, clientId));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      codeHash: sha256(code),
      userId: 'oauth-user',
      redirectUri: REDIRECT,
      codeChallenge: challenge,
      scope: 'mcp:tools',
      resource: MCP_URL,
      usedAt: null,
    });
    const lifetime = rows[0]!.expiresAt.getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(9 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(10 * 60_000);
  });

  it('re-checks the request: an unknown redirect URI is a 400, a bad challenge goes back as an error', async () => {
    const mismatch = await decide(authorizeParams(clientId, challenge, { redirect_uri: 'https://attacker.example/cb' }), true);
    expect(mismatch.status).toBe(400);
    expect(await json(mismatch)).toMatchObject({ code: 'INVALID_REDIRECT_URI', field: 'redirect_uri' });
    const unknown = await decide(authorizeParams('no-such-client', challenge), true);
    expect(await json(unknown)).toMatchObject({ code: 'INVALID_CLIENT' });

    const plain = await decide(authorizeParams(clientId, challenge, { code_challenge_method: 'plain' }), true);
    expect(plain.status).toBe(200);
    const redirectTo = new URL((await json(plain)).redirect_to);
    expect(redirectTo.searchParams.get('error')).toBe('invalid_request');
    expect(redirectTo.searchParams.has('code')).toBe(false);
  });
});

describe('token endpoint: authorization code', () => {
  it('exchanges a code and its verifier for an access token for the MCP endpoint and a refresh token', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge, { resource: MCP_URL });
    const response = await exchange(clientId, code, verifier, { resource: MCP_URL });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const tokens = await json(response);
    expect(tokens).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      scope: 'mcp:tools',
    });

    const row = await refreshRow(tokens.refresh_token);
    expect(await accessTokens.verify(tokens.access_token)).toEqual({ userId: 'oauth-user', clientId, scopes: ['mcp:tools'], familyId: row.familyId });
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ iss: BASE, aud: MCP_URL, sub: 'oauth-user', client_id: clientId, scope: 'mcp:tools', family_id: row.familyId });
    expect(claims.exp! - claims.iat!).toBe(3600);

    expect(row).toMatchObject({ clientId, userId: 'oauth-user', scope: 'mcp:tools', revokedAt: null, replacedBy: null });
    const days = (row.expiresAt.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThanOrEqual(30);
    const [codeRow] = await t.database.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, sha256(code)));
    expect(codeRow!.usedAt).not.toBeNull();
    expect(codeRow!.familyId).toBe(row.familyId);
    // Only hashes at rest.
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM oauth_refresh_tokens WHERE token_hash = $1', [tokens.refresh_token]);
    expect(rows[0].n).toBe(0);
  });

  it('refuses a wrong verifier, and the code still works with the right one', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge);
    await expectOAuthError(await exchange(clientId, code, pkce().verifier), 400, 'invalid_grant');
    await expectOAuthError(await exchange(clientId, code, 'short'), 400, 'invalid_request');
    expect((await exchange(clientId, code, verifier)).status).toBe(200);
  });

  it('refuses an expired code', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge);
    await t.database.db.update(oauthCodes).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(oauthCodes.codeHash, sha256(code)));
    const body = await expectOAuthError(await exchange(clientId, code, verifier), 400, 'invalid_grant');
    expect(body.error_description).toMatch(/expired/);
  });

  it("refuses a redirect URI, client or resource other than the authorization request's", async () => {
    const clientId = await registerClient([REDIRECT, 'https://client.example/cb']);
    const otherClient = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge);
    await expectOAuthError(await exchange(clientId, code, verifier, { redirect_uri: 'https://client.example/cb' }), 400, 'invalid_grant');
    await expectOAuthError(await exchange(otherClient, code, verifier), 400, 'invalid_grant');
    await expectOAuthError(await exchange(clientId, code, verifier, { resource: 'https://other.example/api/mcp' }), 400, 'invalid_target');
    await expectOAuthError(await exchange(clientId, 'not-a-code', verifier), 400, 'invalid_grant');
    expect((await exchange(clientId, code, verifier)).status).toBe(200);
  });

  it('refuses a second use of a code and revokes what the first use issued', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge);
    const first = await exchange(clientId, code, verifier);
    expect(first.status).toBe(200);
    const { refresh_token } = await json(first);

    const body = await expectOAuthError(await exchange(clientId, code, verifier), 400, 'invalid_grant');
    expect(body.error_description).toMatch(/already used/);
    expect((await refreshRow(refresh_token)).revokedAt).not.toBeNull();
    await expectOAuthError(await refresh(clientId, refresh_token), 400, 'invalid_grant');
  });

  it('lets exactly one of two concurrent exchanges of a code win', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge);
    const responses = await Promise.all([exchange(clientId, code, verifier), exchange(clientId, code, verifier)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400]);
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM oauth_refresh_tokens WHERE client_id = $1', [clientId]);
    expect(rows[0].n).toBe(1);
  });
});

describe('token endpoint: refresh tokens', () => {
  it('rotates: a new pair, the old token refused, and that reuse revokes the newest one too', async () => {
    const { clientId, tokens } = await freshGrant();
    const first = await refresh(clientId, tokens.refresh_token, { resource: MCP_URL });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const second = await json(first);
    expect(second).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'mcp:tools' });
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect(second.access_token).not.toBe(tokens.access_token);
    expect(await accessTokens.verify(second.access_token)).toMatchObject({ userId: 'oauth-user', clientId });

    const oldRow = await refreshRow(tokens.refresh_token);
    const newRow = await refreshRow(second.refresh_token);
    expect(oldRow.revokedAt).not.toBeNull();
    expect(oldRow.replacedBy).toBe(newRow.id);
    expect(newRow).toMatchObject({ familyId: oldRow.familyId, revokedAt: null });

    // The old token again: refused, and the whole family goes.
    const reuse = await expectOAuthError(await refresh(clientId, tokens.refresh_token), 400, 'invalid_grant');
    expect(reuse.error_description).toMatch(/revoked/);
    expect((await refreshRow(second.refresh_token)).revokedAt).not.toBeNull();
    await expectOAuthError(await refresh(clientId, second.refresh_token), 400, 'invalid_grant');
  });

  it('lets exactly one of two concurrent refreshes win', async () => {
    const { clientId, tokens } = await freshGrant();
    const responses = await Promise.all([refresh(clientId, tokens.refresh_token), refresh(clientId, tokens.refresh_token)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400]);
    const loser = responses.find((r) => r.status === 400)!;
    expect(await json(loser)).toMatchObject({ error: 'invalid_grant' });
    const winner = await json(responses.find((r) => r.status === 200)!);
    // One rotation happened; the concurrent reuse then revoked the family (the winner's token included).
    const { rows } = await t.database.pool.query(
      'SELECT count(*)::int AS n FROM oauth_refresh_tokens WHERE family_id = $1',
      [(await refreshRow(tokens.refresh_token)).familyId],
    );
    expect(rows[0].n).toBe(2);
    expect((await refreshRow(tokens.refresh_token)).replacedBy).toBe((await refreshRow(winner.refresh_token)).id);
    await expectOAuthError(await refresh(clientId, winner.refresh_token), 400, 'invalid_grant');
  });

  it('refuses an expired token, another client\'s token, a wider scope and an unknown token', async () => {
    const { clientId, tokens } = await freshGrant();
    const otherClient = await registerClient();
    await expectOAuthError(await refresh(otherClient, tokens.refresh_token), 400, 'invalid_grant');
    await expectOAuthError(await refresh(clientId, tokens.refresh_token, { scope: 'mcp:tools admin' }), 400, 'invalid_scope');
    await expectOAuthError(await refresh(clientId, randomBytes(32).toString('base64url')), 400, 'invalid_grant');
    // None of those used the token up.
    expect((await refreshRow(tokens.refresh_token)).revokedAt).toBeNull();

    await t.database.db
      .update(oauthRefreshTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthRefreshTokens.tokenHash, sha256(tokens.refresh_token)));
    const body = await expectOAuthError(await refresh(clientId, tokens.refresh_token), 400, 'invalid_grant');
    expect(body.error_description).toMatch(/expired/);
  });
});

describe('token endpoint: request errors', () => {
  it('refuses an unsupported or missing grant type', async () => {
    await expectOAuthError(await tokenRequest({ grant_type: 'password', username: 'a', password: 'b' }), 400, 'unsupported_grant_type');
    await expectOAuthError(await tokenRequest({ grant_type: 'client_credentials' }), 400, 'unsupported_grant_type');
    await expectOAuthError(await tokenRequest({ code: 'x' }), 400, 'invalid_request');
  });

  it('answers an unknown client with 401 invalid_client', async () => {
    const { verifier } = pkce();
    await expectOAuthError(
      await tokenRequest({ grant_type: 'authorization_code', code: 'x', code_verifier: verifier, client_id: 'nobody', redirect_uri: REDIRECT }),
      401,
      'invalid_client',
    );
    await expectOAuthError(await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nobody' }), 401, 'invalid_client');
  });

  it('answers malformed requests in the RFC 6749 shape, not the API envelope', async () => {
    const { verifier } = pkce();
    // Missing parameters.
    await expectOAuthError(await tokenRequest({ grant_type: 'authorization_code', code_verifier: verifier, client_id: 'c', redirect_uri: REDIRECT }), 400, 'invalid_request');
    await expectOAuthError(await tokenRequest({ grant_type: 'refresh_token', client_id: 'c' }), 400, 'invalid_request');
    // JSON instead of a form.
    const asJson = await t.request('POST', '/api/oauth/token', { body: { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'c' } });
    await expectOAuthError(asJson, 400, 'invalid_request');
    // A repeated parameter.
    const repeated = await t.request('POST', '/api/oauth/token', {
      body: 'grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=c',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await expectOAuthError(repeated, 400, 'invalid_request');
  });
});

describe('a revoked grant on /api/mcp', () => {
  /** tools/list on the MCP endpoint with this access token. */
  const mcp = (accessToken: string) =>
    t.request('POST', '/api/mcp', {
      token: accessToken,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });

  async function expectRevoked(accessToken: string) {
    const refused = await mcp(accessToken);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  }

  it('refuses the access token issued for a code as soon as the code is used again', async () => {
    const bystander = await freshGrant();
    const clientId = await registerClient();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge);
    const first = await json(await exchange(clientId, code, verifier));
    expect((await mcp(first.access_token)).status).toBe(200);

    await expectOAuthError(await exchange(clientId, code, verifier), 400, 'invalid_grant');
    await expectRevoked(first.access_token);
    expect((await mcp(bystander.tokens.access_token)).status).toBe(200);
  });

  it("refuses every access token of the family as soon as a rotated refresh token is used again", async () => {
    const bystander = await freshGrant();
    const { clientId, tokens } = await freshGrant();
    const rotated = await json(await refresh(clientId, tokens.refresh_token));
    // A rotation ends nothing: the family's access tokens all still work.
    for (const access of [tokens.access_token, rotated.access_token]) expect((await mcp(access)).status).toBe(200);

    await expectOAuthError(await refresh(clientId, tokens.refresh_token), 400, 'invalid_grant');
    for (const access of [tokens.access_token, rotated.access_token]) await expectRevoked(access);
    expect((await mcp(bystander.tokens.access_token)).status).toBe(200);
  });
});

describe('access token audience', () => {
  it('is bound to the MCP endpoint: a verifier for another audience refuses it, and vice versa', async () => {
    const { tokens } = await freshGrant();
    const elsewhere = new AccessTokens({ issuer: BASE, audience: `${BASE}/api/other`, configuredKey: undefined, dataDir: t.config.dataDir });
    await expect(elsewhere.verify(tokens.access_token)).rejects.toThrow(/aud/);
    const foreign = await elsewhere.issue({ userId: 'oauth-user', clientId: 'c', scopes: [MCP_SCOPE], familyId: crypto.randomUUID() });
    await expect(accessTokens.verify(foreign.token)).rejects.toThrow(/aud/);
    // Same key, same audience, another issuer: refused too.
    const otherIssuer = new AccessTokens({ issuer: 'https://other.example', audience: MCP_URL, configuredKey: undefined, dataDir: t.config.dataDir });
    await expect(otherIssuer.verify(tokens.access_token)).rejects.toThrow(/iss/);
  });
});

describe('tenant isolation', () => {
  it("a user's MCP token opens no internal route, and nobody else's data", async () => {
    // The owner has an employer; the MCP token issued through their consent is not an identity token.
    const created = await t.request('POST', '/api/employers', { token: userToken, body: { name: 'Owner Co' } });
    expect(created.status).toBe(201);
    const employerId = (await json(created)).id as string;
    const { tokens } = await freshGrant();
    for (const path of [`/api/employers/${employerId}/team`, `/api/employers/${employerId}/notifications`]) {
      const response = await t.request('GET', path, { token: tokens.access_token as string });
      expect({ path, status: response.status }).toEqual({ path, status: 401 });
    }
    // And another user's identity token still sees nothing of the owner's.
    const stranger = await t.token(`stranger-${crypto.randomUUID()}`, 'stranger@example.com');
    expect((await t.request('GET', `/api/employers/${employerId}/team`, { token: stranger })).status).toBe(404);
    expect((await t.request('GET', `/api/employers/${employerId}/team`, { token: userToken })).status).toBe(200);
  });
});

describe('the MCP SDK client', () => {
  let sdk: TestApp;
  let server: LoopbackServer;
  beforeAll(async () => {
    // The port comes first: the app's public base URL is the loopback server's own URL.
    server = await serveOnLoopback((request) => sdk.app.fetch(request));
    sdk = await startTestApp({ PUBLIC_BASE_URL: server.url });
  });
  afterAll(async () => {
    await server?.close();
    await sdk?.close();
  });

  it('discovers, registers, authorizes with PKCE, exchanges the code and refreshes', async () => {
    const redirectUrl = 'http://127.0.0.1:45678/oauth/callback';
    const store: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; authorizationUrl?: URL } = {};
    const provider: OAuthClientProvider = {
      redirectUrl,
      clientMetadata: { client_name: 'SDK test client', redirect_uris: [redirectUrl] } as OAuthClientMetadata,
      state: () => 'sdk-state',
      clientInformation: () => store.client,
      saveClientInformation: (info) => void (store.client = info),
      tokens: () => store.tokens,
      saveTokens: (tokens) => void (store.tokens = tokens),
      redirectToAuthorization: (url) => void (store.authorizationUrl = url),
      saveCodeVerifier: (verifier) => void (store.verifier = verifier),
      codeVerifier: () => store.verifier!,
    };
    const serverUrl = `${server.url}/api/mcp`;

    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    const authorizationUrl = store.authorizationUrl!;
    expect(authorizationUrl.href.startsWith(`${server.url}/api/oauth/authorize?`)).toBe(true);
    expect(authorizationUrl.searchParams.get('resource')).toBe(serverUrl);
    expect(authorizationUrl.searchParams.get('scope')).toBe('mcp:tools');

    // The browser part: the consent page, then the user's approval.
    const page = await fetch(authorizationUrl);
    expect(page.status).toBe(200);
    const params = Object.fromEntries(authorizationUrl.searchParams);
    const decision = await fetch(`${server.url}/api/oauth/authorize/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await sdk.token('sdk-user')}` },
      body: JSON.stringify({ ...params, approve: true }),
    });
    const redirectTo = new URL(((await decision.json()) as Json).redirect_to);
    expect(redirectTo.searchParams.get('state')).toBe('sdk-state');
    expect(redirectTo.searchParams.get('iss')).toBe(server.url);

    expect(await auth(provider, { serverUrl, authorizationCode: redirectTo.searchParams.get('code')! })).toBe('AUTHORIZED');
    const sdkAccessTokens = new AccessTokens({ issuer: server.url, audience: serverUrl, configuredKey: undefined, dataDir: sdk.config.dataDir });
    expect(await sdkAccessTokens.verify(store.tokens!.access_token)).toMatchObject({ userId: 'sdk-user', scopes: ['mcp:tools'] });

    // With a refresh token stored, the next auth() refreshes (rotation) instead of redirecting.
    const before = store.tokens!;
    expect(await auth(provider, { serverUrl })).toBe('AUTHORIZED');
    expect(store.tokens!.refresh_token).not.toBe(before.refresh_token);
    expect(await sdkAccessTokens.verify(store.tokens!.access_token)).toMatchObject({ userId: 'sdk-user' });
  });
});
