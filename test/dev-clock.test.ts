import { generateKeyPairSigner } from '@solana/kit';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders, type AgentSigner } from './support/agents.js';
import { createTestDatabaseTarget, type TestDatabaseTarget } from './support/database.js';
import { railA, x402WithAssets, type PayingFetch } from './support/pay.js';
import { freePort, RemoteService, startServiceProcess, waitForHealthy } from './support/service-process.js';

/**
 * Local time travel from the outside (issue 33): the service as `npm start` runs it, used only over
 * HTTP. An escrow posted for an hour expires and is refunded on chain once the dev clock moves 2 h;
 * an announcement passes its expires_at the same way.
 */
let target: TestDatabaseTarget;
let dataDir: string;
let service: ChildProcess;
let remote: RemoteService;
let pay: PayingFetch;

type Json = Record<string, unknown>;
const json = async <T = Json>(response: Response) => (await response.json()) as T;

beforeAll(async () => {
  target = await createTestDatabaseTarget();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-clock-test-'));
  const port = await freePort();
  remote = new RemoteService(`http://127.0.0.1:${port}`);
  const started = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir, ...(target.url ? { DATABASE_URL: target.url } : {}) });
  service = started.child;
  await waitForHealthy(remote.base, 60_000).catch((error: Error) => {
    throw new Error(`${error.message}; its output:\n${started.output()}`);
  });
  pay = (await railA(remote, remote.base, '5')).pay;
}, 90_000);

afterAll(async () => {
  service?.kill('SIGKILL');
  await target?.drop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function signed(path: string, body: Json, identifier: string, signer: AgentSigner): Promise<Response> {
  const text = JSON.stringify(body);
  const proof = await agentProofHeaders(identifier, signer, { method: 'POST', path, body: text });
  return pay(path, { method: 'POST', body: text, headers: proof });
}

const advance = (seconds: number) => remote.request('POST', '/api/dev/clock/advance', { body: { seconds } });

describe('the dev clock, from the outside', () => {
  it('an escrow posted for 1 h: after a 2 h advance it is expired_refunded, the treasury has it back, and deliver is 403', async () => {
    const owner = await remote.token('demo-owner');
    const { id: employerId } = await json<{ id: string }>(await remote.request('POST', '/api/employers', { token: owner, body: { name: 'Demo' } }));
    const treasury = async () => (await json<{ available_usd: string }>(await remote.request('GET', `/api/employers/${employerId}/treasury`, { token: owner }))).available_usd;
    const authorized = await remote.request('POST', `/api/employers/${employerId}/agents/authorizations`, {
      token: owner,
      body: { label: 'Escrow poster', agent_identifier: 'clock-poster', per_tx_cap_usd: '50', per_day_cap_usd: '500', velocity_per_minute: 100 },
    });
    expect(authorized.status).toBe(201);
    const poster = { hmac: (await json<{ hmac_secret: string }>(authorized)).hmac_secret };
    const workerKey = privateKeyToAccount(generatePrivateKey());
    const worker = workerKey.address.toLowerCase();
    const before = await treasury();

    const posted = await signed(
      '/api/mpp/escrow/post',
      {
        employer_id: employerId,
        worker_wallet_address: (await generateKeyPairSigner()).address,
        worker_agent_identifier: worker,
        amount_usdc: '10.00',
        rubric_prompt: 'Write a short note.\nmust include: ledger',
        expiry_hours: 1,
      },
      'clock-poster',
      poster,
    );
    expect(posted.status, await posted.clone().text()).toBe(200);
    const escrow = await json<{ escrow_id: string; expires_at: string }>(posted);
    expect(Number(before) - Number(await treasury())).toBe(10);

    const status = async () => json<{ status: string; signatures: Record<string, string> }>(await pay(`/api/mpp/escrow/${escrow.escrow_id}/status`));
    expect((await status()).status).toBe('posted');

    const moved = await advance(7200);
    expect(moved.status).toBe(200);
    expect(Date.parse((await json<{ now: string }>(moved)).now)).toBeGreaterThan(Date.parse(escrow.expires_at));

    // The advance runs the scheduled jobs at once: the expiry sweep refunds on chain.
    await expect.poll(async () => (await status()).status, { timeout: 60_000, interval: 1_000 }).toBe('expired_refunded');
    expect(Object.keys((await status()).signatures)).toEqual(expect.arrayContaining(['refund', 'treasury_refund']));
    expect(await treasury()).toBe(before);

    const late = await signed('/api/mpp/escrow/deliver', { escrow_id: escrow.escrow_id, deliverable_uri: 'data:,ledger' }, worker, { evm: workerKey });
    expect({ status: late.status, code: (await json(late)).code }).toEqual({ status: 403, code: 'ESCROW_EXPIRED' });
  }, 120_000);

  it('an announcement is shown until its expires_at, and not after an advance past it', async () => {
    const admin = await remote.token('demo-admin');
    const clock = await json<{ now: string }>(await remote.request('GET', '/api/dev/clock'));
    const expiresAt = new Date(Date.parse(clock.now) + 3600_000).toISOString();
    const created = await remote.request('POST', '/api/admin/announcements', {
      token: admin,
      body: { title: 'Maintenance tonight', body: 'Back by one.', severity: 'info', audience: 'all', publish_now: true, expires_at: expiresAt },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = await json<{ id: string }>(created);
    const reader = await remote.token('demo-owner');
    const active = async () => (await json<{ announcements: { id: string }[] }>(await remote.request('GET', '/api/announcements/active', { token: reader }))).announcements.map((a) => a.id);
    expect(await active()).toContain(id);
    expect((await advance(7200)).status).toBe(200);
    expect(await active()).not.toContain(id);
    const listed = await json<{ announcements: { id: string; state: string }[] }>(await remote.request('GET', '/api/admin/announcements', { token: admin }));
    expect(listed.announcements.find((a) => a.id === id)?.state).toBe('expired');
  });

  it('after the advances, clients signing with their own clocks still pay on every rail', async () => {
    const networks = await remote.chains();
    const solana = networks.find((n) => n.network.startsWith('solana:'))!;
    const assets = { baseStablecoin: networks.find((n) => n.network === 'eip155:8453')!.contracts.stablecoin!, solanaNetwork: solana.network, solanaMint: solana.contracts.mint! };
    const rails: [string, PayingFetch][] = [
      ['A', pay],
      ['B', (await x402WithAssets(remote, assets, remote.base, 'B')).pay],
      ['C', (await x402WithAssets(remote, assets, remote.base, 'C')).pay],
    ];
    for (const [rail, payer] of rails) {
      const res = await payer('/api/mpp/treasury/yield-rates');
      expect({ rail, status: res.status }).toEqual({ rail, status: 200 });
    }
  });
});
