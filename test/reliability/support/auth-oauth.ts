import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from '../../support/app.js';

/**
 * The OAuth 2.1 flow in front of /api/mcp, driven in process through the real routes (register,
 * the consent decision as the signed-in user, the token endpoint), for the auth attack corpus.
 */

export const REDIRECT = 'http://127.0.0.1:33418/callback';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
}

export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256(verifier) };
}

export class OAuthFlow {
  constructor(
    private readonly t: TestApp,
    /** An identity-provider token of the user who consents. */
    private readonly userToken: string,
  ) {}

  register(redirectUris: unknown[] = [REDIRECT]): Promise<Response> {
    return this.t.request('POST', '/api/oauth/register', { body: { client_name: 'reliability client', redirect_uris: redirectUris } });
  }

  async client(redirectUris: string[] = [REDIRECT]): Promise<string> {
    const response = await this.register(redirectUris);
    if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { client_id: string }).client_id;
  }

  authorizeParams(clientId: string, challenge: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
    const params: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mcp:tools',
      state: 'reliability',
      ...extra,
    };
    return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
  }

  /** GET /api/oauth/authorize as a browser would. */
  authorize(params: Record<string, string>): Promise<Response> {
    return this.t.request('GET', `/api/oauth/authorize?${new URLSearchParams(params)}`, { headers: { accept: 'text/html' } });
  }

  /** The signed-in user approves: the decision route's answer (where the browser goes next). */
  decide(params: Record<string, string>): Promise<Response> {
    return this.t.request('POST', '/api/oauth/authorize/decision', { token: this.userToken, body: { ...params, approve: true } });
  }

  /** An approved code for a valid request. */
  async code(clientId: string, challenge: string, extra: Record<string, string> = {}): Promise<string> {
    const response = await this.decide(this.authorizeParams(clientId, challenge, extra));
    const redirectTo = new URL(((await response.json()) as { redirect_to: string }).redirect_to);
    const code = redirectTo.searchParams.get('code');
    if (!code) throw new Error(`no code in ${redirectTo.href}`);
    return code;
  }

  token(form: Record<string, string>): Promise<Response> {
    return this.t.request('POST', '/api/oauth/token', { body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  exchange(clientId: string, code: string, verifier: string, extra: Record<string, string> = {}): Promise<Response> {
    return this.token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT, ...extra });
  }

  refresh(clientId: string, refreshToken: string, extra: Record<string, string> = {}): Promise<Response> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...extra });
  }

  /** A client with a fresh grant: its first token response. */
  async grant(): Promise<{ clientId: string; tokens: TokenSet }> {
    const clientId = await this.client();
    const { verifier, challenge } = pkce();
    const response = await this.exchange(clientId, await this.code(clientId, challenge), verifier);
    if (response.status !== 200) throw new Error(`exchange answered ${response.status}: ${await response.text()}`);
    return { clientId, tokens: (await response.json()) as TokenSet };
  }
}
