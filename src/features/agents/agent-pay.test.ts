import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { and, eq } from 'drizzle-orm';
import { erc20Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPayService, agentProofHeaders, erc8004Agent, type AgentSigner } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { loseAnswer, proofMaker, railA, type PayingFetch } from '../../../test/support/pay.js';
import { paymentReceipts, payments } from '../../payments/tables.js';
import { notifications } from '../notifications/tables.js';
import { reputationWrites } from '../reputation/tables.js';
import { agentPayCalls } from './tables.js';
import { decodeMemo } from '../memo/codec.js';
import { enqueueReputationWrite } from '../reputation/service.js';
import { TreasuryService } from '../treasury/service.js';
import { effectiveCaps } from './spend-gates.js';
import type { AuthorizationRow } from './store.js';

/**
 * POST /api/mpp/agent/pay end to end over the embedded chains: the payment gate, the identity
 * proof (HMAC, ERC-8004, EVM address, Ed25519), gates 1-5 in order, the treasury check, the transfer, gate 6,
 * Idempotency-Key, the fee kept on refusals, and 200 concurrent calls against a per-day cap.
 */
const PAY = '/api/mpp/agent/pay';
let t: TestApp;
let server: LoopbackServer;
let pay: PayingFetch;
let owner: string;
let employerId: string;
let treasury: TreasuryService;

type Authorization = { id: string; agent_identifier: string; hmac_secret: string | null };
type Agent = { identifier: string; signer: AgentSigner; authorization: Authorization };
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
const recipient = () => privateKeyToAccount(generatePrivateKey()).address;
const balanceOf = (address: Address) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

async function newEmployer(name: string, fundUsd: string | null) {
  const token = await t.token(`pay-${randomUUID()}`, `${randomUUID().slice(0, 8)}@pay.example`);
  const id = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name } }))).id;
  if (fundUsd !== null) {
    const service = t.chains!.tempo.serviceAddress;
    await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: fundUsd } });
    await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), BigInt(fundUsd) * 1_000_000n);
  }
  return { token, id };
}

/** An authorization for an HMAC agent (or the given identity), with the owner's settings. */
async function authorize(settings: Record<string, unknown> = {}, employer = { token: owner, id: employerId }, signer?: AgentSigner): Promise<Agent> {
  const body = { label: 'Buyer bot', agent_identifier: `buyer-${randomUUID()}`, per_tx_cap_usd: '20', per_day_cap_usd: '100', velocity_per_minute: 50, ...settings };
  const response = await t.request('POST', `/api/employers/${employer.id}/agents/authorizations`, { token: employer.token, body });
  expect(response.status, await response.clone().text()).toBe(201);
  const authorization = await json<Authorization>(response);
  return { identifier: authorization.agent_identifier, signer: signer ?? { hmac: authorization.hmac_secret! }, authorization };
}

interface PayOptions {
  employer?: string;
  to?: Address;
  amount?: string;
  reference?: string | null;
  headers?: Record<string, string>;
  /** Sign this instead of the request actually sent. */
  signed?: { method?: string; path?: string; body?: string; timestamp?: number };
}

async function agentPay(agent: Agent, options: PayOptions = {}): Promise<Response> {
  const body = JSON.stringify({
    employer_id: options.employer ?? employerId,
    recipient_wallet: options.to ?? recipient(),
    amount: options.amount ?? '1.00',
    reference: options.reference === undefined ? `ref-${randomUUID()}` : options.reference,
  });
  const proof = await agentProofHeaders(agent.identifier, agent.signer, {
    method: options.signed?.method ?? 'POST',
    path: options.signed?.path ?? PAY,
    body: options.signed?.body ?? body,
    ...(options.signed?.timestamp !== undefined && { timestamp: options.signed.timestamp }),
  });
  return pay(PAY, { method: 'POST', body, headers: { ...proof, ...options.headers } });
}

