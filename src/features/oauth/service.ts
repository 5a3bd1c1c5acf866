import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Database, Db } from '../../db/client.js';
import { MCP_SCOPE, type AccessTokenClaims, type AccessTokens } from './access-tokens.js';
import type { AuthorizationParams, TokenParams } from './schema.js';
import * as store from './store.js';
import type { ClientRow } from './store.js';

/** An authorization code lives ten minutes and is good for one exchange. */
export const CODE_TTL_SECONDS = 10 * 60;
/** Spec 8.1: a refresh token lives 30 days; each use replaces it with a new one. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
export const SUPPORTED_SCOPES: readonly string[] = [MCP_SCOPE];
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export const MAX_REDIRECT_URIS = 10;
const MAX_REDIRECT_URI_LENGTH = 2000;

/** RFC 7636: the verifier is 43-128 unreserved characters; the S256 challenge is 43 base64url ones. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// eslint-disable-next-line no-control-regex
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * An OAuth protocol error (RFC 6749 5.2, RFC 7591 3.2.2): `code` is the wire `error`, the message
 * its `error_description`.
 */
export class OAuthError extends Error {
  constructor(
    readonly code: string,
    description: string,
    readonly status: 400 | 401 = 400,
    /** Set when the refusal is a security event worth a warning in the logs (a replayed code or refresh token). */
    readonly securityEvent?: 'code_reuse' | 'refresh_token_reuse',
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  body(): { error: string; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

/** A checked authorization request, ready for the consent page and the code. */
export interface AuthorizationRequest {
  client: ClientRow;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  state: string | undefined;
  resource: string | undefined;
}

export type AuthorizationCheck =
  | { ok: true; request: AuthorizationRequest }
  /** RFC 6749 4.1.2.1: the client or its redirect URI is not trusted: tell the user, never redirect. */
  | { ok: false; redirect: false; error: string; description: string; field: 'client_id' | 'redirect_uri' }
  /** Anything else goes back to the (verified) redirect URI. */
  | { ok: false; redirect: true; error: string; description: string; redirectTo: string };

/** Where the browser goes after a decision, or why the request cannot go back to the client at all. */
export type Decision = { ok: true; redirectTo: string } | Extract<AuthorizationCheck, { redirect: false }>;

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface OAuthOptions {
  /** The authorization server's issuer: the public base URL (config, never a Host header). */
  issuer: string;
  /** The protected resource: the MCP endpoint URL, the access tokens' audience. */
  resource: string;
}

/** What the OAuth service is built from. */
export interface OAuthServiceOptions extends OAuthOptions {
  database: Database;
  /** Issues and checks the access tokens /api/mcp requires. */
  accessTokens: AccessTokens;
}

type Outcome = { ok: true; tokens: TokenSet } | { ok: false; error: OAuthError };

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('base64url');
const randomToken = () => randomBytes(32).toString('base64url');
const invalidGrant = (description: string, event?: OAuthError['securityEvent']): Outcome => ({
  ok: false,
  error: new OAuthError('invalid_grant', description, 400, event),
});

/** Why a redirect URI cannot be registered, or null when it can (https, or http on loopback; no fragment). */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length === 0) return 'is empty';
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (WHITESPACE_OR_CONTROL.test(uri)) return 'contains whitespace or control characters';
  if (uri.includes('#')) return 'must not contain a fragment';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.protocol === 'https:') return url.hostname === '' ? 'must name a host' : null;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : 'must use https unless its host is a loopback address (127.0.0.1, [::1], localhost)';
  }
  return 'must use https, or http on a loopback host';
}

/** base64url(SHA-256(verifier)) == challenge, compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** Space-separated scopes; absent or blank means the default, `mcp:tools`. */
function parseScope(scope: string | undefined): string[] {
  const scopes = [...new Set((scope ?? '').split(' ').filter(Boolean))];
  return scopes.length === 0 ? [MCP_SCOPE] : scopes;
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new OAuthError('invalid_request', `${name} is required.`);
  return value;
}

/**
 * The OAuth 2.1 authorization server in front of /api/mcp (spec 4.7, 5.5): dynamic registration
 * of public clients, authorization code with PKCE (S256 only), refresh tokens that rotate on every
 * use. Codes and refresh tokens are random 32-byte strings stored only as SHA-256 hashes; every
 * state change is a compare-and-set inside a transaction.
 */
