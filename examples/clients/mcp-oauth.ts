/**
 * The MCP server at /api/mcp with the official MCP TypeScript SDK and OAuth 2.1: discovery from the
 * 401, dynamic client registration, PKCE, consent, token; then list the tools and call a free one.
 *
 *   BASE_URL=http://localhost:3000 npx tsx mcp-oauth.ts
 *
 * Consent is where a person normally clicks "Allow" on the service's consent page. This script does
 * what that page does, without a browser: it signs in as a user (local mode: POST /api/dev/token;
 * live: an identity-provider token) and posts the decision to /api/oauth/authorize/decision, then
 * reads the authorization code from the redirect it is given. The server's PUBLIC_BASE_URL must be
 * the address used here: the discovered OAuth endpoints are built from it. Exits 0 only when the
 * free tool answered without error (its paid tools: mcp-paid-tool.ts). PRINT_ACCESS_TOKEN=1 also prints
 * the access token, for the MCP Inspector's bearer header. Runs in CI (run-all.sh).
 */
import { generateKeyPairSigner } from '@solana/kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const print = (line: string) => process.stdout.write(`${line}\n`);
const MCP_URL = new URL(`${BASE_URL}/api/mcp`);

/** The user who consents: local mode signs any user id in through the development identity provider. */
async function userBearer(): Promise<string> {
  const response = await fetch(`${BASE_URL}/api/dev/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sub: 'mcp-example-user', email: 'mcp-example-user@example.com' }),
  });
  if (!response.ok) throw new Error(`/api/dev/token: ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

/** Keeps the registration, PKCE verifier and tokens in memory, and consents without a browser. */
class HeadlessConsent implements OAuthClientProvider {
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  code: string | undefined;

  get redirectUrl() {
    return 'http://127.0.0.1:9/callback'; // never opened: the code is read from the decision's redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'client example',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
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
  /** A browser would show the consent page here; the signed-in user approves. */
  async redirectToAuthorization(url: URL) {
    const response = await fetch(`${BASE_URL}/api/oauth/authorize/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await userBearer()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...Object.fromEntries(url.searchParams), approve: true }),
    });
    if (!response.ok) throw new Error(`consent: ${response.status} ${await response.text()}`);
    const { redirect_to } = (await response.json()) as { redirect_to: string };
    this.code = new URL(redirect_to).searchParams.get('code') ?? undefined;
  }
}

// 1. The first connection has no token: the SDK discovers, registers, and asks for consent (above).
const provider = new HeadlessConsent();
const first = new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider });
try {
  await new Client({ name: 'client-example', version: '1.0.0' }).connect(first);
} catch (error) {
  if (!(error instanceof UnauthorizedError) || !provider.code) throw error;
}
// 2. The code for tokens (access token for `mcp:tools`, and a refresh token the SDK rotates).
await first.finishAuth(provider.code!);
print(`OAuth token: ${JSON.stringify({ scope: provider.tokens()?.scope, expires_in: provider.tokens()?.expires_in })}`);
// For the MCP Inspector's bearer header (docs/clients.md): a local, hour-long token, printed only when asked.
if (process.env.PRINT_ACCESS_TOKEN) print(`access token: ${provider.tokens()!.access_token}`);

// 3. Connected: the tools, with their prices in _meta, and one free call.
const client = new Client({ name: 'client-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider }));
const { tools } = await client.listTools();
const priced = tools.map((tool) => `${tool.name} (${tool._meta?.price === '0.000000' ? 'free' : `$${String(tool._meta?.price)}`})`);
print(`${tools.length} tools: ${priced.join(', ')}`);
const wallet = (await generateKeyPairSigner()).address;
const result = (await client.callTool({ name: 'svc_reputation_get', arguments: { address: wallet } })) as CallToolResult;
print(`svc_reputation_get: ${JSON.stringify(result.structuredContent ?? result.content)}`);
await client.close();
if (result.isError || tools.length === 0) process.exit(1);
