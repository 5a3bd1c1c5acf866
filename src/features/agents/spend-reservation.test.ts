import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, type PayingFetch } from '../../../test/support/pay.js';
import { agentPayCalls, escrows } from '../../db/schema.js';
import { TreasuryService } from '../treasury/service.js';

/**
 * The one spend reservation (issue 26, item 1): agent/pay and escrow/post draw on one
 * authorization's caps (gate 3 and gate 4 count both kinds), and the recipient allowlist (gate 5)
 * covers escrow workers, whose wallets are Solana addresses.
 */
let t: TestApp;
let server: LoopbackServer;
let pay: PayingFetch;
let owner: string;
let employerId: string;
let treasury: TreasuryService;

type Json = Record<string, unknown>;
type Agent = { identifier: string; hmac: string; authorizationId: string };
const json = async <T = Json>(response: Response) => (await response.json()) as T;
const evmRecipient = () => privateKeyToAccount(generatePrivateKey()).address;
const solanaWallet = () => getBase58Decoder().decode(Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url'));
const available = async () => (await treasury.account(employerId)).available;

async function authorize(settings: Json): Promise<Agent> {
  const body = { label: 'Spender', agent_identifier: `spender-${randomUUID()}`, per_tx_cap_usd: '20', per_day_cap_usd: '100', velocity_per_minute: 50, ...settings };
  const response = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, { token: owner, body });
  expect(response.status, await response.clone().text()).toBe(201);
  const created = await json<{ id: string; agent_identifier: string; hmac_secret: string }>(response);
  return { identifier: created.agent_identifier, hmac: created.hmac_secret, authorizationId: created.id };
}

async function signed(agent: Agent, path: string, body: Json): Promise<Response> {
  const text = JSON.stringify(body);
  const proof = await agentProofHeaders(agent.identifier, { hmac: agent.hmac }, { method: 'POST', path, body: text });
  return pay(path, { method: 'POST', body: text, headers: proof });
}

const agentPay = (agent: Agent, amount: string, to: string = evmRecipient()) =>
  signed(agent, '/api/mpp/agent/pay', { employer_id: employerId, recipient_wallet: to, amount, reference: null });

const postEscrow = (agent: Agent, amount: string, worker: string = solanaWallet()) =>
  signed(agent, '/api/mpp/escrow/post', {
    employer_id: employerId,
    worker_wallet_address: worker,
    worker_agent_identifier: `solana:${worker}`,
    amount_usdc: amount,
    rubric_prompt: 'Write a short note.\nmust include: ledger',
  });

async function outcome(response: Response) {
  const body = await json(response);
  return response.status === 200 ? { status: 200 } : { status: response.status, code: body.code };
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  treasury = new TreasuryService(t.chains!.tempo, t.services.employers);
  pay = (await railA(t, server.url, '40')).pay;
  owner = await t.token(`spend-${randomUUID()}`, 'owner@spend.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Spend Co' } }))).id;
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '1000' } });
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(employerId), 1000_000_000n);
  // The service's Solana float that funds escrow custody.
  await t.request('POST', '/api/dev/faucet', { body: { network: t.chains!.solana.network, address: t.chains!.solana.serviceAddress, amount: '1000' } });
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('one daily cap for agent/pay and escrow/post', () => {
  it('an escrow held counts toward agent/pay: a day of escrows leaves no second day of payments', async () => {
    const agent = await authorize({ per_tx_cap_usd: '20', per_day_cap_usd: '30' });
    expect(await outcome(await postEscrow(agent, '20'))).toEqual({ status: 200 });
    const before = await available();
    expect(await outcome(await agentPay(agent, '11'))).toMatchObject({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
    expect(await available()).toBe(before);
    expect(await outcome(await agentPay(agent, '10'))).toEqual({ status: 200 });
    // The cap is now full for both kinds.
    expect(await outcome(await postEscrow(agent, '0.01'))).toMatchObject({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
    expect(await outcome(await agentPay(agent, '0.01'))).toMatchObject({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
  });

  it('payments count toward escrow/post the same way', async () => {
    const agent = await authorize({ per_tx_cap_usd: '20', per_day_cap_usd: '25' });
    expect(await outcome(await agentPay(agent, '20'))).toEqual({ status: 200 });
    expect(await outcome(await postEscrow(agent, '5.01'))).toMatchObject({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
    expect(await outcome(await postEscrow(agent, '5'))).toEqual({ status: 200 });
  });

  it('gate 4 counts posts and payments together in the same 60 s', async () => {
    const agent = await authorize({ velocity_per_minute: 2 });
    expect(await outcome(await postEscrow(agent, '1'))).toEqual({ status: 200 });
    expect(await outcome(await agentPay(agent, '1'))).toEqual({ status: 200 });
    expect(await outcome(await agentPay(agent, '1'))).toMatchObject({ status: 403, code: 'VELOCITY_EXCEEDED' });
    expect(await outcome(await postEscrow(agent, '1'))).toMatchObject({ status: 403, code: 'VELOCITY_EXCEEDED' });
  });
});

describe('the recipient allowlist covers escrow workers', () => {
  it('an allowlisted agent posts only to a worker wallet on its list (Solana entries kept exactly as written)', async () => {
    const listedWorker = solanaWallet();
    const listedPayee = evmRecipient();
    const agent = await authorize({ allowed_recipients: [listedPayee, listedWorker] });
    const shown = await json<{ allowed_recipients: string[] }>(await t.request('GET', `/api/employers/${employerId}/agents/authorizations/${agent.authorizationId}`, { token: owner }));
    expect(shown.allowed_recipients).toEqual([listedPayee.toLowerCase(), listedWorker]);

    const before = await available();
    const outsider = solanaWallet();
    expect(await outcome(await postEscrow(agent, '5', outsider))).toMatchObject({ status: 403, code: 'RECIPIENT_NOT_ALLOWED' });
    expect(await available()).toBe(before);
    expect(await t.database.db.select().from(escrows).where(eq(escrows.posterAuthorizationId, agent.authorizationId))).toEqual([]);

    expect(await outcome(await postEscrow(agent, '5', listedWorker))).toEqual({ status: 200 });
    expect(await outcome(await agentPay(agent, '1', listedPayee))).toEqual({ status: 200 });
    // An EVM recipient matches whatever its letters' case (listed checksummed, paid in lower case).
    expect(await outcome(await agentPay(agent, '1', listedPayee.toLowerCase()))).toEqual({ status: 200 });
    expect(await outcome(await agentPay(agent, '1', evmRecipient()))).toMatchObject({ status: 403, code: 'RECIPIENT_NOT_ALLOWED' });
    const calls = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.authorizationId, agent.authorizationId));
    expect(calls.map((call) => call.status).sort()).toEqual(['paid', 'paid']);
  });

  it('400 names allowed_recipients for an entry that is neither an EVM nor a Solana address', async () => {
    const body = { label: 'Bad list', agent_identifier: `spender-${randomUUID()}`, per_tx_cap_usd: '1', per_day_cap_usd: '1', allowed_recipients: ['not-an-address'] };
    const response = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, { token: owner, body });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await json(response))).toContain('allowed_recipients');
  });
});
