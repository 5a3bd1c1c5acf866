import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauthCodes, oauthRefreshTokens } from '../../src/features/oauth/tables.js';
import { canonicalMessage } from '../../src/features/agents/identity-proof.js';
import { TreasuryService } from '../../src/features/treasury/service.js';
import { agentProofHeaders, erc8004Agent, type AgentSigner } from '../support/agents.js';
import { NO_RATE_LIMITS, startTestApp, type TestApp } from '../support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../support/http.js';
import { railA, type PayingFetch } from '../support/pay.js';
import { reportFigure } from './figures.js';
import { attackerKey, b64url, decodePart, hs256, jws, keyFromFile, publicKeySecrets, signingInput, withHeader, withPayload, type Claims, type SigningKey } from './support/auth-jwt.js';
import { OAuthFlow, pkce, REDIRECT, s256, type TokenSet } from './support/auth-oauth.js';

/**
 * Issue 12, auth attacks: three corpora of named attacks, each sent to real routes of one app
 * (embedded chains, in process; payments by a real rail A client over loopback), each asserted
 * refused with the status its route defines, never 2xx or 5xx:
 *   a) JWTs: identity-provider bearers on internal routes and OAuth access tokens on /api/mcp;
 *   b) OAuth PKCE, code and refresh-token abuse, and hostile client registrations;
 *   c) agent identity proofs (X-Agent-*) replayed, re-encoded, stale or forged on POST /api/mpp/agent/pay
 *      (every route that checks the proof is paid; this one needs nothing else).
 * Each corpus starts with controls (the genuine credential is accepted) so a refusal means something.
 */

let t: TestApp;
let server: LoopbackServer;
let flow: OAuthFlow;
const now = () => Math.floor(Date.now() / 1000);
type Json = Record<string, unknown>;

