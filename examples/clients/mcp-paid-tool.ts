/**
 * Calls one paid MCP tool of a local server with an off-the-shelf MCP client that pays by itself:
 * the MCP SDK's client wrapped with mppx's `McpClient.wrap` and mppx's stock `tempo` method. No
 * code of this service is imported; only @modelcontextprotocol/sdk, mppx and viem.
 *
 *   npm start                                   # in another terminal (local mode)
 *   npx tsx mcp-paid-tool.ts                    # from examples/clients; BASE_URL defaults to http://localhost:3000
 *
 * Local mode only: the bearer comes from the dev identity token (POST /api/dev/token) through the
 * OAuth flow in front of /api/mcp (register, consent, code exchange with PKCE), and a fresh payer
 * is funded from the dev faucet. Prints the tool's result and the payment receipt; exits 0 only
 * when the tool answered and a receipt came back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempo } from 'mppx/client';
import { McpClient } from 'mppx/mcp-sdk/client';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const REDIRECT_URI = 'http://127.0.0.1:33418/callback';
/** The tool to call (its name ends with this) and its arguments. */
const TOOL_SUFFIX = '_memo_decode';
const TOOL_ARGUMENTS = { memo: `0x${'ab'.repeat(32)}` };

async function post<T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const form = body instanceof URLSearchParams;
  const response = await fetch(`${BASE_URL}${path}`, {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', ...headers },
    body: form ? body.toString() : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** An MCP access token: the dev user consents to a freshly registered public client (OAuth 2.1, PKCE S256). */
async function mcpBearer(): Promise<string> {
  const { token: user } = await post<{ token: string }>('/api/dev/token', { sub: 'demo-owner' });
  const { client_id } = await post<{ client_id: string }>('/api/oauth/register', { client_name: 'mcp-paid-tool example', redirect_uris: [REDIRECT_URI] });
  const verifier = randomBytes(32).toString('base64url');
  const decision = await post<{ redirect_to: string }>(
    '/api/oauth/authorize/decision',
    {
      response_type: 'code',
      client_id,
      redirect_uri: REDIRECT_URI,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'mcp:tools',
      state: 'example',
      approve: true,
    },
    { authorization: `Bearer ${user}` },
  );
  const code = new URL(decision.redirect_to).searchParams.get('code');
  if (!code) throw new Error(`no code in ${decision.redirect_to}`);
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id, redirect_uri: REDIRECT_URI });
  return (await post<{ access_token: string }>('/api/oauth/token', form)).access_token;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  // A fresh payer on the embedded Tempo chain, with $1 from the faucet.
  const account = privateKeyToAccount(generatePrivateKey());
  await post('/api/dev/faucet', { network: 'eip155:4217', address: account.address, amount: '1' });
  const chain = createClient({ chain: tempoChain, transport: http(`${BASE_URL}/api/dev/rpc/tempo`), account });

  const client = new Client({ name: 'mcp-paid-tool-example', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE_URL}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${await mcpBearer()}` } } }));
  try {
    // From here on, a 402 is paid by mppx: it reads the challenge, pays on Tempo and retries the call.
    McpClient.wrap(client, { methods: [tempo({ account, getClient: () => chain })] });
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name.endsWith(TOOL_SUFFIX));
    if (!tool) throw new Error(`no tool named *${TOOL_SUFFIX}`);
    say(`calling ${tool.name} (${JSON.stringify(tool._meta)}) as ${account.address}`);

    const result = await client.callTool({ name: tool.name, arguments: TOOL_ARGUMENTS });
    say(`result: ${JSON.stringify(result.content)}`);
    say(`receipt: ${JSON.stringify(result.receipt)}`);
    if (result.isError || !result.receipt) throw new Error('the tool did not answer a paid result');
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