export class OAuthService {
  private readonly database: Database;
  private readonly accessTokens: AccessTokens;
  private readonly options: OAuthOptions;

  constructor({ database, accessTokens, ...options }: OAuthServiceOptions) {
    this.database = database;
    this.accessTokens = accessTokens;
    this.options = options;
  }

  get issuer(): string {
    return this.options.issuer;
  }

  get resource(): string {
    return this.options.resource;
  }

  /** RFC 9728. */
  protectedResourceMetadata() {
    return {
      resource: this.options.resource,
      authorization_servers: [this.options.issuer],
      scopes_supported: [...SUPPORTED_SCOPES],
      bearer_methods_supported: ['header'],
    };
  }

  /** RFC 8414 (with RFC 9207's `iss` flag: every redirect carries `iss`). */
  authorizationServerMetadata() {
    const base = this.options.issuer;
    return {
      issuer: base,
      authorization_endpoint: `${base}/api/oauth/authorize`,
      token_endpoint: `${base}/api/oauth/token`,
      registration_endpoint: `${base}/api/oauth/register`,
      scopes_supported: [...SUPPORTED_SCOPES],
      response_types_supported: ['code'],
      grant_types_supported: [...GRANT_TYPES],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
    };
  }

  // ---- registration (RFC 7591) ------------------------------------------------------------------

