import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { eq, sql } from 'drizzle-orm';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, type PayingFetch } from '../../../test/support/pay.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import { escrows } from '../escrow/tables.js';
import { agentPayCalls } from './tables.js';
import { createLogger } from '../../log.js';
import { createAiProvider } from '../../providers/ai/index.js';
import { EscrowService, escrowOptionsFrom } from '../escrow/service.js';
import * as escrowStore from '../escrow/store.js';
import { enqueueReputationWrite, ReputationService } from '../reputation/service.js';
import { TreasuryService } from '../treasury/service.js';
import { AgentPayService } from './pay.js';
import { AgentRequestVerifier, type SignedAgentRequest } from './request-proof.js';
import { SecretBox } from './secret-box.js';
import { AgentsService } from './service.js';

/**
 * The one spend reservation (issue 26, item 1): agent/pay and escrow/post draw on one
 * authorization's caps (gate 3 and gate 4 count both kinds), and the recipient allowlist (gate 5)
 * covers escrow workers, whose wallets are Solana addresses. The reconcilers of both (item 5)
 * never act on a reservation the request that made it is still acting on.
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
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
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
    expect(shown.allowed_recipients).toEqual([listedPayee, listedWorker]);

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

describe('reconcilers own nothing in flight', () => {
  /** A Tempo chain whose treasury read waits until `resume()`: a request stalled before it signs. */
  function stalledTempo() {
    const tempo = t.chains!.tempo;
    let reached!: () => void;
    let resume!: () => void;
    const atStall = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (resume = resolve));
    const chain = Object.create(tempo) as TempoChain;
    chain.treasuryAccount = async (id: bigint) => {
      reached();
      await released;
      return tempo.treasuryAccount(id);
    };
    return { chain, atStall, resume };
  }

  const verifier = () =>
    new AgentRequestVerifier({
      database: t.database,
      agents: new AgentsService({
        database: t.database,
        employers: t.services.employers,
        secrets: new SecretBox({ configured: t.config.agentSecretsKey, dataDir: t.config.dataDir }),
      }),
      tempo: t.chains!.tempo,
    });

  async function proof(agent: Agent, path: string, body: Json): Promise<{ proof: SignedAgentRequest; text: string }> {
    const text = JSON.stringify(body);
    const headers = new Headers(await agentProofHeaders(agent.identifier, { hmac: agent.hmac }, { method: 'POST', path, body: text }));
    return { proof: { method: 'POST', pathWithQuery: path, headers, body: new TextEncoder().encode(text), feePaymentId: null }, text };
  }

  const tokenBalance = (owner: string) =>
    t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [owner as Address] });

  it('agent/pay: a reservation the reconciler released is never transferred by the stalled request that made it', async () => {
    const agent = await authorize({});
    const to = evmRecipient();
    const stalled = stalledTempo();
    const reputation = { tierOf: () => Promise.resolve({ tier: 'unknown' as const }), enqueue: enqueueReputationWrite };
    const service = new AgentPayService({ database: t.database, verifier: verifier(), employers: t.services.employers, tempo: stalled.chain, reputation, escrowReservations: escrowStore.posterReservations, log: createLogger('silent') });
    const { proof: signed } = await proof(agent, '/api/mpp/agent/pay', { employer_id: employerId, recipient_wallet: to, amount: '3' });
    const paying = service.pay({ identifier: agent.identifier, employerId, recipient: to, amount: 3_000_000n, reference: null, idempotencyKey: null, proof: signed, feePaymentId: null });
    const settled = paying.then(() => 'paid', (error: Error) => error.message);
    await stalled.atStall;

    // The request outlives the reconciler's patience (as a stalled process would).
    await t.database.db.update(agentPayCalls).set({ createdAt: sql`now() - interval '10 minutes'` }).where(eq(agentPayCalls.authorizationId, agent.authorizationId));
    expect(await service.reconcileStale()).toEqual({ paid: 0, released: 1 });
    const before = await available();
    stalled.resume();
    expect(await settled).not.toBe('paid');

    expect(await tokenBalance(to)).toBe(0n);
    expect(await available()).toBe(before);
    const [call] = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.authorizationId, agent.authorizationId));
    expect(call).toMatchObject({ status: 'released', txHash: null });
    // The key's next write is not held up by the nonce the stalled request gave up.
    expect(await outcome(await agentPay(agent, '1'))).toEqual({ status: 200 });
  });

  it('escrow/post: a funding the reconciler failed after its lease lapsed is never debited by the stalled request', async () => {
    const agent = await authorize({});
    const worker = solanaWallet();
    const stalled = stalledTempo();
    const log = createLogger('silent');
    const reputation = new ReputationService({ database: t.database, chains: t.chains!, serviceSlug: t.config.serviceSlug });
    const options = escrowOptionsFrom(t.config);
    const service = (tempo: TempoChain) =>
      new EscrowService({ database: t.database, verifier: verifier(), employers: t.services.employers, tempo, solana: t.chains!.solana, reputation, ai: createAiProvider(t.config.ai, log), ...options, log });
    const body = { employer_id: employerId, worker_wallet_address: worker, worker_agent_identifier: `solana:${worker}`, amount_usdc: '4', rubric_prompt: 'must include: ledger' };
    const { proof: signed } = await proof(agent, '/api/mpp/escrow/post', body);
    const posting = service(stalled.chain).post({
      identifier: agent.identifier,
      employerId,
      workerWalletAddress: worker,
      workerAgentIdentifier: `solana:${worker}`,
      amount: 4_000_000n,
      rubricPrompt: body.rubric_prompt,
      expiryHours: 24,
      proof: signed,
      feePaymentId: null,
    });
    const settled = posting.then((row) => row.status, (error: Error) => error.message);
    await stalled.atStall;

    // Its lease lapses and the reconciler (another instance) finds a funding with no debit sent.
    await t.database.db
      .update(escrows)
      .set({ createdAt: sql`now() - interval '10 minutes'`, leaseUntil: sql`now() - interval '1 second'` })
      .where(eq(escrows.posterAuthorizationId, agent.authorizationId));
    const [row] = await t.database.db.select().from(escrows).where(eq(escrows.posterAuthorizationId, agent.authorizationId));
    expect((await service(t.chains!.tempo).advance(row!.id))?.status).toBe('funding_failed');
    const before = await available();
    stalled.resume();
    expect(await settled).not.toBe('posted');

    expect(await available()).toBe(before);
    expect(await t.chains!.solana.escrowBalance(row!.id)).toBe(0n);
    const [after] = await t.database.db.select().from(escrows).where(eq(escrows.id, row!.id));
    expect(after!.status).toBe('funding_failed');
    expect(Object.keys(after!.signatures as object)).toEqual([]);

    // A lease is ended only by its holder: a lapsed holder's release leaves its successor's alone.
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await escrowStore.takeLease(t.database.db, row!.id, 60, first)).not.toBeNull();
    await escrowStore.releaseLease(t.database.db, row!.id, second);
    expect(await escrowStore.takeLease(t.database.db, row!.id, 60, third)).toBeNull();
    await escrowStore.releaseLease(t.database.db, row!.id, first);
    expect(await escrowStore.takeLease(t.database.db, row!.id, 60, third)).not.toBeNull();
  });
});
