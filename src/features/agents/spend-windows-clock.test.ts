import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, type PayingFetch } from '../../../test/support/pay.js';
import { TreasuryService } from '../treasury/service.js';

/**
 * The spend gates' windows (gate 3's rolling 24 h, gate 4's 60 s) are read on the service clock:
 * moving it forward frees them, with no row rewritten. Its own app: the clock never goes back.
 */
const PAY = '/api/mpp/agent/pay';
let t: TestApp;
let server: LoopbackServer;
let pay: PayingFetch;
let owner: string;
let employerId: string;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  pay = (await railA(t, server.url, '10')).pay;
  owner = await t.token(`clock-${randomUUID()}`, 'owner@clock.example');
  employerId = ((await (await t.request('POST', '/api/employers', { token: owner, body: { name: 'Clock Co' } })).json()) as { id: string }).id;
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '100' } });
  await t.chains!.tempo.depositToTreasury(await new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers }).accountId(employerId), 100_000_000n);
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function authorize(settings: Record<string, unknown>) {
  const body = { label: 'Clock bot', agent_identifier: `clock-${randomUUID()}`, per_tx_cap_usd: '10', per_day_cap_usd: '10', velocity_per_minute: 50, ...settings };
  const response = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, { token: owner, body });
  expect(response.status, await response.clone().text()).toBe(201);
  const created = (await response.json()) as { agent_identifier: string; hmac_secret: string };
  return { identifier: created.agent_identifier, secret: created.hmac_secret };
}

async function agentPay(agent: { identifier: string; secret: string }, amount: string): Promise<{ status: number; code?: string }> {
  const body = JSON.stringify({ employer_id: employerId, recipient_wallet: privateKeyToAccount(generatePrivateKey()).address, amount });
  const proof = await agentProofHeaders(agent.identifier, { hmac: agent.secret }, { method: 'POST', path: PAY, body });
  const response = await pay(PAY, { method: 'POST', body, headers: proof });
  return response.status === 200 ? { status: 200 } : { status: response.status, code: ((await response.json()) as { code: string }).code };
}

describe('the spend gates on the service clock', () => {
  it('gate 4: the calls of the last 60 s stop counting once the service clock is a minute on', async () => {
    const agent = await authorize({ velocity_per_minute: 1 });
    expect(await agentPay(agent, '0.10')).toEqual({ status: 200 });
    expect(await agentPay(agent, '0.10')).toEqual({ status: 403, code: 'VELOCITY_EXCEEDED' });
    await t.database.clock.advance(t.database.db, 61);
    expect(await agentPay(agent, '0.10')).toEqual({ status: 200 });
  });

  it('gate 3: the per-day cap frees up once the service clock is 24 h past the payments', async () => {
    const agent = await authorize({});
    expect(await agentPay(agent, '10')).toEqual({ status: 200 });
    expect(await agentPay(agent, '1')).toEqual({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
    await t.database.clock.advance(t.database.db, 12 * 3600);
    expect(await agentPay(agent, '1')).toEqual({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
    await t.database.clock.advance(t.database.db, 12 * 3600 + 1);
    expect(await agentPay(agent, '1')).toEqual({ status: 200 });
  });
});
