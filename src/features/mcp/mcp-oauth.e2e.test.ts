import { generateKeyPairSync } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { getBase58Decoder } from '@solana/kit';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { x402Payloads } from '../../../test/support/pay.js';

/**
 * Spec 4.6, 4.7, 5.5 end to end with the official SDK client: discovery from the 401, dynamic
 * registration, authorize with a programmatic consent, token, tools, a paid call without and with a
 * real x402 payment, refresh rotation and the revoked family. The server's public base URL is its
 * loopback URL, so every discovered URL is reachable.
 */
let t: TestApp;
let server: LoopbackServer;
let userToken: string;

beforeAll(async () => {
  // The port must be known before the app (its public base URL), so the server starts first.
  server = await serveOnLoopback((request) => t.app.fetch(request));
  t = await startTestApp({ PUBLIC_BASE_URL: server.url }, { chains: true });
  userToken = await t.token('mcp-user', 'mcp-user@example.com');
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** An SDK OAuth client whose "user agent" consents as the signed-in user through the decision route. */
class ProgrammaticConsent implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  code: string | undefined;
  consentPageStatus = 0;

  get redirectUrl() {
    return 'http://127.0.0.1:9/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'e2e client', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() {
    return 'e2e-state';
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url: URL) {
    // The browser would show the consent page; the user approves.
    this.consentPageStatus = (await fetch(url)).status;
    const params = Object.fromEntries(url.searchParams);
    const response = await fetch(`${server.url}/api/oauth/authorize/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, approve: true }),
    });
    const { redirect_to } = (await response.json()) as { redirect_to: string };
    const redirect = new URL(redirect_to);
    expect(redirect.searchParams.get('state')).toBe('e2e-state');
    this.code = redirect.searchParams.get('code') ?? undefined;
  }
}

async function tokenRequest(form: Record<string, string>) {
  const response = await fetch(`${server.url}/api/oauth/token`, { method: 'POST', body: new URLSearchParams(form) });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe('MCP over OAuth 2.1 with the SDK client', () => {
  it('discovers, registers, consents, calls tools, pays, rotates and revokes', async () => {
    const mcpUrl = new URL(`${server.url}/api/mcp`);
    const provider = new ProgrammaticConsent();

    // 1. No token: the 401 leads the SDK through RFC 9728 / 8414 discovery, RFC 7591 registration and PKCE.
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.information?.client_id).toBeTruthy();
    expect(provider.consentPageStatus).toBe(200);
    expect(provider.code).toBeTruthy();
    await first.finishAuth(provider.code!);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'mcp:tools' });

    // 2. Connected: 19 tools with live prices; a free call.
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(19);
    expect(tools.find((tool) => tool.name === 'svc_memo_decode')!._meta).toMatchObject({ price: '0.010000', rails: ['A', 'B', 'C'] });
    const { publicKey } = generateKeyPairSync('ed25519');
    const wallet = getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
    const free = (await client.callTool({ name: 'svc_reputation_get', arguments: { address: wallet } })) as CallToolResult;
    expect(free.isError ?? false).toBe(false);
    expect(free.structuredContent).toMatchObject({ subject: { solana: wallet } });

    // 3. A paid tool without payment: the 402 challenge as the tool's error text.
    const memo = { memo: `0x${'ab'.repeat(32)}` };
    const unpaid = (await client.callTool({ name: 'svc_memo_decode', arguments: memo })) as CallToolResult;
    expect(unpaid.isError).toBe(true);
    const challenge = JSON.parse((unpaid.content[0] as { text: string }).text) as { wwwAuthenticate: string; paymentRequired: PaymentRequired };
    expect(challenge.wwwAuthenticate).toMatch(/^Payment /);

    // 4. The same call paid with a real x402 payload (rail B) in _meta.
    const pay = await x402Payloads(t, server.url, 'B');
    const paid = (await client.callTool({ name: 'svc_memo_decode', arguments: memo, _meta: { 'x402/payment': await pay(challenge.paymentRequired) } })) as CallToolResult;
    expect(paid.isError ?? false, JSON.stringify(paid.content)).toBe(false);
    expect(JSON.parse((paid.content[0] as { text: string }).text)).toMatchObject(memo);
    await client.close();

    // 5. Refresh rotation, then reuse of the old refresh token revokes the whole family.
    const clientId = provider.information!.client_id;
    const oldRefresh = provider.saved!.refresh_token!;
    const rotated = await tokenRequest({ grant_type: 'refresh_token', refresh_token: oldRefresh, client_id: clientId });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(oldRefresh);
    const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: oldRefresh, client_id: clientId });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const newest = await tokenRequest({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token!, client_id: clientId });
    expect(newest).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The family's access tokens stop at once, not when they expire.
    for (const accessToken of [provider.saved!.access_token, rotated.body.access_token!]) {
      const refused = await fetch(mcpUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(refused.status).toBe(401);
    }
  });
});