async function expectRefused(response: Response, status: number, code: string) {
  const body = await json<{ code: string }>(response);
  expect({ status: response.status, code: body.code }, JSON.stringify(body)).toEqual({ status, code });
  return body;
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  pay = (await railA(t, server.url, '40')).pay;
  const employer = await newEmployer('Agent Pay Co', '5000');
  owner = employer.token;
  employerId = employer.id;
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('a paid, proven, authorized payment', () => {
  it('answers 402 with every rail before anything else', async () => {
    const response = await fetch(`${server.url}${PAY}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(402);
    expect(response.headers.get('www-authenticate')).toMatch(/^Payment /);
  });

  it('pays from the treasury on Tempo with a decodable memo, and files the fee under the employer', async () => {
    const agent = await authorize();
    const to = recipient();
    const response = await agentPay(agent, { to, amount: '2.50', reference: 'invoice 42' });
    expect(response.status).toBe(200);
    const result = await json<{ tx_hash: Hex; memo: Hex; amount: string; employer_account_id: string }>(response);
    expect(result).toMatchObject({ success: true, recipient: to, amount: '2.500000', employer_id: employerId, reference: 'invoice 42', timestamp: expect.any(String) });
    expect(result.employer_account_id).toBe((await treasury.accountId(employerId)).toString());
    expect(await balanceOf(to)).toBe(2_500_000n);
    expect(decodeMemo(result.memo)).toMatchObject({ type: 'agent_payment' });
    const receipt = await t.chains!.tempo.connection.receipt(result.tx_hash);
    expect(receipt?.status).toBe('success');
    const [call] = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.txHash, result.tx_hash));
    expect(call).toMatchObject({ status: 'paid', amount: 2_500_000n, authorizationId: agent.authorization.id });
    const [fee] = await t.database.db.select().from(paymentReceipts).where(eq(paymentReceipts.paymentId, call!.feePaymentId!));
    expect(fee).toMatchObject({ employerId, amount: 50_000n, route: 'POST /api/mpp/agent/pay' });
  });

  it('needs X-Agent-Identifier (401) and an active authorization of that employer (403), keeping the fee', async () => {
    const agent = await authorize();
    const missing = await agentPay(agent, { headers: { 'X-Agent-Identifier': '' } });
    await expectRefused(missing, 401, 'AGENT_IDENTIFIER_MISSING');
    const stranger = await agentPay({ ...agent, identifier: `stranger-${randomUUID()}` });
    await expectRefused(stranger, 403, 'AGENT_NOT_AUTHORIZED');
    // Authorized for this employer, not for another one (whose id it may well know).
    const other = await newEmployer('Other Co', '100');
    await expectRefused(await agentPay(agent, { employer: other.id }), 403, 'AGENT_NOT_AUTHORIZED');
    await expectRefused(await agentPay(agent, { employer: randomUUID() }), 403, 'AGENT_NOT_AUTHORIZED');
    // A revoked authorization matches nothing.
    await t.request('DELETE', `/api/employers/${employerId}/agents/authorizations/${agent.authorization.id}`, { token: owner });
    await expectRefused(await agentPay(agent), 403, 'AGENT_NOT_AUTHORIZED');
    const refused = await t.database.db.select().from(payments).where(and(eq(payments.route, 'POST /api/mpp/agent/pay'), eq(payments.httpStatus, 403)));
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.every((p) => p.status === 'served')).toBe(true);
  });

  it('validates the body after payment, naming the field', async () => {
    const agent = await authorize();
    for (const [change, field] of [
      [{ recipient_wallet: '0x12' }, 'recipient_wallet'],
      [{ amount: '1.0000001' }, 'amount'],
      [{ amount: '0' }, 'amount'],
      [{ employer_id: 'nope' }, 'employer_id'],
    ] as const) {
      const body = JSON.stringify({ ...{ employer_id: employerId, recipient_wallet: recipient(), amount: '1' }, ...change });
      const proof = await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path: PAY, body });
      const response = await pay(PAY, { method: 'POST', body, headers: proof });
      expect(response.status).toBe(400);
      expect((await json<{ field: string }>(response)).field).toBe(field);
    }
  });
});

describe('the identity proof', () => {
  it('refuses a stale timestamp, a replay, another method or path, a tampered body and a wrong secret', async () => {
    const agent = await authorize();
    await expectRefused(await agentPay(agent, { signed: { timestamp: Math.floor(Date.now() / 1000) - 301 } }), 401, 'PROOF_STALE');
    await expectRefused(await agentPay(agent, { signed: { path: `${PAY}?x=1` } }), 401, 'PROOF_INVALID');
    await expectRefused(await agentPay(agent, { signed: { method: 'PUT' } }), 401, 'PROOF_INVALID');
    await expectRefused(await agentPay(agent, { signed: { body: '{"amount":"0.01"}' } }), 401, 'PROOF_INVALID');
    await expectRefused(await agentPay({ ...agent, signer: { hmac: `${agent.authorization.hmac_secret}x` } }), 401, 'PROOF_INVALID');
    await expectRefused(await agentPay(agent, { headers: { 'X-Agent-Signature': '' } }), 401, 'PROOF_MISSING');

    // The same signed request twice: served once.
    const body = JSON.stringify({ employer_id: employerId, recipient_wallet: recipient(), amount: '1.00', reference: null });
    const proof = await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path: PAY, body });
    expect((await pay(PAY, { method: 'POST', body, headers: proof })).status).toBe(200);
    await expectRefused(await pay(PAY, { method: 'POST', body, headers: proof }), 401, 'PROOF_REPLAYED');
  });

  it('accepts an ERC-8004 agent signed by its current owner on chain, and nobody else', async () => {
    const { owner: agentOwner, agentId } = await erc8004Agent(t);
    const agent = await authorize({ agent_identifier: `erc8004:tempo:${agentId}` }, undefined, { evm: agentOwner });
    expect(agent.authorization.hmac_secret).toBeNull();
    expect((await agentPay(agent)).status).toBe(200);
    await expectRefused(await agentPay({ ...agent, signer: { evm: privateKeyToAccount(generatePrivateKey()) } }), 401, 'PROOF_INVALID');
    // Its payment queues ERC-8004 feedback for the agent.
    const writes = await t.database.db.select().from(reputationWrites).where(eq(reputationWrites.subject, agentId.toString()));
    expect(writes).toEqual([expect.objectContaining({ kind: 'erc8004_feedback', writeType: 'agent-pay', sourceType: 'agent_pay', status: 'pending' })]);
  });

  it('accepts an EIP-191 signature by an EVM address authorized with the evm scheme, and nobody else', async () => {
    const key = privateKeyToAccount(generatePrivateKey());
    const agent = await authorize({ agent_identifier: key.address, identity_scheme: 'evm' }, undefined, { evm: key });
    expect(agent.authorization.hmac_secret).toBeNull();
    expect((await agentPay(agent)).status).toBe(200);
    await expectRefused(await agentPay({ ...agent, signer: { evm: privateKeyToAccount(generatePrivateKey()) } }), 401, 'PROOF_INVALID');
    await expectRefused(await agentPay({ ...agent, signer: { hmac: 'no-secret-was-issued' } }), 401, 'PROOF_INVALID');
  });

  it('accepts an Ed25519 signature by a Solana identity', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'jwk' }).x!;
    const key = getBase58Decoder().decode(Buffer.from(raw, 'base64url'));
    const agent = await authorize({ agent_identifier: `solana:${key}` }, undefined, { ed25519: privateKey });
    expect((await agentPay(agent)).status).toBe(200);
    await expectRefused(await agentPay({ ...agent, signer: { ed25519: generateKeyPairSync('ed25519').privateKey } }), 401, 'PROOF_INVALID');
  });
});

describe('the spend gates, in order', () => {
  it('gate 1: a paused agent is refused before any cap is looked at', async () => {
    const employer = await newEmployer('Paused Co', '100');
    const agent = await authorize({}, employer);
    await t.request('POST', `/api/employers/${employer.id}/agents/pause-all`, { token: employer.token, body: { reason: 'audit' } });
    const refused = await expectRefused(await agentPay(agent, { employer: employer.id, amount: '500' }), 403, 'AGENT_PAUSED');
    expect(refused).toMatchObject({ gate: 1, pause_reason: 'audit' });
    await t.request('DELETE', `/api/employers/${employer.id}/agents/pause-all`, { token: employer.token });
    expect((await agentPay(agent, { employer: employer.id })).status).toBe(200);
  });

  it('gate 2: above the per-transaction cap', async () => {
    const agent = await authorize({ per_tx_cap_usd: '5' });
    expect((await agentPay(agent, { amount: '5' })).status).toBe(200);
    const refusals = async () =>
      Number((await (await t.request('GET', '/metrics')).text()).match(/^agent_spend_refusals_total\{code="PER_TX_CAP_EXCEEDED"\} (\d+)$/m)?.[1] ?? 0);
    const before = await refusals();
    const refused = await expectRefused(await agentPay(agent, { amount: '5.000001' }), 403, 'PER_TX_CAP_EXCEEDED');
    expect(refused).toMatchObject({ gate: 2, per_tx_cap_usd: '5.000000' });
    expect(await refusals()).toBe(before + 1);
  });

  it('gate 3: the rolling 24 h sum plus the payment may not pass the per-day cap', async () => {
    const agent = await authorize({ per_tx_cap_usd: '4', per_day_cap_usd: '10' });
    expect((await agentPay(agent, { amount: '4' })).status).toBe(200);
    expect((await agentPay(agent, { amount: '4' })).status).toBe(200);
    const refused = await expectRefused(await agentPay(agent, { amount: '2.01' }), 403, 'PER_DAY_CAP_EXCEEDED');
    expect(refused).toMatchObject({ gate: 3, spent_last_24h_usd: '8.000000' });
    expect((await agentPay(agent, { amount: '2' })).status).toBe(200);
    // Payments older than 24 h no longer count.
    await t.database.db
      .update(agentPayCalls)
      .set({ createdAt: new Date(Date.now() - 24 * 3600_000 - 1000) })
      .where(eq(agentPayCalls.authorizationId, agent.authorization.id));
    expect((await agentPay(agent, { amount: '4' })).status).toBe(200);
  });

  it('gate 4: the sixth call in a minute is refused at the default velocity', async () => {
    const agent = await authorize({ velocity_per_minute: undefined });
    for (let i = 0; i < 5; i++) expect((await agentPay(agent, { amount: '0.10' })).status).toBe(200);
    const refused = await expectRefused(await agentPay(agent, { amount: '0.10' }), 403, 'VELOCITY_EXCEEDED');
    expect(refused).toMatchObject({ gate: 4, velocity_per_minute: 5 });
  });

  it('gate 5: only allowlisted recipients, compared case-insensitively', async () => {
    const allowed = recipient();
    const agent = await authorize({ allowed_recipients: [allowed.toLowerCase()] });
    expect((await agentPay(agent, { to: allowed })).status).toBe(200);
    await expectRefused(await agentPay(agent, { to: recipient() }), 403, 'RECIPIENT_NOT_ALLOWED');
  });

  it('a short treasury answers 422 and the reservation stops counting toward the caps', async () => {
    const employer = await newEmployer('Empty Co', '3');
    const agent = await authorize({ per_tx_cap_usd: '5', per_day_cap_usd: '5' }, employer);
    const refused = await expectRefused(await agentPay(agent, { employer: employer.id, amount: '4' }), 422, 'INSUFFICIENT_TREASURY_BALANCE');
    expect(refused).toMatchObject({ available_usd: '3.000000' });
    // The released 4.00 does not count: 3.00 still fits the 5.00 day.
    expect((await agentPay(agent, { employer: employer.id, amount: '3' })).status).toBe(200);
    const noTreasury = await newEmployer('No Treasury Co', null);
    const unfunded = await authorize({}, noTreasury);
    await expectRefused(await agentPay(unfunded, { employer: noTreasury.id }), 422, 'INSUFFICIENT_TREASURY_BALANCE');
  });
});

describe('Idempotency-Key', () => {
  it('returns the first payment to a retry without paying again, and refuses the key for another payment', async () => {
    const agent = await authorize();
    const to = recipient();
    const key = `key-${randomUUID()}`;
    const first = await agentPay(agent, { to, amount: '1.25', reference: 'once', headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(200);
    const firstBody = await json<{ tx_hash: string }>(first);
    const retry = await agentPay(agent, { to, amount: '1.25', reference: 'once', headers: { 'Idempotency-Key': key } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await json<{ tx_hash: string }>(retry)).tx_hash).toBe(firstBody.tx_hash);
    expect(await balanceOf(to)).toBe(1_250_000n);
    await expectRefused(await agentPay(agent, { to, amount: '2.00', reference: 'once', headers: { 'Idempotency-Key': key } }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });
});

describe('gate 6: the anomaly', () => {
  it('halves the cap once for a payment above 10x the 7-day median after 5 payments, and notifies the owner', async () => {
    const employer = await newEmployer('Spike Co', '200');
    const agent = await authorize({ per_tx_cap_usd: '40', per_day_cap_usd: '100' }, employer);
    // Four payments: too few for the gate, whatever the amount.
    for (let i = 0; i < 4; i++) expect((await agentPay(agent, { employer: employer.id, amount: '1' })).status).toBe(200);
    expect((await agentPay(agent, { employer: employer.id, amount: '15' })).status).toBe(200);
    const before = await json<{ cap_halved_at: string | null }>(
      await t.request('GET', `/api/employers/${employer.id}/agents/authorizations/${agent.authorization.id}`, { token: employer.token }),
    );
    expect(before.cap_halved_at).toBeNull();
    // Now 5 prior payments (median 1.00): 10.01 is an anomaly, paid, and the cap halves.
    expect((await agentPay(agent, { employer: employer.id, amount: '10.01' })).status).toBe(200);
    const after = await json(await t.request('GET', `/api/employers/${employer.id}/agents/authorizations/${agent.authorization.id}`, { token: employer.token }));
    expect(after).toMatchObject({ per_tx_cap_usd: '20.000000', per_tx_cap_original_usd: '40.000000', cap_halved_at: expect.any(String) });
    const bell = await t.database.db.select().from(notifications).where(eq(notifications.employerId, employer.id));
    expect(bell.filter((n) => n.type === 'agent_spike_detected')).toEqual([
      expect.objectContaining({ severity: 'warning', linkUrl: '/dashboard/settings/agents', data: expect.objectContaining({ median_usd: '1.000000', per_tx_cap_usd: '20.000000' }) }),
    ]);
    await expectRefused(await agentPay(agent, { employer: employer.id, amount: '25' }), 403, 'PER_TX_CAP_EXCEEDED');
    const restored = await t.request('POST', `/api/employers/${employer.id}/agents/authorizations/${agent.authorization.id}/restore-cap`, { token: employer.token });
    expect(await json(restored)).toMatchObject({ per_tx_cap_usd: '40.000000', cap_halved_at: null });
  });
});

describe('elevated caps by reputation tier', () => {
  it('apply only while the tier is established or trusted, and not while the cap is halved', async () => {
    const { owner: agentOwner, agentId } = await erc8004Agent(t);
    const agent = await authorize(
      { agent_identifier: `erc8004:tempo:${agentId}`, per_tx_cap_usd: '5', per_day_cap_usd: '20', elevated_per_tx_cap_usd: '15', elevated_per_day_cap_usd: '60' },
      undefined,
      { evm: agentOwner },
    );
    await expectRefused(await agentPay(agent, { amount: '10' }), 403, 'PER_TX_CAP_EXCEEDED');
    // Five micro-payments of its own earn the agent feedback (written here as the job would), not a tier.
    for (let i = 0; i < 5; i++) expect((await agentPay(agent, { amount: '0.01' })).status).toBe(200);
    const written = { status: 'written' as const, chainReference: '0x01', writtenAt: new Date() };
    const own = await t.database.db.update(reputationWrites).set(written).where(eq(reputationWrites.subject, agentId.toString())).returning();
    expect(own.map((w) => w.writeType)).toEqual(Array(5).fill('agent-pay'));
    await expectRefused(await agentPay(agent, { amount: '10' }), 403, 'PER_TX_CAP_EXCEEDED');
    // Five escrows it settled as the worker, paid by five other employers, make it `established`.
    for (let i = 0; i < 5; i++) {
      const write = { kind: 'erc8004_feedback', writeType: 'escrow-settled', subject: agentId.toString(), sourceType: 'test', sourceId: `seed-${i}` } as const;
      await enqueueReputationWrite(t.database.db, { ...write, payer: `employer:${randomUUID()}` });
    }
    await t.database.db.update(reputationWrites).set(written).where(eq(reputationWrites.sourceType, 'test'));
    expect((await agentPay(agent, { amount: '10' })).status).toBe(200);

    const row = { elevatedPerTxCap: 15n, elevatedPerDayCap: 60n, perTxCap: 5n, perDayCap: 20n, capHalvedAt: null } as AuthorizationRow;
    expect(effectiveCaps(row, 'trusted')).toEqual({ perTx: 15n, perDay: 60n, elevated: true });
    expect(effectiveCaps(row, 'new')).toEqual({ perTx: 5n, perDay: 20n, elevated: false });
    expect(effectiveCaps({ ...row, capHalvedAt: new Date(), perTxCap: 2n }, 'established')).toEqual({ perTx: 2n, perDay: 20n, elevated: false });
  });
});


describe('reservations a crash left behind', () => {
  it('are paid when their transfer mined, and released when it never went out', async () => {
    const agent = await authorize();
    const accountId = await treasury.accountId(employerId);
    const to = recipient();
    // The transfer went out and mined, then the process died before recording it.
    const mined = await t.chains!.tempo.transferFromTreasury(accountId, to, 700_000n, `0x${'00'.repeat(32)}`);
    const old = new Date(Date.now() - 10 * 60_000);
    const base = { authorizationId: agent.authorization.id, employerId, recipientWallet: to, status: 'reserved' as const, createdAt: old };
    const [landed] = await t.database.db.insert(agentPayCalls).values({ ...base, amount: 700_000n, txHash: mined.txHash }).returning();
    const [unsent] = await t.database.db.insert(agentPayCalls).values({ ...base, amount: 900_000n }).returning();
    const [fresh] = await t.database.db.insert(agentPayCalls).values({ ...base, amount: 100_000n, createdAt: new Date() }).returning();

    expect(await agentPayService(t).reconcileStale()).toMatchObject({ paid: 1, released: 1 });
    const status = async (id: string) => (await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.id, id)))[0]!.status;
    expect(await status(landed!.id)).toBe('paid');
    expect(await status(unsent!.id)).toBe('released');
    expect(await status(fresh!.id)).toBe('reserved'); // may still be in flight
    expect(await agentPayService(t).reconcileStale()).toMatchObject({ paid: 0, released: 0 });
  });
});

describe('200 concurrent payments against a per-day cap', () => {
  it('pays exactly the cap and refuses the rest with PER_DAY_CAP_EXCEEDED', async () => {
    const agent = await authorize({ per_tx_cap_usd: '1', per_day_cap_usd: '10', velocity_per_minute: 600 });
    const service = agentPayService(t);
    const before = (await treasury.account(employerId)).available;
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const body = JSON.stringify({ i });
        const headers = new Headers(await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path: PAY, body }));
        return service
          .pay({
            identifier: agent.identifier,
            employerId,
            recipient: recipient(),
            amount: 1_000_000n,
            reference: null,
            idempotencyKey: null,
            proof: { method: 'POST', pathWithQuery: PAY, headers, body: new TextEncoder().encode(body) },
            feePaymentId: null,
          })
          .then(() => 'paid')
          .catch((error: { code?: string }) => error.code ?? String(error));
      }),
    );
    const counts = outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {});
    expect(counts).toEqual({ paid: 10, PER_DAY_CAP_EXCEEDED: 190 });
    expect(before - (await treasury.account(employerId)).available).toBe(10_000_000n);
    const paid = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.authorizationId, agent.authorization.id));
    expect(paid.filter((c) => c.status === 'paid')).toHaveLength(10);
  });
});

describe('charge before acting', () => {
  it('two calls at once from a payer who can cover one fee: one payment, the other refused before it moves money', async () => {
    const agent = await authorize();
    const poor = await proofMaker(t, server.url, 'A', '0.05');
    const recipients = [recipient(), recipient()];
    const calls = await Promise.all(
      recipients.map(async (to) => {
        const body = JSON.stringify({ employer_id: employerId, recipient_wallet: to, amount: '1.00', reference: `race-${randomUUID()}` });
        const proof = await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path: PAY, body });
        return { body, headers: { ...proof, ...(await poor.proof(PAY)), 'content-type': 'application/json' } };
      }),
    );
    const before = (await treasury.account(employerId)).available;
    const responses = await Promise.all(calls.map((call) => fetch(`${server.url}${PAY}`, { method: 'POST', ...call })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
    const refused = await json<{ code: string }>(responses.find((r) => r.status === 402)!);
    expect(refused.code).toBe('PAYMENT_SETTLEMENT_FAILED');
    const received = await Promise.all(recipients.map(balanceOf));
    expect(received.sort()).toEqual([0n, 1_000_000n]);
    expect(before - (await treasury.account(employerId)).available).toBe(1_000_000n);
  });

  it('a fee settled whose answer was lost: the same proof and request get the first payment back, never a second', async () => {
    const agent = await authorize();
    const payer = await proofMaker(t, server.url, 'A', '1');
    const to = recipient();
    const body = JSON.stringify({ employer_id: employerId, recipient_wallet: to, amount: '1.00', reference: `redeem-${randomUUID()}` });
    const headers = { ...(await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path: PAY, body })), ...(await payer.proof(PAY)), 'content-type': 'application/json' };
    const send = () => fetch(`${server.url}${PAY}`, { method: 'POST', headers, body });
    const first = await send();
    expect(first.status, await first.clone().text()).toBe(200);
    const firstBody = await json(first);
    const fee = await feeOf(payer.payer);
    await loseAnswer(t, { id: fee.id });
    const before = (await treasury.account(employerId)).available;

    const again = await send();
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await json(again)).toEqual(firstBody);
    expect(await balanceOf(to)).toBe(1_000_000n);
    expect((await treasury.account(employerId)).available).toBe(before);
    const calls = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.authorizationId, agent.authorization.id));
    expect(calls.map((c) => [c.status, c.feePaymentId])).toEqual([['paid', fee.id]]);
    // One fee taken, and the proof is spent now.
    expect(await balanceOf(payer.payer as Address)).toBe(1_000_000n - 50_000n);
    await expectRefused(await send(), 402, 'PAYMENT_ALREADY_USED');
  });
});

describe('a redeemed fee whose first run spent the identity proof but paid nothing', () => {
  it('may present that signature again (and only with that fee), and pays once', async () => {
    const agent = await authorize({ per_tx_cap_usd: '0.5' });
    const payer = await proofMaker(t, server.url, 'A', '1');
    const to = recipient();
    const body = JSON.stringify({ employer_id: employerId, recipient_wallet: to, amount: '1.00', reference: `spent-${randomUUID()}` });
    const identity = await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path: PAY, body });
    const headers = { ...identity, ...(await payer.proof(PAY)), 'content-type': 'application/json' };
    const send = () => fetch(`${server.url}${PAY}`, { method: 'POST', headers, body });
    // The first run checks the proof (spending its signature) and stops before any call is recorded:
    // what a crash at that moment leaves, once its answer is lost.
    await expectRefused(await send(), 403, 'PER_TX_CAP_EXCEEDED');
    await loseAnswer(t, { payer: payer.payer });
    const raised = await t.request('PATCH', `/api/employers/${employerId}/agents/authorizations/${agent.authorization.id}`, { token: owner, body: { per_tx_cap_usd: '5' } });
    expect(raised.status, await raised.clone().text()).toBe(200);

    const again = await send();
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await balanceOf(to)).toBe(1_000_000n);
    // The signature is still spent for any other request, paid by another fee.
    const other = await proofMaker(t, server.url, 'A', '1');
    await expectRefused(await fetch(`${server.url}${PAY}`, { method: 'POST', headers: { ...headers, ...(await other.proof(PAY)) }, body }), 401, 'PROOF_REPLAYED');
    expect(await balanceOf(to)).toBe(1_000_000n);
  });
});

describe('a redeemed fee whose call did not pay', () => {
  it('answers what a fresh call in that state answers, without looking at the proof again', async () => {
    const agent = await authorize();
    const service = agentPayService(t);
    const base = { authorizationId: agent.authorization.id, employerId, recipientWallet: recipient(), amount: 1_000_000n };
    const redeem = (feePaymentId: string) =>
      service
        .pay({
          identifier: agent.identifier,
          employerId,
          recipient: base.recipientWallet as Address,
          amount: base.amount,
          reference: null,
          idempotencyKey: null,
          // A signature already spent: only a call found under the fee can answer.
          proof: { method: 'POST', pathWithQuery: PAY, headers: new Headers({ 'X-Agent-Signature': 'spent' }), body: new Uint8Array() },
          feePaymentId,
          redeemed: true,
        })
        .then(() => ({ status: 200, code: 'PAID' }))
        .catch((error: { status: number; code: string; details?: unknown }) => ({ status: error.status, code: error.code }));
    const call = async (values: Partial<typeof agentPayCalls.$inferInsert>) => {
      const feePaymentId = randomUUID();
      await t.database.db.insert(agentPayCalls).values({ ...base, feePaymentId, ...values });
      return feePaymentId;
    };
    expect(await redeem(await call({ status: 'reserved', txHash: `0x${'ab'.repeat(32)}` }))).toEqual({ status: 502, code: 'TRANSFER_OUTCOME_UNKNOWN' });
    expect(await redeem(await call({ status: 'released', failureReason: 'insufficient treasury balance' }))).toEqual({ status: 422, code: 'INSUFFICIENT_TREASURY_BALANCE' });
    expect(await redeem(await call({ status: 'released', failureReason: 'transfer reverted: Unauthorized' }))).toEqual({ status: 422, code: 'TREASURY_NOT_DELEGATED' });
    expect(await redeem(await call({ status: 'released', failureReason: 'the transfer was never mined' }))).toEqual({ status: 502, code: 'TRANSFER_FAILED' });
    // Nothing recorded for the fee: a normal call, whose spent proof is refused.
    expect(await redeem(randomUUID())).toEqual({ status: 401, code: 'PROOF_MISSING' });
  });
});

describe('the recipient address rule (#33)', () => {
  const upperCase = (address: Address) => `0x${address.slice(2).toUpperCase()}` as Address;

  it('pays an all-upper-case recipient (once a 502) and records and answers it checksummed', async () => {
    const agent = await authorize();
    const to = recipient();
    const response = await agentPay(agent, { to: upperCase(to), amount: '1.25' });
    expect(response.status, await response.clone().text()).toBe(200);
    const result = await json<{ recipient: string; tx_hash: string }>(response);
    expect(result.recipient).toBe(to);
    expect(await balanceOf(to)).toBe(1_250_000n);
    const [call] = await t.database.db.select().from(agentPayCalls).where(eq(agentPayCalls.txHash, result.tx_hash));
    expect(call!.recipientWallet).toBe(to);
  });

  it('refuses a mixed-case recipient whose checksum is wrong with 400 naming recipient_wallet', async () => {
    const agent = await authorize();
    // 0x5FbDB2315678afecb367f032d93F642f64180aa3 with one letter's case flipped.
    const body = await expectRefused(await agentPay(agent, { to: '0x5fbDB2315678afecb367f032d93F642f64180aa3' }), 400, 'VALIDATION_ERROR');
    expect(body).toMatchObject({ field: 'recipient_wallet', error: expect.stringContaining('EIP-55') });
  });

  it('keeps an allowlist entry in its EIP-55 spelling, whatever spelling it was given in, and matches any spelling of the recipient', async () => {
    const to = recipient();
    const agent = await authorize({ allowed_recipients: [upperCase(to)] });
    const shown = await t.request('GET', `/api/employers/${employerId}/agents/authorizations/${agent.authorization.id}`, { token: owner });
    expect((await json<{ allowed_recipients: string[] }>(shown)).allowed_recipients).toEqual([to]);
    for (const spelling of [to.toLowerCase() as Address, upperCase(to)]) {
      const response = await agentPay(agent, { to: spelling });
      expect(response.status, await response.clone().text()).toBe(200);
    }
  });
});

/** The one fee payment a payer made. */
async function feeOf(payer: string): Promise<{ id: string }> {
  const { rows } = await t.database.pool.query<{ id: string }>('SELECT id FROM payments WHERE lower(payer) = lower($1)', [payer]);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