beforeAll(async () => {
  t = await startTestApp(NO_RATE_LIMITS, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  flow = new OAuthFlow(t, await t.token(`oauth-${randomUUID()}`, 'consent@auth.example'));
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** Tallies named attacks; a failure (not refused, or threw) names the attack and what came back. */
class Corpus {
  readonly names: string[] = [];
  readonly failures: string[] = [];

  async run(name: string, attack: () => Promise<{ refused: boolean; detail: string }>): Promise<void> {
    this.names.push(name);
    const outcome = await attack().catch((error: unknown) => ({ refused: false, detail: `threw ${String(error)}` }));
    if (!outcome.refused) this.failures.push(`${name}: ${outcome.detail}`);
  }

  get refused(): number {
    return this.names.length - this.failures.length;
  }
}

async function describeResponse(response: Response): Promise<string> {
  return `${response.status} ${(await response.text()).slice(0, 200)}`;
}

// ---------------------------------------------------------------------------------------------
// a) JWT attack set

describe('a) JWT attacks on internal routes and /api/mcp', () => {
  const MCP_BODY = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } };

  /** An internal route answers 401 UNAUTHENTICATED with a Bearer challenge, on both routes probed. */
  async function internal(authorization: string | undefined, employerId: string): Promise<{ refused: boolean; detail: string }> {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    const details: string[] = [];
    let refused = true;
    for (const route of ['/api/session', `/api/employers/${employerId}/team`]) {
      const response = await t.request('GET', route, { headers });
      const body = (await response.json()) as { code?: string };
      const ok = response.status === 401 && body.code === 'UNAUTHENTICATED' && /^Bearer /.test(response.headers.get('www-authenticate') ?? '');
      refused &&= ok;
      details.push(`${route} -> ${response.status} ${body.code}`);
    }
    return { refused, detail: details.join('; ') };
  }

  /** /api/mcp answers 401 with the RFC 6750 challenge naming the resource metadata. */
  async function mcp(authorization: string | undefined): Promise<{ refused: boolean; detail: string }> {
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (authorization !== undefined) headers.authorization = authorization;
    const response = await t.request('POST', '/api/mcp', { headers, body: MCP_BODY });
    const refused = response.status === 401 && /^Bearer .*resource_metadata=/.test(response.headers.get('www-authenticate') ?? '');
    return { refused, detail: await describeResponse(response) };
  }

  /** Two Authorization headers on one request, sent raw over a socket (a fetch client would merge them). */
  function twoAuthorizationHeaders(method: string, route: string, values: [string, string], body = ''): Promise<number> {
    const { port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let received = '';
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('error', reject);
      socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
      socket.end(
        `${method} ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${values[0]}\r\nAuthorization: ${values[1]}\r\n` +
          'Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  }

  it('refuses every forged, stale, misdirected or malformed token', async ({ task }) => {
    // The victim: a user with an employer. Forged tokens claim to be this user.
    const victim = `victim-${randomUUID()}`;
    const victimToken = await t.token(victim, 'victim@auth.example');
    const created = await t.request('POST', '/api/employers', { token: victimToken, body: { name: 'Victim Co' } });
    expect(created.status).toBe(201);
    const employerId = ((await created.json()) as { id: string }).id;
    const { tokens } = await flow.grant();
    const access = tokens.access_token;

    // Controls: the genuine tokens open their routes.
    expect((await t.request('GET', '/api/session', { token: victimToken })).status).toBe(200);
    expect((await t.request('GET', `/api/employers/${employerId}/team`, { token: victimToken })).status).toBe(200);
    const genuineMcp = await t.request('POST', '/api/mcp', { token: access, headers: { accept: 'application/json, text/event-stream' }, body: MCP_BODY });
    expect(genuineMcp.status, await genuineMcp.clone().text()).toBe(200);

    const idp = keyFromFile(path.join(t.dataDir, 'dev-idp-key.json'));
    const oauthKey = keyFromFile(path.join(t.dataDir, 'oauth-signing-key.json'));
    const attacker = attackerKey(idp.kid);
    const issuer = t.config.idp.issuer;
    const audience = t.config.idp.audience;
    const mcpAudience = `${t.config.publicBaseUrl}/api/mcp`;
    const idClaims = (extra: Claims = {}): Claims => ({ sub: victim, iss: issuer, aud: audience, iat: now(), exp: now() + 600, email: 'victim@auth.example', email_verified: true, ...extra });
    const atClaims = (extra: Claims = {}): Claims => ({
      sub: victim,
      iss: t.config.publicBaseUrl,
      aud: mcpAudience,
      iat: now(),
      exp: now() + 600,
      client_id: 'forged-client',
      scope: 'mcp:tools',
      jti: randomUUID(),
      ...extra,
    });
    const without = (claims: Claims, name: string): Claims => Object.fromEntries(Object.entries(claims).filter(([key]) => key !== name));
    const idpSecrets = publicKeySecrets(idp.publicJwk);
    const oauthSecrets = publicKeySecrets(oauthKey.publicJwk);
    const genuine = await t.token(victim, 'victim@auth.example');
    const other = { ...attackerKey(), kid: undefined };
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaJwk = rsa.publicKey.export({ format: 'jwk' });
    const rs256 = (header: Claims, payload: Claims) => {
      const input = signingInput({ alg: 'RS256', ...header }, payload);
      return `${input}.${b64url(sign('sha256', Buffer.from(input), rsa.privateKey))}`;
    };
    const ed = generateKeyPairSync('ed25519');
    const eddsa = (header: Claims, payload: Claims) => {
      const input = signingInput({ alg: 'EdDSA', ...header }, payload);
      return `${input}.${b64url(sign(null, Buffer.from(input), ed.privateKey))}`;
    };

    // Shared by both audiences: [name, token maker] for the identity provider's and the access token's worlds.
    type Maker = () => string;
    const shapes = (key: SigningKey, claims: (extra?: Claims) => Claims, secrets: ReturnType<typeof publicKeySecrets>, typ: Claims, valid: string): [string, Maker][] => [
      ['alg none, no signature', () => `${signingInput({ alg: 'none', ...typ }, claims())}.`],
      ['alg none with a genuine signature kept', () => withHeader(valid, { alg: 'none', ...typ })],
      ['alg "nOnE"', () => `${signingInput({ alg: 'nOnE', ...typ }, claims())}.`],
      ['HS256 keyed with the public key PEM', () => hs256({ kid: key.kid, ...typ }, claims(), secrets.pem)],
      ['HS256 keyed with the public key DER', () => hs256({ kid: key.kid, ...typ }, claims(), secrets.der)],
      ['HS256 keyed with the public JWK JSON', () => hs256({ kid: key.kid, ...typ }, claims(), secrets.jwk)],
      ['RS256 by an attacker key, its JWK embedded', () => rs256({ kid: key.kid, jwk: rsaJwk, ...typ }, claims())],
      ['EdDSA by an attacker key', () => eddsa({ kid: key.kid, ...typ }, claims())],
      ['unknown kid', () => jws({ kid: 'attacker-1', ...typ }, claims(), attacker)],
      ['kid as a path traversal', () => jws({ kid: '../../../../../dev/null', ...typ }, claims(), attacker)],
      ['kid as a URL', () => jws({ kid: 'https://attacker.example/jwks.json#k1', ...typ }, claims(), attacker)],
      ['kid with SQL', () => jws({ kid: "' OR '1'='1", ...typ }, claims(), attacker)],
      ['embedded jwk header (attacker key, genuine kid)', () => jws({ kid: key.kid, jwk: attacker.publicJwk, ...typ }, claims(), attacker)],
      ['jku header to an attacker JWKS', () => jws({ kid: key.kid, jku: 'https://attacker.example/jwks.json', ...typ }, claims(), attacker)],
      ['x5u header to an attacker certificate', () => jws({ kid: key.kid, x5u: 'https://attacker.example/cert.pem', ...typ }, claims(), attacker)],
      ['expired (genuine key)', () => jws(typ, claims({ iat: now() - 7200, exp: now() - 60 }), key)],
      ['nbf in the future (genuine key)', () => jws(typ, claims({ nbf: now() + 600 }), key)],
      ['iat in the future (genuine key)', () => jws(typ, claims({ iat: now() + 3600, exp: now() + 7200 }), key)],
      ['exp as a string (genuine key)', () => jws(typ, claims({ exp: String(now() + 600) }), key)],
      ['wrong iss (genuine key)', () => jws(typ, claims({ iss: 'https://attacker.example' }), key)],
      ['wrong aud (genuine key)', () => jws(typ, claims({ aud: 'https://attacker.example/api' }), key)],
      ['no aud (genuine key)', () => jws(typ, without(claims(), 'aud'), key)],
      ['no sub (genuine key)', () => jws(typ, without(claims(), 'sub'), key)],
      ['empty sub (genuine key)', () => jws(typ, claims({ sub: '' }), key)],
      ['sub not a string (genuine key)', () => jws(typ, claims({ sub: 42 }), key)],
      ['no exp (genuine key)', () => jws(typ, without(claims(), 'exp'), key)],
      ['payload tampered, original signature', () => withPayload(valid, { ...decodePart(valid, 1), sub: `admin-${victim}` })],
      ['header alg changed to ES384, original signature', () => withHeader(valid, { ...decodePart(valid, 0), alg: 'ES384' })],
      ['signature by another ES256 key, genuine kid', () => jws(typ, claims(), attacker)],
      ['signature by another ES256 key, no kid', () => jws(typ, claims(), other)],
      ['crit header with an unknown extension (genuine key)', () => jws({ crit: ['urn:attacker:ext'], 'urn:attacker:ext': true, ...typ }, claims(), key)],
      ['ES256 signature in DER, not raw (genuine key)', () => jws(typ, claims(), key, { der: true })],
      ['signature truncated', () => valid.slice(0, -12)],
      ['signature segment empty', () => `${valid.split('.').slice(0, 2).join('.')}.`],
      ['two segments', () => valid.split('.').slice(0, 2).join('.')],
      ['four segments', () => `${valid}.${valid.split('.')[2]}`],
      ['JWE-shaped (five segments)', () => `${b64url(JSON.stringify({ alg: 'dir', enc: 'A256GCM' }))}..${b64url('iv')}.${b64url('ct')}.${b64url('tag')}`],
      ['base64 garbage', () => 'eyJhbGciOi.JIUzI1NiJ9eyJzdWIi.OiIxMjM0NTY3ODkwIn0'],
      ['huge token (256 KB)', () => `${signingInput({ alg: 'ES256', ...typ }, claims({ pad: 'A'.repeat(256 * 1024) }))}.${'B'.repeat(86)}`],
    ];

    const jwt = new Corpus();
    for (const [name, make] of shapes(idp, idClaims, idpSecrets, { typ: 'JWT' }, genuine)) {
      await jwt.run(`internal: ${name}`, () => internal(`Bearer ${make()}`, employerId));
    }
    for (const [name, make] of shapes(oauthKey, atClaims, oauthSecrets, { typ: 'at+jwt' }, access)) {
      await jwt.run(`/api/mcp: ${name}`, () => mcp(`Bearer ${make()}`));
    }
    // Cross-audience and token-type confusion.
    await jwt.run('internal: a genuine MCP access token', () => internal(`Bearer ${access}`, employerId));
    await jwt.run('internal: IdP claims signed with the OAuth key', () => internal(`Bearer ${jws({ typ: 'JWT' }, idClaims(), oauthKey)}`, employerId));
    await jwt.run('internal: a refresh token as bearer', () => internal(`Bearer ${tokens.refresh_token}`, employerId));
    await jwt.run('/api/mcp: a genuine identity-provider token', () => mcp(`Bearer ${genuine}`));
    await jwt.run('/api/mcp: access-token claims signed with the IdP key', () => mcp(`Bearer ${jws({ typ: 'at+jwt' }, atClaims(), idp)}`));
    await jwt.run('/api/mcp: access token typed JWT, not at+jwt (genuine key)', () => mcp(`Bearer ${jws({ typ: 'JWT' }, atClaims(), oauthKey)}`));
    await jwt.run('/api/mcp: access token without typ (genuine key)', () => mcp(`Bearer ${jws({}, atClaims(), oauthKey)}`));
    await jwt.run('/api/mcp: scope without mcp:tools (genuine key)', () => mcp(`Bearer ${jws({ typ: 'at+jwt' }, atClaims({ scope: 'profile admin' }), oauthKey)}`));
    await jwt.run('/api/mcp: no client_id (genuine key)', () => mcp(`Bearer ${jws({ typ: 'at+jwt' }, without(atClaims(), 'client_id'), oauthKey)}`));
    await jwt.run('/api/mcp: aud of the internal API (genuine key)', () => mcp(`Bearer ${jws({ typ: 'at+jwt' }, atClaims({ aud: audience }), oauthKey)}`));
    await jwt.run('/api/mcp: a refresh token as bearer', () => mcp(`Bearer ${tokens.refresh_token}`));
    // The header itself.
    for (const [name, value] of [
      ['lowercase "bearer" with junk', `bearer ${'x'.repeat(40)}`],
      ['"Bearer" with nothing', 'Bearer '],
      ['Basic credentials', `Basic ${b64url(`${victim}:password`)}`],
      ['the genuine token followed by junk', `Bearer ${genuine} junk`],
      ['no Authorization header', undefined],
    ] as [string, string | undefined][]) {
      await jwt.run(`internal: ${name}`, () => internal(value, employerId));
      await jwt.run(`/api/mcp: ${name}`, () => mcp(value?.replace(genuine, access)));
    }
    // Two Authorization headers, a forged one and a genuine one, in either order, over a real socket.
    const forgedId = jws({ typ: 'JWT' }, idClaims(), attacker);
    const forgedAt = jws({ typ: 'at+jwt' }, atClaims(), attacker);
    for (const [name, pair] of [
      ['genuine then forged', [`Bearer ${genuine}`, `Bearer ${forgedId}`]],
      ['forged then genuine', [`Bearer ${forgedId}`, `Bearer ${genuine}`]],
    ] as [string, [string, string]][]) {
      await jwt.run(`internal: two Authorization headers, ${name}`, async () => {
        const status = await twoAuthorizationHeaders('GET', '/api/session', pair);
        return { refused: status === 401, detail: `${status}` };
      });
      const mcpPair = pair.map((value) => value.replace(genuine, access).replace(forgedId, forgedAt)) as [string, string];
      await jwt.run(`/api/mcp: two Authorization headers, ${name}`, async () => {
        const status = await twoAuthorizationHeaders('POST', '/api/mcp', mcpPair, JSON.stringify(MCP_BODY));
        return { refused: status === 401, detail: `${status}` };
      });
    }

    const onInternal = jwt.names.filter((n) => n.startsWith('internal')).length;
    reportFigure(task, {
      check: 'auth',
      summary: `JWT: ${jwt.refused} of ${jwt.names.length} forged or misdirected tokens refused with 401 (${onInternal} identity-provider bearers, each on GET /api/session and an employer route; ${jwt.names.length - onInternal} on /api/mcp); genuine tokens accepted`,
    });
    expect(jwt.failures, 'JWT attacks not refused').toEqual([]);
    // Nothing was created for a forged subject.
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM users WHERE id LIKE $1', [`admin-${victim}%`]);
    expect(rows[0].n).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// b) OAuth PKCE, code and refresh-token abuse

describe('b) OAuth PKCE and refresh abuse', () => {
  /** A token-endpoint refusal: exactly this status and RFC 6749 error. */
  async function tokenError(response: Response, status: number, error: string): Promise<{ refused: boolean; detail: string }> {
    const body = (await response.json()) as { error?: string };
    return { refused: response.status === status && body.error === error, detail: `${response.status} ${JSON.stringify(body)}` };
  }

  const familyRevoked = async (refreshToken: string) => {
    const [row] = await t.database.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, s256(refreshToken)));
    const family = await t.database.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.familyId, row!.familyId));
    return family.every((token) => token.revokedAt !== null);
  };

  /** An authorization request the server must not turn into a code: a 302 with `error` (never `code`) from the endpoint and from the consent decision. */
  async function noCode(params: Record<string, string>, error: string): Promise<{ refused: boolean; detail: string }> {
    const before = (await t.database.pool.query('SELECT count(*)::int AS n FROM oauth_codes')).rows[0].n as number;
    const page = await flow.authorize(params);
    const location = new URL(page.headers.get('location') ?? 'about:blank');
    const decision = await flow.decide(params);
    const redirectTo = decision.status === 200 ? new URL(((await decision.json()) as { redirect_to: string }).redirect_to) : null;
    const after = (await t.database.pool.query('SELECT count(*)::int AS n FROM oauth_codes')).rows[0].n as number;
    const refused =
      page.status === 302 &&
      location.searchParams.get('error') === error &&
      !location.searchParams.has('code') &&
      redirectTo?.searchParams.get('error') === error &&
      !redirectTo.searchParams.has('code') &&
      after === before;
    return { refused, detail: `authorize ${page.status} ${location.search}; decision ${decision.status} ${redirectTo?.search ?? ''}; codes ${before} -> ${after}` };
  }

  it('refuses PKCE downgrades, code and refresh-token replays, cross-client use and hostile registrations', async ({ task }) => {
    const oauth = new Corpus();
    const clientId = await flow.client();
    const fresh = () => pkce();
    const revokedFamilies: string[] = [];

    // Control: the honest flow works (and the grant below is used for the cross-token cases).
    const { clientId: grantClient, tokens } = await flow.grant();
    expect((await flow.refresh(grantClient, tokens.refresh_token)).status).toBe(200);

    // PKCE at the authorization endpoint.
    const { challenge } = fresh();
    await oauth.run('code_challenge_method=plain', () => noCode(flow.authorizeParams(clientId, challenge, { code_challenge_method: 'plain' }), 'invalid_request'));
    await oauth.run('plain: the verifier itself as the challenge', () => {
      const verifier = fresh().verifier;
      return noCode(flow.authorizeParams(clientId, verifier.slice(0, 43), { code_challenge_method: 'plain' }), 'invalid_request');
    });
    await oauth.run('no code_challenge', () => noCode(flow.authorizeParams(clientId, challenge, { code_challenge: undefined }), 'invalid_request'));
    await oauth.run('no code_challenge_method', () => noCode(flow.authorizeParams(clientId, challenge, { code_challenge_method: undefined }), 'invalid_request'));
    await oauth.run('code_challenge not 43 base64url characters', () => noCode(flow.authorizeParams(clientId, `${challenge}=`), 'invalid_request'));
    await oauth.run('scope escalation at authorize', () => noCode(flow.authorizeParams(clientId, challenge, { scope: 'mcp:tools admin' }), 'invalid_scope'));
    await oauth.run('another resource at authorize', () => noCode(flow.authorizeParams(clientId, challenge, { resource: 'https://attacker.example/api/mcp' }), 'invalid_target'));
    await oauth.run('unregistered redirect_uri at authorize: 400, never a redirect', async () => {
      const params = flow.authorizeParams(clientId, challenge, { redirect_uri: 'https://attacker.example/cb' });
      const page = await flow.authorize(params);
      const decision = await flow.decide(params);
      return { refused: page.status === 400 && !page.headers.has('location') && decision.status === 400, detail: `${page.status} / ${decision.status}` };
    });

    // PKCE at the token endpoint: one code, many bad verifiers, then the right one still works once.
    const pair = fresh();
    const code = await flow.code(clientId, pair.challenge);
    await oauth.run('no code_verifier', async () => tokenError(await flow.token({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT }), 400, 'invalid_request'));
    await oauth.run('wrong code_verifier', async () => tokenError(await flow.exchange(clientId, code, fresh().verifier), 400, 'invalid_grant'));
    await oauth.run('the challenge sent as the verifier (plain downgrade)', async () => tokenError(await flow.exchange(clientId, code, pair.challenge), 400, 'invalid_grant'));
    await oauth.run('verifier of 42 characters', async () => tokenError(await flow.exchange(clientId, code, pair.verifier.slice(0, 42)), 400, 'invalid_request'));
    await oauth.run('verifier of 129 characters', async () => tokenError(await flow.exchange(clientId, code, `${pair.verifier}${'a'.repeat(129 - pair.verifier.length)}`), 400, 'invalid_request'));
    await oauth.run('verifier with characters outside [A-Za-z0-9-._~]', async () => tokenError(await flow.exchange(clientId, code, `${pair.verifier.slice(0, 42)}+/=`), 400, 'invalid_request'));
    await oauth.run('verifier padded with whitespace', async () => tokenError(await flow.exchange(clientId, code, ` ${pair.verifier} `), 400, 'invalid_request'));
    const otherClient = await flow.client();
    await oauth.run('code used by another client_id', async () => tokenError(await flow.exchange(otherClient, code, pair.verifier), 400, 'invalid_grant'));
    await oauth.run('code with an unregistered client_id', async () => tokenError(await flow.exchange(randomUUID(), code, pair.verifier), 401, 'invalid_client'));
    await oauth.run('redirect_uri other than the authorization request', async () => tokenError(await flow.exchange(clientId, code, pair.verifier, { redirect_uri: 'http://127.0.0.1:33418/other' }), 400, 'invalid_grant'));
    await oauth.run('resource other than the MCP endpoint', async () => tokenError(await flow.exchange(clientId, code, pair.verifier, { resource: 'https://attacker.example/api/mcp' }), 400, 'invalid_target'));
    // None of those used the code up.
    const first = await flow.exchange(clientId, code, pair.verifier);
    expect(first.status, await first.clone().text()).toBe(200);
    const firstTokens = (await first.json()) as TokenSet;
    await oauth.run('code reuse (revokes what the first exchange issued)', async () => {
      const outcome = await tokenError(await flow.exchange(clientId, code, pair.verifier), 400, 'invalid_grant');
      const revoked = await familyRevoked(firstTokens.refresh_token);
      const stillRefreshes = (await flow.refresh(clientId, firstTokens.refresh_token)).status;
      if (revoked && stillRefreshes === 400) revokedFamilies.push('code reuse');
      return { refused: outcome.refused && revoked && stillRefreshes === 400, detail: `${outcome.detail}; family revoked ${revoked}; refresh after ${stillRefreshes}` };
    });
    await oauth.run('expired code', async () => {
      const { verifier, challenge: c } = fresh();
      const stale = await flow.code(clientId, c);
      await t.database.db.update(oauthCodes).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(oauthCodes.codeHash, s256(stale)));
      return tokenError(await flow.exchange(clientId, stale, verifier), 400, 'invalid_grant');
    });
    await oauth.run('10 concurrent exchanges of one code: one wins, and the losers revoke its tokens', async () => {
      const { verifier, challenge: c } = fresh();
      const raced = await flow.code(clientId, c);
      const responses = await Promise.all(Array.from({ length: 10 }, () => flow.exchange(clientId, raced, verifier)));
      const statuses = responses.map((r) => r.status);
      const winner = responses.find((r) => r.status === 200);
      const revoked = winner ? await familyRevoked(((await winner.json()) as TokenSet).refresh_token) : false;
      return { refused: statuses.filter((s) => s === 200).length === 1 && statuses.filter((s) => s === 400).length === 9 && revoked, detail: `${statuses.join(',')}; family revoked ${revoked}` };
    });
    await oauth.run('a refresh token as the code', async () => tokenError(await flow.exchange(grantClient, tokens.refresh_token, pair.verifier), 400, 'invalid_grant'));

    // Refresh tokens.
    const rotation = await flow.grant();
    const rotated = await flow.refresh(rotation.clientId, rotation.tokens.refresh_token);
    expect(rotated.status).toBe(200);
    const newest = (await rotated.json()) as TokenSet;
    await oauth.run('refresh by another client', async () => tokenError(await flow.refresh(otherClient, newest.refresh_token), 400, 'invalid_grant'));
    await oauth.run('refresh with a wider scope', async () => tokenError(await flow.refresh(rotation.clientId, newest.refresh_token, { scope: 'mcp:tools admin' }), 400, 'invalid_scope'));
    await oauth.run('refresh for another resource', async () => tokenError(await flow.refresh(rotation.clientId, newest.refresh_token, { resource: 'https://attacker.example/api/mcp' }), 400, 'invalid_target'));
    await oauth.run('an access token as the refresh token', async () => tokenError(await flow.refresh(rotation.clientId, newest.access_token), 400, 'invalid_grant'));
    await oauth.run('an unknown refresh token', async () => tokenError(await flow.refresh(rotation.clientId, pkce().verifier), 400, 'invalid_grant'));
    await oauth.run('expired refresh token', async () => {
      const grant = await flow.grant();
      await t.database.db.update(oauthRefreshTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(oauthRefreshTokens.tokenHash, s256(grant.tokens.refresh_token)));
      return tokenError(await flow.refresh(grant.clientId, grant.tokens.refresh_token), 400, 'invalid_grant');
    });
    // Still usable after all that (none of the refusals above consumed it), then the replay of the rotated one.
    await oauth.run('refresh token reuse after rotation (revokes the family)', async () => {
      const outcome = await tokenError(await flow.refresh(rotation.clientId, rotation.tokens.refresh_token), 400, 'invalid_grant');
      const revoked = await familyRevoked(newest.refresh_token);
      const newestAfter = (await flow.refresh(rotation.clientId, newest.refresh_token)).status;
      if (revoked && newestAfter === 400) revokedFamilies.push('refresh reuse');
      return { refused: outcome.refused && revoked && newestAfter === 400, detail: `${outcome.detail}; family revoked ${revoked}; newest token then ${newestAfter}` };
    });
    await oauth.run('10 concurrent refreshes of one token: one wins, then the family is revoked', async () => {
      const grant = await flow.grant();
      const responses = await Promise.all(Array.from({ length: 10 }, () => flow.refresh(grant.clientId, grant.tokens.refresh_token)));
      const statuses = responses.map((r) => r.status);
      const revoked = await familyRevoked(grant.tokens.refresh_token);
      return { refused: statuses.filter((s) => s === 200).length === 1 && statuses.filter((s) => s === 400).length === 9 && revoked, detail: `${statuses.join(',')}; family revoked ${revoked}` };
    });

    // Hostile client registrations (RFC 7591 answers 400 invalid_redirect_uri).
    for (const uri of [
      'http://attacker.example/cb',
      'http://127.0.0.1.attacker.example/cb',
      'http://localhost.attacker.example/cb',
      'http://[::ffff:127.0.0.1]/cb',
      'javascript:alert(document.cookie)',
      'data:text/html,<script>alert(1)</script>',
      'file:///etc/passwd',
      'myapp://callback',
      'https://client.example/cb#fragment',
      'https://user:pass@client.example/cb',
      'https://client.example/cb\nLocation: https://attacker.example',
      '/relative/cb',
      '',
    ]) {
      await oauth.run(`registration with redirect_uri ${JSON.stringify(uri.slice(0, 40))}`, async () => {
        const response = await flow.register(['https://client.example/ok', uri]);
        return tokenError(response, 400, 'invalid_redirect_uri');
      });
    }

    reportFigure(task, {
      check: 'auth',
      summary: `OAuth PKCE/refresh: ${oauth.refused} of ${oauth.names.length} abuses refused (${revokedFamilies.join(' and ')} revoked their token families; 10 concurrent code exchanges and 10 concurrent refreshes -> 1 winner each)`,
    });
    expect(oauth.failures, 'OAuth abuses not refused').toEqual([]);
    expect(revokedFamilies).toEqual(['code reuse', 'refresh reuse']);
  });
});

// ---------------------------------------------------------------------------------------------
// c) Agent identity proofs

describe('c) agent identity proof replay and forgery on POST /api/mpp/agent/pay', () => {
  const PAY = '/api/mpp/agent/pay';
  let pay: PayingFetch;
  let owner: string;
  let employerId: string;

  type Agent = { identifier: string; signer: AgentSigner; id: string };

  async function authorize(employer: { token: string; id: string }, identifier = `agent-${randomUUID()}`, signer?: AgentSigner): Promise<Agent> {
    const response = await t.request('POST', `/api/employers/${employer.id}/agents/authorizations`, {
      token: employer.token,
      body: { label: 'Reliability bot', agent_identifier: identifier, per_tx_cap_usd: '5', per_day_cap_usd: '100', velocity_per_minute: 600 },
    });
    expect(response.status, await response.clone().text()).toBe(201);
    const created = (await response.json()) as { id: string; agent_identifier: string; hmac_secret: string | null };
    return { identifier: created.agent_identifier, signer: signer ?? { hmac: created.hmac_secret! }, id: created.id };
  }

  async function newEmployer(name: string): Promise<{ token: string; id: string }> {
    const token = await t.token(`proof-${randomUUID()}`, `${randomUUID().slice(0, 8)}@proof.example`);
    const id = ((await (await t.request('POST', '/api/employers', { token, body: { name } })).json()) as { id: string }).id;
    const treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
    await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '50' } });
    await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), 50_000_000n);
    return { token, id };
  }

  const payBody = (employer = employerId) =>
    JSON.stringify({ employer_id: employer, recipient_wallet: privateKeyToAccount(generatePrivateKey()).address, amount: '0.01', reference: `ref-${randomUUID()}` });

  /** A correctly signed request (body and headers) for `agent`, sent later as is or altered. */
  async function signed(agent: Agent, options: { body?: string; timestamp?: number; path?: string; method?: string } = {}) {
    const body = options.body ?? payBody();
    const headers = await agentProofHeaders(agent.identifier, agent.signer, {
      method: options.method ?? 'POST',
      path: options.path ?? PAY,
      body,
      ...(options.timestamp !== undefined && { timestamp: options.timestamp }),
    });
    return { body, headers };
  }

  const send = (request: { body: string; headers: Record<string, string> }, route = PAY) => pay(route, { method: 'POST', body: request.body, headers: request.headers });

  /** Refused with this status and code (the fee is kept: a refusal after payment is charged, as the spec says). */
  async function refusedWith(response: Response, status: number, code: string): Promise<{ refused: boolean; detail: string }> {
    const body = (await response.json()) as { code?: string };
    return { refused: response.status === status && body.code === code, detail: `${response.status} ${JSON.stringify(body)}` };
  }

  beforeAll(async () => {
    const employer = await newEmployer('Proof Co');
    owner = employer.token;
    employerId = employer.id;
    pay = (await railA(t, server.url, '20')).pay;
  });

  it('refuses replays (also re-encoded), stale, forged and misdirected proofs; 20 concurrent replays -> 1 accepted', async ({ task }) => {
    const employer = { token: owner, id: employerId };
    const hmacAgent = await authorize(employer);
    const otherHmac = await authorize(employer);
    const edKey = generateKeyPairSync('ed25519');
    const edIdentity = getBase58Decoder().decode(Buffer.from(edKey.publicKey.export({ format: 'jwk' }).x!, 'base64url'));
    const edAgent = await authorize(employer, `solana:${edIdentity}`, { ed25519: edKey.privateKey });
    const { owner: evmOwner, agentId } = await erc8004Agent(t);
    const evmAgent = await authorize(employer, `erc8004:tempo:${agentId}`, { evm: evmOwner });
    const proofs = new Corpus();
    const schemes: string[] = [];

    // Controls: each scheme's genuine proof is accepted (and becomes the request replayed below).
    const originals = new Map<string, { body: string; headers: Record<string, string> }>();
    for (const [scheme, agent] of [['hmac', hmacAgent], ['ed25519', edAgent], ['erc8004 (EVM)', evmAgent]] as [string, Agent][]) {
      const request = await signed(agent);
      const response = await send(request);
      expect(response.status, `${scheme} control: ${await response.clone().text()}`).toBe(200);
      originals.set(scheme, request);
      schemes.push(scheme);
    }
    const withSignature = (request: { body: string; headers: Record<string, string> }, signature: string) => ({ body: request.body, headers: { ...request.headers, 'X-Agent-Signature': signature } });

    // Replays of accepted requests, as sent and re-encoded (the same signature bytes, spelled differently).
    for (const scheme of schemes) {
      await proofs.run(`${scheme}: exact replay`, async () => refusedWith(await send(originals.get(scheme)!), 401, 'PROOF_REPLAYED'));
    }
    const hmacOriginal = originals.get('hmac')!;
    const hmacSignature = hmacOriginal.headers['X-Agent-Signature']!;
    await proofs.run('hmac: replay with the 0x prefix dropped', async () => refusedWith(await send(withSignature(hmacOriginal, hmacSignature.slice(2))), 401, 'PROOF_REPLAYED'));
    await proofs.run('hmac: replay in upper case', async () => refusedWith(await send(withSignature(hmacOriginal, `0x${hmacSignature.slice(2).toUpperCase()}`)), 401, 'PROOF_REPLAYED'));
    const edOriginal = originals.get('ed25519')!;
    const edBytes = Buffer.from(edOriginal.headers['X-Agent-Signature']!.slice(2), 'hex');
    await proofs.run('ed25519: replay re-encoded from hex to base58', async () => refusedWith(await send(withSignature(edOriginal, getBase58Decoder().decode(edBytes))), 401, 'PROOF_REPLAYED'));
    // Without 0x the scheme reads base58, so bare hex is not even a signature.
    await proofs.run('ed25519: replay as bare hex', async () => refusedWith(await send(withSignature(edOriginal, edBytes.toString('hex'))), 401, 'PROOF_INVALID'));
    const evmOriginal = originals.get('erc8004 (EVM)')!;
    const evmSignature = evmOriginal.headers['X-Agent-Signature']!;
    const v = parseInt(evmSignature.slice(130), 16);
    await proofs.run('erc8004: replay with v as a y-parity bit (27/28 -> 0/1)', async () =>
      refusedWith(await send(withSignature(evmOriginal, `${evmSignature.slice(0, 130)}${(v - 27).toString(16).padStart(2, '0')}`)), 401, 'PROOF_REPLAYED'),
    );
    await proofs.run('erc8004: replay with the malleated (high-s) twin signature', async () => {
      const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      const s = BigInt(`0x${evmSignature.slice(66, 130)}`);
      const twin = `${evmSignature.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`;
      return refusedWith(await send(withSignature(evmOriginal, twin)), 401, 'PROOF_REPLAYED');
    });

    // Stale and future timestamps, each correctly signed.
    await proofs.run('hmac: timestamp 301 s in the past', async () => refusedWith(await send(await signed(hmacAgent, { timestamp: now() - 301 })), 401, 'PROOF_STALE'));
    // 30 s past the 300 s window: the paid call (402, payment, retry) may take seconds to reach the check.
    await proofs.run('hmac: timestamp 330 s in the future', async () => refusedWith(await send(await signed(hmacAgent, { timestamp: now() + 330 })), 401, 'PROOF_STALE'));
    await proofs.run('ed25519: timestamp an hour old', async () => refusedWith(await send(await signed(edAgent, { timestamp: now() - 3600 })), 401, 'PROOF_STALE'));
    // A signature over another request.
    const sentBody = payBody();
    await proofs.run('hmac: signed for another body', async () => {
      const request = await signed(hmacAgent, { body: payBody() });
      return refusedWith(await send({ body: sentBody, headers: request.headers }), 401, 'PROOF_INVALID');
    });
    await proofs.run('hmac: signed for another path', async () => {
      const request = await signed(hmacAgent, { path: '/api/mpp/escrow/post' });
      return refusedWith(await send(request), 401, 'PROOF_INVALID');
    });
    await proofs.run('hmac: signed for another method', async () => refusedWith(await send(await signed(hmacAgent, { method: 'PUT' })), 401, 'PROOF_INVALID'));
    await proofs.run('hmac: signed without the query it was sent with', async () => refusedWith(await send(await signed(hmacAgent), `${PAY}?retry=1`), 401, 'PROOF_INVALID'));
    await proofs.run('hmac: signed with a query it was sent without', async () => refusedWith(await send(await signed(hmacAgent, { path: `${PAY}?retry=1` })), 401, 'PROOF_INVALID'));
    // Signatures by someone else.
    await proofs.run("hmac: signed with another agent's HMAC secret", async () => refusedWith(await send(await signed({ ...hmacAgent, signer: otherHmac.signer })), 401, 'PROOF_INVALID'));
    await proofs.run("hmac: another agent's identifier with this agent's signature", async () => {
      const request = await signed(hmacAgent);
      return refusedWith(await send({ body: request.body, headers: { ...request.headers, 'X-Agent-Identifier': otherHmac.identifier } }), 401, 'PROOF_INVALID');
    });
    await proofs.run('ed25519: signed by another Ed25519 key', async () => refusedWith(await send(await signed({ ...edAgent, signer: { ed25519: generateKeyPairSync('ed25519').privateKey } })), 401, 'PROOF_INVALID'));
    await proofs.run('ed25519: signed with the HMAC scheme by a guessed secret', async () => refusedWith(await send(await signed({ ...edAgent, signer: { hmac: edIdentity } })), 401, 'PROOF_INVALID'));
    await proofs.run('erc8004: signed by a key that does not own the agent', async () => refusedWith(await send(await signed({ ...evmAgent, signer: { evm: privateKeyToAccount(generatePrivateKey()) } })), 401, 'PROOF_INVALID'));
    await proofs.run('erc8004: an Ed25519 signature where EIP-191 is expected', async () => {
      const request = await signed(evmAgent);
      const message = canonicalMessage({ identifier: evmAgent.identifier, method: 'POST', pathWithQuery: PAY, timestamp: Number(request.headers['X-Agent-Timestamp']), body: Buffer.from(request.body) });
      const signature = `0x${sign(null, Buffer.from(message), edKey.privateKey).toString('hex')}`;
      return refusedWith(await send(withSignature(request, signature)), 401, 'PROOF_INVALID');
    });
    // Malformed headers.
    const fresh = await signed(hmacAgent);
    const freshSignature = fresh.headers['X-Agent-Signature']!;
    await proofs.run('hmac: signature truncated by one byte', async () => refusedWith(await send(withSignature(fresh, freshSignature.slice(0, -2))), 401, 'PROOF_INVALID'));
    await proofs.run('hmac: signature with one extra byte', async () => refusedWith(await send(withSignature(fresh, `${freshSignature}00`)), 401, 'PROOF_INVALID'));
    await proofs.run('hmac: signature in base64', async () => refusedWith(await send(withSignature(fresh, Buffer.from(freshSignature.slice(2), 'hex').toString('base64'))), 401, 'PROOF_INVALID'));
    await proofs.run('hmac: empty signature', async () => refusedWith(await send(withSignature(fresh, '')), 401, 'PROOF_MISSING'));
    await proofs.run('hmac: no timestamp', async () => {
      const { 'X-Agent-Timestamp': _dropped, ...headers } = fresh.headers;
      return refusedWith(await send({ body: fresh.body, headers }), 401, 'PROOF_MISSING');
    });
    await proofs.run('hmac: timestamp in milliseconds', async () => refusedWith(await send({ body: fresh.body, headers: { ...fresh.headers, 'X-Agent-Timestamp': String(Date.now()) } }), 401, 'PROOF_INVALID'));
    await proofs.run('hmac: timestamp not an integer', async () => refusedWith(await send({ body: fresh.body, headers: { ...fresh.headers, 'X-Agent-Timestamp': `${now()}.0` } }), 401, 'PROOF_INVALID'));
    // The genuine request the malformed ones were cut from is still good: none of them consumed it.
    expect((await send(fresh)).status).toBe(200);

    // Paused and revoked agents, with a correct proof.
    const pausedEmployer = await newEmployer('Paused Proof Co');
    const paused = await authorize(pausedEmployer);
    expect((await t.request('POST', `/api/employers/${pausedEmployer.id}/agents/pause-all`, { token: pausedEmployer.token, body: { reason: 'incident' } })).status).toBe(200);
    await proofs.run('hmac: a paused agent', async () => refusedWith(await send(await signed(paused, { body: payBody(pausedEmployer.id) })), 403, 'AGENT_PAUSED'));
    const revoked = await authorize(employer);
    expect((await t.request('DELETE', `/api/employers/${employerId}/agents/authorizations/${revoked.id}`, { token: owner })).status).toBe(200);
    await proofs.run('hmac: a revoked agent', async () => refusedWith(await send(await signed(revoked)), 403, 'AGENT_NOT_AUTHORIZED'));

    // 20 concurrent copies of one signed request, each with its own payment: exactly one is served.
    const copies = await signed(hmacAgent);
    const responses = await Promise.all(Array.from({ length: 20 }, () => send(copies)));
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Json[];
    const accepted = responses.filter((r) => r.status === 200).length;
    const replayed = bodies.filter((b, i) => responses[i]!.status === 401 && b.code === 'PROOF_REPLAYED').length;
    expect({ accepted, replayed }, JSON.stringify(responses.map((r, i) => `${r.status} ${String(bodies[i]!.code)}`))).toEqual({ accepted: 1, replayed: 19 });

    reportFigure(task, {
      check: 'auth',
      summary: `identity proof: ${proofs.refused} of ${proofs.names.length} replayed, re-encoded, stale, forged or misdirected proofs refused (schemes: ${schemes.join(', ')}); 20 concurrent replays -> ${accepted} accepted, ${replayed} PROOF_REPLAYED`,
    });
    expect(proofs.failures, 'identity-proof attacks not refused').toEqual([]);
  });
});
