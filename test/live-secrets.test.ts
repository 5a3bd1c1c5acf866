import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Mppx, tempo } from 'mppx/client';
import { createClient, http as viemHttp } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveDevnetAvailable, startLiveDevnet, type LiveDevnetRun } from './support/live-devnet.js';
import { freePort } from './support/service-process.js';

const token = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

/**
 * A Tempo RPC in front of the devnet's that, once told to, refuses every call and echoes the path
 * and query it was called on, as hosted RPCs do: the errors the service then meets carry the URL's key.
 */
async function switchableRpc(): Promise<{ url: string; forwardTo(target: string): void; fail(): void; close(): Promise<void> }> {
  let failing = false;
  let target = '';
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (failing) {
        response.writeHead(401, { 'content-type': 'text/plain' }).end(`unauthorized for ${request.url}`);
        return;
      }
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) }).then(
        async (answer) => response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwardTo: (url) => void (target = url),
    fail: () => void (failing = true),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Issue 27: no configured secret in any answer or log line of a live-mode run, even when its outside systems fail. */
describe.skipIf(!liveDevnetAvailable)('secrets in a live-mode run', () => {
  let run: LiveDevnetRun;
  let rpc: Awaited<ReturnType<typeof switchableRpc>>;
  const rpcKey = token('rpc-api-key');
  const bridgePathKey = token('bridge-path-key');
  const aiPathKey = token('ai-path-key');
  const ed25519 = generateKeyPairSync('ed25519');
  const ed25519Jwk = ed25519.privateKey.export({ format: 'jwk' });
  const extra: Record<string, string> = {
    STRIPE_SECRET_KEY: token('sk_test'),
    BRIDGE_API_KEY: token('bridge-api-key'),
    AI_PROVIDER: 'openai',
    AI_API_KEY: token('ai-api-key'),
    METRICS_TOKEN: token('metrics-token'),
    X402_FACILITATOR_KEY_ID: 'key-id-for-tests',
    X402_FACILITATOR_KEY_SECRET: Buffer.concat([Buffer.from(ed25519Jwk.d!, 'base64url'), Buffer.from(ed25519Jwk.x!, 'base64url')]).toString('base64'),
    DEMO_AGENT_LIVE_PRIVATE_KEY: generatePrivateKey(),
    ADMIN_USER_IDS: 'live-admin',
  };
  /** Every secret value of the run, as the test itself knows them (not as the service classifies them). */
  let secrets: string[];
  const answers: string[] = [];

  /** Calls the service and keeps the whole answer: status, headers and body. */
  const call = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(`${run.url}${path}`, init);
    const body = await response.clone().text();
    answers.push(`${init.method ?? 'GET'} ${path} -> ${response.status}\n${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${body}`);
    return response;
  };

  beforeAll(async () => {
    const closed = await freePort();
    rpc = await switchableRpc();
    run = await startLiveDevnet({
      env: (env) => ({
        ...env,
        ...extra,
        TEMPO_RPC_URL: (rpc.forwardTo(env.TEMPO_RPC_URL!), `${rpc.url}/tempo?api-key=${rpcKey}`),
        BASE_RPC_URL: `${env.BASE_RPC_URL}?api-key=${rpcKey}`,
        SOLANA_RPC_URL: `${env.SOLANA_RPC_URL}?api-key=${rpcKey}`,
        // Outside systems that are down, with their keys in the path.
        BRIDGE_BASE_URL: `http://127.0.0.1:${closed}/v1/${bridgePathKey}/`,
        AI_BASE_URL: `http://127.0.0.1:${closed}/${aiPathKey}/v1`,
      }),
    });
    secrets = [
      rpcKey,
      bridgePathKey,
      aiPathKey,
      ...Object.entries(extra).filter(([key]) => /KEY|TOKEN/.test(key) && key !== 'X402_FACILITATOR_KEY_ID').map(([, value]) => value),
      run.env.MPP_SECRET_KEY!,
      run.env.AGENT_SECRETS_KEY!,
      (JSON.parse(run.env.OAUTH_SIGNING_KEY!) as { d: string }).d,
      run.env.EVM_SERVICE_KEY!.slice(2),
      run.env.SOLANA_SERVICE_KEY!,
    ];
  }, 180_000);
  afterAll(async () => {
    await run?.stop();
    await rpc?.close();
  });

  it('answers and logs no secret while serving, probing dead systems and failing paid calls', async () => {
    const admin = { authorization: `Bearer ${await run.idToken('live-admin')}` };
    expect((await call('/healthz')).status).toBe(200);
    expect((await call('/readyz')).status).toBe(200);
    expect((await call('/metrics')).status).toBe(401);
    expect((await call('/metrics', { headers: { authorization: `Bearer ${extra.METRICS_TOKEN}` } })).status).toBe(200);
    const health = await call('/api/admin?scope=health', { headers: admin });
    expect(health.status).toBe(200);
    // The bridge and the AI provider are down: said, without their URLs.
    expect(JSON.stringify(await health.json())).toMatch(/"ok":false/);
    expect((await call('/api/admin?scope=overview', { headers: admin })).status).toBe(200);
    expect((await call('/api/openapi.json')).status).toBe(200);
    expect((await call('/api/mpp/memo/decode', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"memo":"0x00"}' })).status).toBe(402);

    const account = privateKeyToAccount(generatePrivateKey());
    await fetch(`${run.devnet.url}/faucet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'eip155:4217', address: account.address, amount: '1.00' }),
    });
    const client = createClient({ chain: tempoChain, transport: viemHttp(`${run.devnet.url}/tempo`), account });
    const mppx = Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false });
    const paid = async () => {
      const response = await mppx.fetch(`${run.url}/api/mpp/memo/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ memo: `0x${'ab'.repeat(32)}` }) });
      answers.push(`paid -> ${response.status}\n${[...response.headers].join('\n')}\n${await response.text()}`);
      return response.status;
    };
    expect(await paid()).toBe(200);
    // Now the service's Tempo RPC refuses and echoes its URL's key: the paid call fails, and says so without the key.
    rpc.fail();
    expect(await paid()).toBeGreaterThanOrEqual(400);

    for (const line of [...answers, ...run.logs]) {
      for (const secret of secrets) expect(line, `a secret in: ${line.slice(0, 300)}`).not.toContain(secret);
    }
    expect(run.logs.length).toBeGreaterThan(10);
    // Not vacuous: the refusing RPC's error, key and all, reached the log, named by its setting instead.
    expect(run.logs.some((line) => line.includes('[TEMPO_RPC_URL]'))).toBe(true);
  }, 120_000);
});