  /**
   * Registers a public client. Only the name and the redirect URIs are taken from the request;
   * grant types, response types, scope and the authentication method are fixed (RFC 7591 3.2.1
   * lets the server replace requested values) and returned as registered.
   */
  async registerClient(input: { clientName?: string | null | undefined; redirectUris: string[] }): Promise<ClientRow> {
    if (input.redirectUris.length === 0 || input.redirectUris.length > MAX_REDIRECT_URIS) {
      throw new OAuthError('invalid_redirect_uri', `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs.`);
    }
    input.redirectUris.forEach((uri, index) => {
      const problem = redirectUriProblem(uri);
      if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${index}] ${problem}.`);
    });
    const clientName = input.clientName?.trim() || null;
    if (clientName !== null && CONTROL.test(clientName)) {
      throw new OAuthError('invalid_client_metadata', 'client_name must not contain control characters.');
    }
    return store.insertClient(this.database.db, {
      clientId: randomUUID(),
      clientName,
      redirectUris: [...new Set(input.redirectUris)],
    });
  }

  // ---- authorization ----------------------------------------------------------------------------

  /**
   * Checks an authorization request. The client and its redirect URI come first: until both are
   * known good, nothing may be sent to the redirect URI (RFC 6749 4.1.2.1).
   */
  async checkAuthorization(params: AuthorizationParams): Promise<AuthorizationCheck> {
    if (!params.client_id) return { ok: false, redirect: false, error: 'invalid_request', description: 'client_id is required.', field: 'client_id' };
    const client = await store.findClient(this.database.db, params.client_id);
    if (!client) return { ok: false, redirect: false, error: 'invalid_client', description: 'client_id is not a registered client.', field: 'client_id' };
    if (!params.redirect_uri) return { ok: false, redirect: false, error: 'invalid_request', description: 'redirect_uri is required.', field: 'redirect_uri' };
    if (!client.redirectUris.includes(params.redirect_uri)) {
      return { ok: false, redirect: false, error: 'invalid_request', description: 'redirect_uri is not one of the URIs registered for this client.', field: 'redirect_uri' };
    }

    const redirectUri = params.redirect_uri;
    const fail = (error: string, description: string): AuthorizationCheck => ({
      ok: false,
      redirect: true,
      error,
      description,
      redirectTo: this.redirectUrl(redirectUri, { error, error_description: description, state: params.state }),
    });
    if (!params.response_type) return fail('invalid_request', 'response_type is required.');
    if (params.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
    if (!params.code_challenge) return fail('invalid_request', 'code_challenge is required: PKCE with S256 is mandatory.');
    if (params.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.');
    if (!CODE_CHALLENGE.test(params.code_challenge)) return fail('invalid_request', 'code_challenge must be 43 base64url characters (the S256 of the verifier).');
    const unsupported = parseScope(params.scope).filter((scope) => !SUPPORTED_SCOPES.includes(scope));
    if (unsupported.length > 0) return fail('invalid_scope', `Unsupported scope: ${unsupported.join(' ')}. The only scope is ${MCP_SCOPE}.`);
    if (params.resource !== undefined && !this.isResource(params.resource)) {
      return fail('invalid_target', `resource must be ${this.options.resource}.`);
    }
    return {
      ok: true,
      request: {
        client,
        redirectUri,
        codeChallenge: params.code_challenge,
        scope: MCP_SCOPE,
        state: params.state,
        resource: params.resource,
      },
    };
  }

  /** Where a denial sends the browser (no secret in it: the consent page links to it directly). */
  denialUrl(request: AuthorizationRequest): string {
    return this.redirectUrl(request.redirectUri, { error: 'access_denied', error_description: 'The user denied access.', state: request.state });
  }

  /**
   * The signed-in user's decision on an authorization request, re-checked from scratch. Approval
   * stores a single-use code (hashed) for ten minutes. Returns where the browser goes next.
   */
  async decide(userId: string, params: AuthorizationParams, approve: boolean): Promise<Decision> {
    const check = await this.checkAuthorization(params);
    if (!check.ok) return check.redirect ? { ok: true, redirectTo: check.redirectTo } : check;
    const { request } = check;
    if (!approve) return { ok: true, redirectTo: this.denialUrl(request) };
    const code = randomToken();
    await store.insertCode(this.database.db, {
      codeHash: sha256(code),
      clientId: request.client.clientId,
      userId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      scope: request.scope,
      resource: request.resource ?? null,
      expiresAt: new Date(this.database.clock.nowMs() + CODE_TTL_SECONDS * 1000),
    });
    return { ok: true, redirectTo: this.redirectUrl(request.redirectUri, { code, state: request.state }) };
  }

  // ---- the protected resource -------------------------------------------------------------------

  /**
   * The claims of a bearer for /api/mcp, or null: a valid signature is not enough, the token's
   * grant (its refresh-token family) must still be live. One indexed row per request, so a family
   * revoked by any instance (code or refresh-token reuse) closes its access tokens everywhere at
   * once instead of when they expire. A database failure throws (a 500, not a 401).
   */
  async authenticate(bearer: string): Promise<AccessTokenClaims | null> {
    let claims: AccessTokenClaims;
    try {
      claims = await this.accessTokens.verify(bearer);
    } catch {
      return null;
    }
    return (await store.familyIsLive(this.database.db, claims.familyId)) ? claims : null;
  }

  // ---- token endpoint ---------------------------------------------------------------------------

  /** POST /api/oauth/token; throws OAuthError for every refusal. */
  async token(params: TokenParams): Promise<TokenSet> {
    if (!params.grant_type) throw new OAuthError('invalid_request', 'grant_type is required.');
    if (params.grant_type === 'authorization_code') return this.exchangeCode(params);
    if (params.grant_type === 'refresh_token') return this.refresh(params);
    throw new OAuthError('unsupported_grant_type', `grant_type must be ${GRANT_TYPES.join(' or ')}.`);
  }

  /**
   * Authorization code -> tokens. The code's row is held for the transaction, so concurrent
   * exchanges queue; the first marks it used (compare-and-set), any later one is refused and
   * revokes the refresh-token family the first created (RFC 6749 4.1.2). A failed check (wrong
   * verifier, redirect URI, client) leaves the code usable until it expires: a guess costs the
   * legitimate client nothing, and a verifier cannot be guessed.
   */
  private async exchangeCode(params: TokenParams): Promise<TokenSet> {
    const code = required(params.code, 'code');
    const verifier = required(params.code_verifier, 'code_verifier');
    const clientId = required(params.client_id, 'client_id');
    const redirectUri = required(params.redirect_uri, 'redirect_uri');
    if (!CODE_VERIFIER.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~].');
    this.checkResource(params.resource);
    await this.requireClient(clientId);

    const outcome = await this.database.transaction(async (tx): Promise<Outcome> => {
      const row = await store.lockCode(tx.db, sha256(code));
      if (!row) return invalidGrant('The authorization code is not valid.');
      if (row.usedAt) {
        if (row.familyId) await store.revokeFamily(tx.db, row.familyId);
        return invalidGrant('The authorization code was already used; the tokens issued for it are revoked.', 'code_reuse');
      }
      if (row.clientId !== clientId) return invalidGrant('The authorization code was issued to another client.');
      if (row.expiresAt.getTime() <= this.database.clock.nowMs()) return invalidGrant('The authorization code has expired.');
      if (row.redirectUri !== redirectUri) return invalidGrant('redirect_uri does not match the authorization request.');
      if (!pkceMatches(verifier, row.codeChallenge)) return invalidGrant('code_verifier does not match the code_challenge.');
      const familyId = randomUUID();
      if (!(await store.markCodeUsed(tx.db, row.codeHash, familyId))) return invalidGrant('The authorization code was already used.', 'code_reuse');
      return { ok: true, tokens: await this.issueTokens(tx.db, { userId: row.userId, clientId, scope: row.scope, familyId, id: randomUUID() }) };
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.tokens;
  }

  /**
   * Refresh token -> a new pair. The token's row is held for the transaction; rotation is a
   * compare-and-set (`revoked_at` null -> now, `replaced_by` the new token). Presenting a token
   * that was already rotated or revoked is treated as theft: the whole family is revoked, so
   * neither the thief nor the client keeps a working refresh token (OAuth 2.1 4.3.1). Two
   * concurrent uses of one token are exactly that: one wins, the other revokes the family.
   */
  private async refresh(params: TokenParams): Promise<TokenSet> {
    const refreshToken = required(params.refresh_token, 'refresh_token');
    const clientId = required(params.client_id, 'client_id');
    this.checkResource(params.resource);
    await this.requireClient(clientId);

    const outcome = await this.database.transaction(async (tx): Promise<Outcome> => {
      const row = await store.lockRefreshToken(tx.db, sha256(refreshToken));
      if (!row) return invalidGrant('The refresh token is not valid.');
      if (row.clientId !== clientId) return invalidGrant('The refresh token was issued to another client.');
      if (row.revokedAt) {
        await store.revokeFamily(tx.db, row.familyId);
        return invalidGrant('The refresh token was already used or revoked; every token of its grant is now revoked.', 'refresh_token_reuse');
      }
      if (row.expiresAt.getTime() <= this.database.clock.nowMs()) return invalidGrant('The refresh token has expired.');
      const granted = row.scope.split(' ');
      if (params.scope !== undefined) {
        const wider = parseScope(params.scope).filter((scope) => !granted.includes(scope));
        if (wider.length > 0) return { ok: false, error: new OAuthError('invalid_scope', `The grant does not include: ${wider.join(' ')}.`) };
      }
      const id = randomUUID();
      if (!(await store.rotateRefreshToken(tx.db, row.id, id))) {
        await store.revokeFamily(tx.db, row.familyId);
        return invalidGrant('The refresh token was already used; every token of its grant is now revoked.', 'refresh_token_reuse');
      }
      return { ok: true, tokens: await this.issueTokens(tx.db, { userId: row.userId, clientId, scope: row.scope, familyId: row.familyId, id }) };
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.tokens;
  }

  /** Stores the new refresh token (hashed) and signs the access token, inside the caller's transaction. */
  private async issueTokens(
    db: Db,
    grant: { userId: string; clientId: string; scope: string; familyId: string; id: string },
  ): Promise<TokenSet> {
    const refreshToken = randomToken();
    await store.insertRefreshToken(db, {
      id: grant.id,
      tokenHash: sha256(refreshToken),
      familyId: grant.familyId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope: grant.scope,
      expiresAt: new Date(this.database.clock.nowMs() + REFRESH_TOKEN_TTL_SECONDS * 1000),
    });
    const access = await this.accessTokens.issue({ userId: grant.userId, clientId: grant.clientId, scopes: grant.scope.split(' '), familyId: grant.familyId });
    return { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, refresh_token: refreshToken, scope: grant.scope };
  }

  private async requireClient(clientId: string): Promise<ClientRow> {
    const client = await store.findClient(this.database.db, clientId);
    if (!client) throw new OAuthError('invalid_client', 'client_id is not a registered client.', 401);
    return client;
  }

  /** RFC 8707: a `resource` parameter, when sent, must name the MCP endpoint. */
  private checkResource(resource: string | undefined): void {
    if (resource !== undefined && !this.isResource(resource)) {
      throw new OAuthError('invalid_target', `resource must be ${this.options.resource}.`);
    }
  }

  private isResource(value: string): boolean {
    try {
      return new URL(value).href === new URL(this.options.resource).href;
    } catch {
      return false;
    }
  }

  /** The redirect URI with the response parameters and `iss` (RFC 9207) added to its query. */
  private redirectUrl(redirectUri: string, params: Record<string, string | undefined>): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    url.searchParams.set('iss', this.options.issuer);
    return url.href;
  }
}
