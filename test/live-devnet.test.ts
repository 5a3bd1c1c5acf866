import { Mppx, tempo } from 'mppx/client';
import { createClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveCheckError } from '../src/chains/live-checks.js';
import type { DevnetInfo } from '../src/devnet/server.js';
import { liveDevnetAvailable, startLiveDevnet, type LiveDevnetRun } from './support/live-devnet.js';
import { x402WithAssets } from './support/pay.js';

const FOREIGN_MEMO = `0x${'ab'.repeat(32)}`;

/** Issue 27's done-when: live mode with every setting pointing at a devnet passes the start-up checks and serves paid calls. */
describe.skipIf(!liveDevnetAvailable)('live mode on the devnet', () => {
  let run: LiveDevnetRun;
  let info: DevnetInfo;
  // The devnet's faucet in the shape test/support/pay.ts funds payers with (live mode has no /api/dev).
  const faucet = {
    request: (_method: string, _path: string, options: { body?: unknown } = {}) =>
      fetch(`${run.devnet.url}/faucet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(options.body) }),
  };

  beforeAll(async () => {
    run = await startLiveDevnet();
    info = (await (await fetch(run.devnet.url)).json()) as DevnetInfo;
  }, 180_000);
  afterAll(async () => run?.stop());

  it('passes the start-up checks and serves a call paid on rail A with the mppx client', async () => {
    expect(run.env.APP_MODE).toBe('live');
    const account = privateKeyToAccount(generatePrivateKey());
    const funded = await faucet.request('POST', '/faucet', { body: { network: 'eip155:4217', address: account.address, amount: '1.00' } });
    expect(funded.status).toBe(200);
    const client = createClient({ chain: tempoChain, transport: http(`${run.devnet.url}/tempo`), account });
    const service = privateKeyToAccount(run.env.EVM_SERVICE_KEY as `0x${string}`).address;
    const stablecoin = (JSON.parse(run.env.TEMPO_CONTRACTS!) as { stablecoin: Address }).stablecoin;
    const balance = (holder: Address) =>
      run.devnet.chains.tempo.connection.publicClient.readContract({ address: stablecoin, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
    const [payerBefore, serviceBefore] = [await balance(account.address), await balance(service)];
    const mppx = Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false });
    const response = await mppx.fetch(`${run.url}/api/mpp/memo/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ memo: FOREIGN_MEMO }),
    });
    const text = await response.text();
    // On failure, the service's last log lines say why (the settlement error, say).
    expect(response.status, `${text}\n${run.logs.slice(-3).join('\n')}`).toBe(200);
    expect(JSON.parse(text)).toEqual({ memo: FOREIGN_MEMO, fields: null });
    // The fee (0.01 USD) moved on the devnet's Tempo chain, from the payer to the service wallet.
    expect(await balance(account.address)).toBe(payerBefore - 10_000n);
    expect(await balance(service)).toBe(serviceBefore + 10_000n);
  }, 60_000);

  it("accepts the identity provider's tokens (IDP_JWKS_URL) and writes to the live Tempo chain", async () => {
    const unsigned = await fetch(`${run.url}/api/employers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Live Co"}' });
    expect(unsigned.status).toBe(401);
    const created = await fetch(`${run.url}/api/employers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await run.idToken('live-owner')}` },
      body: JSON.stringify({ name: 'Live Co' }),
    });
    const text = await created.text();
    expect(created.status, `${text}\n${run.logs.slice(-3).join('\n')}`).toBe(201);
    // The treasury account opens on first use: PayrollTreasury.createAccount, sent with EVM_SERVICE_KEY.
    const { id } = JSON.parse(text) as { id: string };
    const treasury = await fetch(`${run.url}/api/employers/${id}/treasury`, { headers: { authorization: `Bearer ${await run.idToken('live-owner')}` } });
    const body = await treasury.text();
    expect(treasury.status, `${body}\n${run.logs.slice(-3).join('\n')}`).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ available_usd: '0.000000' });
  }, 60_000);

  it("serves a call paid on rail B through the devnet's x402 facilitator API", async () => {
    const assets = { baseStablecoin: info.base.contracts.stablecoin!, solanaNetwork: info.solana.network, solanaMint: info.solana.mint };
    const { pay } = await x402WithAssets(faucet, assets, run.url, 'B', '1.00');
    const response = await pay('/api/mpp/memo/decode', { method: 'POST', body: { memo: FOREIGN_MEMO } });
    const text = await response.text();
    expect(response.status, text).toBe(200);
  }, 60_000);
});

describe.skipIf(!liveDevnetAvailable)('live mode start-up on wrong settings', () => {
  it('refuses with one message naming a wrong chain id and a bogus contract address', async () => {
    const bogus = '0x00000000000000000000000000000000000b0b05';
    const failure = await startLiveDevnet({
      env: (env) => {
        const contracts = JSON.parse(env.TEMPO_CONTRACTS!) as Record<string, string>;
        // TEMPO_RPC_URL at the devnet's Base (chain 8453), with an API key that must never be repeated.
        return { ...env, TEMPO_RPC_URL: `${env.BASE_RPC_URL}?apikey=SECRET_ALCHEMY_KEY`, TEMPO_CONTRACTS: JSON.stringify({ ...contracts, payrollTreasury: bogus }) };
      },
    }).then(
      async (run) => {
        await run.stop();
        return null;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LiveCheckError);
    const { message } = failure as LiveCheckError;
    expect(message).toContain('TEMPO_RPC_URL: chain id 8453, expected 4217');
    expect(message).toContain(`TEMPO_CONTRACTS.payrollTreasury ${bogus}: no contract code`);
    expect(message).not.toContain('SECRET_ALCHEMY_KEY');
    expect(message).not.toContain('127.0.0.1');
  }, 180_000);
});
