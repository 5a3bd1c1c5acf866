import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders, type AgentSigner } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, type PayingFetch } from '../../../test/support/pay.js';
import { TreasuryService } from '../treasury/service.js';
import { escrows } from './tables.js';

/**
 * An escrow's expiry on the service clock: once local mode's dev clock moved past `expires_at`
 * (the service and the chains together), delivery is refused and the expiry sweep refunds it.
 * Its own app: the clock never goes back.
 */
const USD = 1_000_000n;
let t: TestApp;
let server: LoopbackServer;
let pay: PayingFetch;
let owner: string;
let employerId: string;
let accountId: bigint;

type Agent = { identifier: string; signer: AgentSigner };

async function signedCall(path: string, body: Record<string, unknown>, agent: Agent) {
  const text = JSON.stringify(body);
  const proof = await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path, body: text });
  return pay(path, { method: 'POST', body: text, headers: proof });
}

const available = async () => (await t.chains!.tempo.treasuryAccount(accountId))!.available;
const statusOf = async (id: string) => (await t.database.db.select({ status: escrows.status }).from(escrows).where(eq(escrows.id, id)))[0]!.status;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  pay = (await railA(t, server.url, '10')).pay;
  owner = await t.token(`escrow-clock-${randomUUID()}`, 'owner@escrow-clock.example');
  employerId = ((await (await t.request('POST', '/api/employers', { token: owner, body: { name: 'Escrow Clock Co' } })).json()) as { id: string }).id;
  accountId = await new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers }).accountId(employerId);
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '100' } });
  await t.chains!.tempo.depositToTreasury(accountId, 100n * USD);
  await t.request('POST', '/api/dev/faucet', { body: { network: t.chains!.solana.network, address: t.chains!.solana.serviceAddress, amount: '100' } });
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('an escrow past its expiry by the service clock', () => {
  it('refuses delivery (403 ESCROW_EXPIRED) and is refunded by the expiry sweep, once', async () => {
    const created = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, {
      token: owner,
      body: { label: 'Escrow bot', agent_identifier: `poster-${randomUUID()}`, per_tx_cap_usd: '50', per_day_cap_usd: '500' },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const authorization = (await created.json()) as { agent_identifier: string; hmac_secret: string };
    const poster = { identifier: authorization.agent_identifier, signer: { hmac: authorization.hmac_secret } };
    const evm = privateKeyToAccount(generatePrivateKey());
    const worker = { identifier: evm.address.toLowerCase(), signer: { evm } };
    const wallet = getBase58Decoder().decode(Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url'));

    const before = await available();
    const postedResponse = await signedCall('/api/mpp/escrow/post', {
      employer_id: employerId,
      worker_wallet_address: wallet,
      worker_agent_identifier: worker.identifier,
      amount_usdc: '5.00',
      rubric_prompt: 'Write a short note.\nmust include: ledger',
      expiry_hours: 1,
    }, poster);
    expect(postedResponse.status, await postedResponse.clone().text()).toBe(200);
    const escrowId = ((await postedResponse.json()) as { escrow_id: string }).escrow_id;
    expect(before - (await available())).toBe(5n * USD);

    // Not yet due: the sweep leaves it open.
    await t.services.onChain!.escrow.reconcile();
    expect(await statusOf(escrowId)).toBe('posted');

    // An hour and a second later for the service and the chains alike (nothing rewritten in the row).
    expect((await t.request('POST', '/api/dev/clock/advance', { body: { seconds: 3601 } })).status).toBe(200);
    const late = await signedCall('/api/mpp/escrow/deliver', { escrow_id: escrowId, deliverable_uri: 'data:text/plain;base64,bGVkZ2Vy' }, worker);
    expect({ status: late.status, code: ((await late.json()) as { code: string }).code }).toEqual({ status: 403, code: 'ESCROW_EXPIRED' });

    await t.services.onChain!.escrow.reconcile();
    await t.services.onChain!.escrow.whenIdle();
    expect(await statusOf(escrowId)).toBe('expired_refunded');
    expect(await available()).toBe(before);
    expect(await t.chains!.solana.escrowBalance(escrowId)).toBe(0n);
  });
});
