import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpcFromTransport,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address as SolanaAddress,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { erc20Abi, getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders, type AgentSigner } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { loseAnswer, proofMaker, railA, type PayingFetch } from '../../../test/support/pay.js';
import { EscrowStatus, LOCAL_ESCROW_PROGRAM_ID, releaseInstruction, submitDeliverableInstruction } from '../../chains/solana/escrow-program/index.js';
import { embeddedSolanaTransport } from '../../chains/embedded/solana-transport.js';
import type { SolanaChain } from '../../chains/solana/solana-chain.js';
import { notifications } from '../notifications/tables.js';
import { reputationWrites } from '../reputation/tables.js';
import { escrows } from './tables.js';
import { createLogger } from '../../log.js';
import { createAiProvider } from '../../providers/ai/index.js';
import { AgentRequestVerifier } from '../agents/request-proof.js';
import { SecretBox } from '../agents/secret-box.js';
import { AgentsService } from '../agents/service.js';
import { ReputationService } from '../reputation/service.js';
import { TreasuryService } from '../treasury/service.js';
import { EscrowService, escrowOptionsFrom } from './service.js';
import { inspectSignedDeliverable, uriHash } from './signed-deliverable.js';

/**
 * The escrow end to end on the embedded chains (spec 2.1, 3.1, 4.4): post (treasury -> vault),
 * deliver (fetched once, hashed, judged in the background), settlement to the worker, refund on
 * rejection and expiry (balances checked), the employer's decision on an escalation, the worker's
 * own signed delivery, and a crash between verdict and payout that pays exactly once.
 */
const USD = 1_000_000n;
const LEDGER_SHA256 = createHash('sha256').update('ledger').digest('hex');
let t: TestApp;
let server: LoopbackServer;
let files: LoopbackServer & { hits: number };
let pay: PayingFetch;
let payA: PayingFetch;
let owner: string;
let employerId: string;
let accountId: bigint;
let solana: SolanaChain;

type Json = Record<string, unknown>;
type Poster = { identifier: string; signer: AgentSigner };
type Worker = { wallet: SolanaAddress; identifier: string; signer: AgentSigner | null; kit: KeyPairSigner };
const json = async <T = Json>(response: Response) => (await response.json()) as T;
const must = (rubric: string) => `Write a short note for the payroll team.\nmust include: ${rubric}`;

/**
 * A worker with a Solana wallet, identified by an EVM address that signs its proofs (the default),
 * by its wallet's own key (`solana`), or by an opaque name with no key (`opaque`: no signer).
 */
async function newWorker(identity: 'evm' | 'solana' | 'opaque' = 'evm'): Promise<Worker> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const wallet = getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')) as SolanaAddress;
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const kit = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(seed));
  if (identity === 'solana') return { wallet, identifier: `solana:${wallet}`, signer: { ed25519: privateKey }, kit };
  if (identity === 'opaque') return { wallet, identifier: `worker-${randomUUID()}`, signer: null, kit };
  const evm = privateKeyToAccount(generatePrivateKey());
  return { wallet, identifier: evm.address.toLowerCase(), signer: { evm }, kit };
}

async function authorize(settings: Json = {}, signer?: { identifier: string; key: KeyObject }): Promise<Poster> {
  const body = { label: 'Escrow bot', agent_identifier: signer?.identifier ?? `poster-${randomUUID()}`, per_tx_cap_usd: '50', per_day_cap_usd: '500', velocity_per_minute: 100, ...settings };
  const response = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, { token: owner, body });
  expect(response.status, await response.clone().text()).toBe(201);
  const created = await json<{ agent_identifier: string; hmac_secret: string | null }>(response);
  return { identifier: created.agent_identifier, signer: signer ? { ed25519: signer.key } : { hmac: created.hmac_secret! } };
}

async function signedCall(path: string, body: Json, agent: { identifier: string; signer: AgentSigner | null }, via = pay, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  const proof = agent.signer ? await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path, body: text }) : { 'X-Agent-Identifier': agent.identifier };
  return via(path, { method: 'POST', body: text, headers: { ...proof, ...headers } });
}

function post(poster: Poster, worker: Worker, overrides: Json = {}) {
  return signedCall('/api/mpp/escrow/post', {
    employer_id: employerId,
    worker_wallet_address: worker.wallet,
    worker_agent_identifier: worker.identifier,
    amount_usdc: '10.00',
    rubric_prompt: must('ledger'),
    ...overrides,
  }, poster);
}

async function posted(poster: Poster, worker: Worker, overrides: Json = {}): Promise<Json & { escrow_id: string }> {
  const response = await post(poster, worker, overrides);
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
}

const deliver = (worker: Worker, escrowId: string, uri: string) => signedCall('/api/mpp/escrow/deliver', { escrow_id: escrowId, deliverable_uri: uri }, worker);
const dataUri = (text: string) => `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
const available = async () => (await t.chains!.tempo.treasuryAccount(accountId))!.available;
const row = async (id: string) => (await t.database.db.select().from(escrows).where(eq(escrows.id, id)))[0]!;

/** Waits for the background judge and payout (the app's own escrow service) to end in one of `statuses`. */
async function until(id: string, statuses: string[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await row(id);
    if (statuses.includes(current.status) || (statuses.includes('escalated') && current.escalatedAt)) return current;
    if (Date.now() > deadline) throw new Error(`escrow ${id} is ${current.status}, not ${statuses.join('|')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Another process's escrow service over the same database and chains (a restart). */
function restartedService(solanaPort: SolanaChain = solana) {
  const log = createLogger('silent');
  const agents = new AgentsService({
    database: t.database,
    employers: t.services.employers,
    secrets: new SecretBox({ configured: t.config.agentSecretsKey, dataDir: t.config.dataDir }),
  });
  return new EscrowService({
    database: t.database,
    verifier: new AgentRequestVerifier({ database: t.database, agents, tempo: t.chains!.tempo }),
    employers: t.services.employers,
    tempo: t.chains!.tempo,
    solana: solanaPort,
    reputation: new ReputationService({ database: t.database, chains: t.chains!, serviceSlug: t.config.serviceSlug }),
    ai: createAiProvider(t.config.ai, log),
    ...escrowOptionsFrom(t.config),
    log,
  });
}

beforeAll(async () => {
  t = await startTestApp({ ESCROW_FETCH_ALLOW_HOSTS: '127.0.0.1' }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  solana = t.chains!.solana;
  pay = (await railA(t, server.url, '40')).pay;
  payA = pay;
  owner = await t.token(`escrow-${randomUUID()}`, 'owner@escrow.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Escrow Co' } }))).id;
  accountId = await new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers }).accountId(employerId);
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '1000' } });
  await t.chains!.tempo.depositToTreasury(accountId, 1000n * USD);
  // The service's Solana float that funds escrow custody (local mode's demo seed tops it up too).
  await t.request('POST', '/api/dev/faucet', { body: { network: solana.network, address: solana.serviceAddress, amount: '1000' } });
  // Deliverables served from loopback (allowed by ESCROW_FETCH_ALLOW_HOSTS in this app only).
  let hits = 0;
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    hits++;
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`report for ${request.url}: the ledger balances`);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  files = {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
    get hits() {
      return hits;
    },
  } as LoopbackServer & { hits: number };
});

afterAll(async () => {
  await files?.close();
  await server?.close();
  await t?.close();
});

describe('POST /api/mpp/escrow/post', () => {
  it('answers 402 before anything else, and 401 without X-Agent-Identifier', async () => {
    expect((await fetch(`${server.url}/api/mpp/escrow/post`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(402);
    const worker = await newWorker();
    const body = { employer_id: employerId, worker_wallet_address: worker.wallet, worker_agent_identifier: worker.identifier, amount_usdc: '1.00', rubric_prompt: must('ledger') };
    const response = await pay('/api/mpp/escrow/post', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(401);
    expect((await json(response)).code).toBe('AGENT_IDENTIFIER_MISSING');
  });

  it('locks the amount: treasury down, vault up, every field of 2.1', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const before = await available();
    const body = await posted(poster, worker, { amount_usdc: '12.50', expiry_hours: 48 });
    expect(body).toMatchObject({
      status: 'posted',
      applied_expiry_hours: 48,
      requested_expiry_hours: 48,
      worker_reputation_tier: 'unknown',
      worker_attestation_count: 0,
    });
    expect(Object.keys(body).sort()).toEqual(
      ['applied_expiry_hours', 'escrow_id', 'escrow_pda', 'expires_at', 'initialize_signature', 'requested_expiry_hours', 'solana_explorer_urls', 'status', 'worker_attestation_count', 'worker_reputation_tier'].sort(),
    );
    const hours = (Date.parse(body.expires_at as string) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(47.9);
    expect(hours).toBeLessThanOrEqual(48);
    expect(body.escrow_pda).toBe((await solana.escrowAccounts(body.escrow_id)).state);
    expect(await solana.escrowBalance(body.escrow_id)).toBe(12_500_000n);
    // The program holds the terms: who is paid, how much, until when; the service's key only validates.
    expect(await solana.escrowState(body.escrow_id)).toMatchObject({
      status: EscrowStatus.Funded,
      amount: 12_500_000n,
      worker: worker.wallet,
      expiresAt: BigInt(Math.floor(Date.parse(body.expires_at as string) / 1000)),
      validator: solana.escrowValidatorAddress,
    });
    expect(before - (await available())).toBe(12_500_000n);
    expect((body.solana_explorer_urls as Json).initialize).toContain(body.initialize_signature as string);
  });

  it.each([
    ['amount_usdc', { amount_usdc: '100.01' }],
    ['amount_usdc', { amount_usdc: '0' }],
    ['amount_usdc', { amount_usdc: 12 }],
    ['rubric_prompt', { rubric_prompt: 'x'.repeat(2001) }],
    ['rubric_prompt', { rubric_prompt: '' }],
    ['expiry_hours', { expiry_hours: 0 }],
    ['expiry_hours', { expiry_hours: 169 }],
    ['expiry_hours', { expiry_hours: 1.5 }],
    ['worker_wallet_address', { worker_wallet_address: '0x52908400098527886E0F7030069857D2E4169EE7' }],
  ])('400 names %s', async (field, overrides) => {
    const response = await post(await authorize(), await newWorker(), overrides);
    expect(response.status).toBe(400);
    expect(JSON.stringify(await json(response))).toContain(field);
  });

  it('accepts the bounds: 100.00, 2000 characters, 1 and 168 hours', async () => {
    const poster = await authorize({ per_tx_cap_usd: '100', per_day_cap_usd: '1000' });
    const worker = await newWorker();
    expect((await post(poster, worker, { amount_usdc: '100.00', rubric_prompt: `must include: a\n${'x'.repeat(1984)}`, expiry_hours: 1 })).status).toBe(200);
    expect((await post(poster, worker, { amount_usdc: '0.01', expiry_hours: 168 })).status).toBe(200);
  });

  it('403 for an agent the employer did not authorize, and over the per-tx cap (fee kept), nothing locked', async () => {
    const before = await available();
    const stranger = await post({ identifier: `stranger-${randomUUID()}`, signer: { hmac: 'nope' } }, await newWorker());
    expect({ status: stranger.status, code: (await json(stranger)).code }).toEqual({ status: 403, code: 'AGENT_NOT_AUTHORIZED' });
    const capped = await post(await authorize({ per_tx_cap_usd: '5' }), await newWorker(), { amount_usdc: '5.01' });
    expect({ status: capped.status, code: (await json(capped)).code }).toEqual({ status: 403, code: 'PER_TX_CAP_EXCEEDED' });
    expect(await available()).toBe(before);
  });

  it('counts escrows toward the rolling 24 h cap shared with agent/pay', async () => {
    const poster = await authorize({ per_tx_cap_usd: '20', per_day_cap_usd: '30' });
    const worker = await newWorker();
    expect((await post(poster, worker, { amount_usdc: '20' })).status).toBe(200);
    const over = await post(poster, worker, { amount_usdc: '11' });
    expect({ status: over.status, code: (await json(over)).code }).toEqual({ status: 403, code: 'PER_DAY_CAP_EXCEEDED' });
    expect((await post(poster, worker, { amount_usdc: '10' })).status).toBe(200);
  });

  it('requires the poster\'s identity proof', async () => {
    const poster = await authorize();
    const response = await post({ ...poster, signer: { hmac: 'not-the-secret' } }, await newWorker());
    expect({ status: response.status, code: (await json(response)).code }).toEqual({ status: 401, code: 'PROOF_INVALID' });
  });

  it('503 when the Solana custody float cannot take the amount, before any debit', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const path = '/api/mpp/escrow/post';
    const body = JSON.stringify({ employer_id: employerId, amount_usdc: '10.00' });
    const headers = await agentProofHeaders(poster.identifier, poster.signer, { method: 'POST', path, body });
    // Another process whose view of the service's Solana float is empty.
    const shortFloat = new Proxy(solana, {
      get: (target, key) => (key === 'tokenBalance' ? async () => 0n : Reflect.get(target, key, target)),
    });
    const before = await available();
    const refused = restartedService(shortFloat).post({
      identifier: poster.identifier,
      employerId,
      workerWalletAddress: worker.wallet,
      workerAgentIdentifier: worker.identifier,
      amount: 10n * USD,
      rubricPrompt: must('ledger'),
      expiryHours: 24,
      proof: { method: 'POST', pathWithQuery: path, headers: new Headers(headers), body: new TextEncoder().encode(body) },
      feePaymentId: null,
    });
    await expect(refused).rejects.toMatchObject({ status: 503, code: 'ESCROW_CUSTODY_UNAVAILABLE' });
    expect(await available()).toBe(before);
    const [failed] = await t.database.db.select().from(escrows).where(eq(escrows.posterAgentIdentifier, poster.identifier));
    expect(failed?.status).toBe('funding_failed');
  });
});

describe('deliver, judge, settle or refund', () => {
  it('approved: the worker is paid exactly the amount, the attestation is queued, the status shows public fields only', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const escrow = await posted(poster, worker, { amount_usdc: '7.25' });
    const treasuryBefore = await available();
    const response = await deliver(worker, escrow.escrow_id, dataUri('The ledger is reconciled.'));
    expect(response.status, await response.clone().text()).toBe(200);
    const delivered = await json(response);
    expect(delivered).toMatchObject({ escrow_id: escrow.escrow_id, content_sha256: createHash('sha256').update('The ledger is reconciled.').digest('hex'), content_bytes: 25 });
    const settled = await until(escrow.escrow_id, ['settled', 'rejected_refunded', 'expired_refunded']);
    expect(settled.status).toBe('settled');
    expect(await solana.tokenBalance(worker.wallet)).toBe(7_250_000n);
    expect(await solana.escrowBalance(escrow.escrow_id)).toBe(0n);
    // On chain: the content's hash (recorded by the validator for a worker without keys), then settled.
    expect(await solana.escrowState(escrow.escrow_id)).toMatchObject({ status: EscrowStatus.Settled, deliverable: delivered.content_sha256 });
    expect(await available()).toBe(treasuryBefore);
    const writes = await t.database.db.select().from(reputationWrites).where(eq(reputationWrites.sourceId, escrow.escrow_id));
    // The employer paid the worker: one party that vouches for it (its tier counts distinct payers).
    expect(writes.map((w) => [w.kind, w.writeType, w.subject, w.payer])).toEqual([['attestation', 'escrow-settled', worker.wallet, `employer:${employerId}`]]);

    const status = await json(await pay(`/api/mpp/escrow/${escrow.escrow_id}/status`));
    expect(Object.keys(status).sort()).toEqual(
      ['amount_usdc', 'deliverable_uri', 'escrow_id', 'expires_at', 'rubric_prompt', 'signatures', 'solana_explorer_urls', 'status', 'validator_confidence', 'validator_reasoning', 'validator_verdict', 'worker_wallet_address'].sort(),
    );
    expect(status).toMatchObject({ status: 'settled', amount_usdc: '7.250000', validator_verdict: 'approved', validator_confidence: 90 });
    const signatures = status.signatures as Record<string, string>;
    expect(Object.keys(signatures).sort()).toEqual(['deliverable', 'initialize', 'settle', 'treasury_debit']);
    expect(JSON.stringify(status)).not.toContain(delivered.content_sha256 as string);
    expect(JSON.stringify(status)).not.toMatch(/offline|model|employer/);
    const [notice] = await t.database.db.select().from(notifications).where(and(eq(notifications.employerId, employerId), eq(notifications.type, 'escrow_settled')));
    expect(notice?.severity).toBe('success');
  });

  it('rejected: the amount goes back to the treasury, the requester gets the refund attestation', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const key = getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
    const poster = await authorize({}, { identifier: `solana:${key}`, key: privateKey });
    const worker = await newWorker();
    const before = await available();
    const escrow = await posted(poster, worker, { amount_usdc: '9.00' });
    expect(before - (await available())).toBe(9n * USD);
    expect((await deliver(worker, escrow.escrow_id, dataUri('Nothing about the books.'))).status).toBe(200);
    const done = await until(escrow.escrow_id, ['settled', 'rejected_refunded']);
    expect(done).toMatchObject({ status: 'rejected_refunded', validatorVerdict: 'rejected' });
    expect(await available()).toBe(before);
    expect(await solana.tokenBalance(worker.wallet)).toBe(0n);
    const writes = await t.database.db.select().from(reputationWrites).where(eq(reputationWrites.sourceId, escrow.escrow_id));
    // The requester got its own money back: nobody vouches for anyone.
    expect(writes.map((w) => [w.kind, w.writeType, w.subject, w.payer])).toEqual([['attestation', 'escrow-refunded', key, null]]);
    expect(Object.keys(done.signatures as Json).sort()).toEqual(['deliverable', 'initialize', 'refund', 'treasury_debit', 'treasury_refund']);
  });

  it('expired: deliver is 403, the expiry job refunds an open escrow, once', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const before = await available();
    const escrow = await posted(poster, worker, { expiry_hours: 1 });
    // An hour later: the service's clock moved by rewriting the deadline, the chain's by advancing it.
    await t.database.db.update(escrows).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(escrows.id, escrow.escrow_id));
    await expireOnChain(escrow.escrow_id);
    const late = await deliver(worker, escrow.escrow_id, dataUri('ledger'));
    expect({ status: late.status, code: (await json(late)).code }).toEqual({ status: 403, code: 'ESCROW_EXPIRED' });
    const service = restartedService();
    await service.reconcile();
    await service.reconcile();
    expect((await row(escrow.escrow_id)).status).toBe('expired_refunded');
    expect(await available()).toBe(before);
    expect(await solana.escrowBalance(escrow.escrow_id)).toBe(0n);
  });

  it('expired: a stranger refunds on chain first; the service still credits the treasury, once', async () => {
    const worker = await newWorker();
    const before = await available();
    const escrow = await posted(await authorize(), worker, { expiry_hours: 1 });
    await t.database.db.update(escrows).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(escrows.id, escrow.escrow_id));
    await expireOnChain(escrow.escrow_id);
    expect((await strangerReleases(escrow.escrow_id, 'refund')).error).toBeUndefined();
    expect(await solana.escrowState(escrow.escrow_id)).toMatchObject({ status: EscrowStatus.Refunded });
    const service = restartedService();
    await service.reconcile();
    await service.reconcile();
    const done = await row(escrow.escrow_id);
    expect(done.status).toBe('expired_refunded');
    expect(await available()).toBe(before);
    // The vault's refund was the stranger's transaction; the treasury's credit is ours.
    expect(Object.keys(done.signatures as Json).sort()).toEqual(['initialize', 'treasury_debit', 'treasury_refund']);
  });

  it('an approval that reaches the chain after a stranger refunded the expired escrow ends refunded', async () => {
    const worker = await newWorker();
    const before = await available();
    // Longer than the hours the tests above moved the chain's clock, so it can be delivered on chain.
    const escrow = await posted(await authorize(), worker, { expiry_hours: 6, rubric_prompt: 'Make it delightful.' });
    expect((await deliver(worker, escrow.escrow_id, dataUri('A delightful ledger.'))).status).toBe(200);
    await until(escrow.escrow_id, ['escalated']);
    // The chain's clock passes the expiry before the owner decides (the service's has not yet).
    await expireOnChain(escrow.escrow_id);
    expect((await strangerReleases(escrow.escrow_id, 'settle')).error).toMatch(/code: 8\b/); // no verdict on chain: not settleable
    expect((await strangerReleases(escrow.escrow_id, 'refund')).error).toBeUndefined();
    const decided = await t.request('POST', `/api/employers/${employerId}/escrows/${escrow.escrow_id}/decision`, { token: owner, body: { verdict: 'approved', reasoning: 'Late.' } });
    expect(decided.status).toBe(200);
    expect((await until(escrow.escrow_id, ['expired_refunded'])).status).toBe('expired_refunded');
    expect(await solana.tokenBalance(worker.wallet)).toBe(0n);
    expect(await available()).toBe(before);
  });

  it('refuses another agent (403), an unknown escrow (404) and a second delivery (409)', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const escrow = await posted(poster, worker);
    const impostor = await deliver({ ...worker, identifier: `impostor-${randomUUID()}` }, escrow.escrow_id, dataUri('ledger'));
    expect({ status: impostor.status, code: (await json(impostor)).code }).toEqual({ status: 403, code: 'AGENT_MISMATCH' });
    const unknown = await deliver(worker, randomUUID(), dataUri('ledger'));
    expect({ status: unknown.status, code: (await json(unknown)).code }).toEqual({ status: 404, code: 'ESCROW_NOT_FOUND' });
    const [first, second] = await Promise.all([deliver(worker, escrow.escrow_id, dataUri('ledger one')), deliver(worker, escrow.escrow_id, dataUri('ledger two'))]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect((await until(escrow.escrow_id, ['settled'])).status).toBe('settled');
    expect(await solana.tokenBalance(worker.wallet)).toBe(10n * USD);
  });

  it('a worker whose identifier names a key must prove it', async () => {
    const worker = await newWorker('solana');
    const escrow = await posted(await authorize(), worker);
    const unsigned = await deliver({ ...worker, signer: null }, escrow.escrow_id, dataUri('ledger'));
    expect(unsigned.status).toBe(401);
    expect((await deliver(worker, escrow.escrow_id, dataUri('ledger'))).status).toBe(200);
  });

  it('fetches from an allowed host once and judges exactly the hashed bytes; refuses private addresses', async () => {
    const worker = await newWorker();
    const escrow = await posted(await authorize(), worker);
    const hitsBefore = files.hits;
    const response = await deliver(worker, escrow.escrow_id, `${files.url}/report.txt`);
    expect(response.status, await response.clone().text()).toBe(200);
    const content = `report for /report.txt: the ledger balances`;
    expect((await json(response)).content_sha256).toBe(createHash('sha256').update(content).digest('hex'));
    await until(escrow.escrow_id, ['settled']);
    expect(files.hits - hitsBefore).toBe(1);
    expect(Buffer.from((await row(escrow.escrow_id)).deliverableContent!).toString()).toBe(content);

    const other = await posted(await authorize(), worker);
    for (const uri of ['http://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/x', 'https://[::1]/x', 'file:///etc/passwd', 'gopher://x']) {
      const refused = await deliver(worker, other.escrow_id, uri);
      expect({ uri, status: refused.status, code: (await json(refused)).code }).toEqual({ uri, status: 400, code: 'DELIVERABLE_URI_REFUSED' });
    }
    expect((await row(other.escrow_id)).status).toBe('posted');
  });
});

describe('escalation to the employer', () => {
  it('a rubric rules cannot judge is escalated; the owner decides; another owner cannot see it', async () => {
    const worker = await newWorker();
    const escrow = await posted(await authorize(), worker, { rubric_prompt: 'Make it delightful.' });
    expect((await deliver(worker, escrow.escrow_id, dataUri('A delightful ledger.'))).status).toBe(200);
    const escalated = await until(escrow.escrow_id, ['escalated']);
    expect(escalated).toMatchObject({ status: 'validating', validatorVerdict: null });
    expect(escalated.escalationReason).toMatch(/confidence 0/);

    const stranger = await t.token(`other-${randomUUID()}`, 'other@escrow.example');
    const strangerEmployer = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: stranger, body: { name: 'Other Co' } }))).id;
    const path = (employer: string) => `/api/employers/${employer}/escrows/${escrow.escrow_id}/decision`;
    const foreign = await t.request('POST', path(strangerEmployer), { token: stranger, body: { verdict: 'approved', reasoning: 'mine now' } });
    expect(foreign.status).toBe(404);
    expect((await t.request('POST', path(employerId), { token: stranger, body: { verdict: 'approved', reasoning: 'x' } })).status).toBe(404);
    expect((await t.request('POST', path(employerId), { token: owner, body: { verdict: 'maybe', reasoning: 'x' } })).status).toBe(400);

    const decided = await t.request('POST', path(employerId), { token: owner, body: { verdict: 'approved', reasoning: 'Delightful indeed.' } });
    expect(decided.status, await decided.clone().text()).toBe(200);
    expect((await until(escrow.escrow_id, ['settled'])).validatorModel).toMatch(/^employer:/);
    expect(await solana.tokenBalance(worker.wallet)).toBe(10n * USD);
    const again = await t.request('POST', path(employerId), { token: owner, body: { verdict: 'rejected', reasoning: 'changed my mind' } });
    expect({ status: again.status, code: (await json(again)).code }).toEqual({ status: 409, code: 'ESCROW_NOT_ESCALATED' });
    const list = await json<Json[]>(await t.request('GET', `/api/employers/${employerId}/escrows`, { token: owner }));
    expect(list.find((e) => e.escrow_id === escrow.escrow_id)).toMatchObject({ status: 'settled', sanitizer_flagged: false });
  });
});

describe('a crash between verdict and payout', () => {
  /** A Solana port that dies in releaseEscrow: after signing and recording (before sending), or after it landed. */
  function crashing(when: 'before-send' | 'after-landing'): SolanaChain {
    return new Proxy(solana, {
      get(target, property, receiver) {
        if (property !== 'releaseEscrow') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<SolanaChain['releaseEscrow']>) => {
          const [escrowId, outcome, options] = args;
          if (when === 'before-send') {
            await target.releaseEscrow(escrowId, outcome, {
              beforeSend: async (signed) => {
                await options?.beforeSend?.(signed);
                throw new Error('killed after recording the signature');
              },
            });
          }
          await target.releaseEscrow(escrowId, outcome, options);
          throw new Error('killed after the payout landed');
        };
      },
    });
  }

  it.each(['before-send', 'after-landing'] as const)('killed %s: the restarted service settles it exactly once', async (when) => {
    const worker = await newWorker();
    const escrow = await posted(await authorize(), worker, { amount_usdc: '3.00' });
    // The judged verdict is in the row; the payout dies with the process.
    await t.database.db.update(escrows).set({ deliverableUri: 'data:,ledger', deliverableSha256: LEDGER_SHA256, deliverableContent: Buffer.from('ledger'), status: 'delivered' }).where(eq(escrows.id, escrow.escrow_id));
    const dying = restartedService(crashing(when));
    await expect(dying.advance(escrow.escrow_id)).rejects.toThrow(/killed/);
    const stuck = await row(escrow.escrow_id);
    expect(stuck).toMatchObject({ status: 'validating', validatorVerdict: 'approved' });
    // The lease of the dead process lapses; the restarted one picks the escrow up.
    await t.database.db.update(escrows).set({ leaseUntil: null }).where(eq(escrows.id, escrow.escrow_id));
    const restarted = restartedService();
    await restarted.reconcile();
    await restarted.reconcile();
    expect((await row(escrow.escrow_id)).status).toBe('settled');
    expect(await solana.tokenBalance(worker.wallet)).toBe(3n * USD);
    const writes = await t.database.db.select().from(reputationWrites).where(eq(reputationWrites.sourceId, escrow.escrow_id));
    expect(writes).toHaveLength(1);
  });

  it('two services advancing the same escrow at once pay it once', async () => {
    const worker = await newWorker();
    const escrow = await posted(await authorize(), worker, { amount_usdc: '4.00' });
    await t.database.db.update(escrows).set({ deliverableUri: 'data:,ledger', deliverableSha256: LEDGER_SHA256, deliverableContent: Buffer.from('ledger'), status: 'delivered' }).where(eq(escrows.id, escrow.escrow_id));
    const [a, b] = [restartedService(), restartedService()];
    await Promise.all([a.advance(escrow.escrow_id), b.advance(escrow.escrow_id), a.reconcile(), b.reconcile()]);
    await a.reconcile();
    expect((await row(escrow.escrow_id)).status).toBe('settled');
    expect(await solana.tokenBalance(worker.wallet)).toBe(4n * USD);
  });
});

const rpc = () => createSolanaRpcFromTransport(embeddedSolanaTransport(t.embeddedChains!.rpc.solana));

/** Moves the chain's clock past the escrow's expiry (for the rest of the file too: it never goes back). */
async function expireOnChain(escrowId: string) {
  const behind = (await solana.escrowState(escrowId))!.expiresAt - t.embeddedChains!.solana.unixTime();
  if (behind >= 0n) await t.embeddedChains!.solana.advanceClock(Number(behind) + 1);
}

/** settle or refund sent by someone with no part in the escrow: the program lets anyone release it. */
async function strangerReleases(escrowId: string, kind: 'settle' | 'refund') {
  const stranger = await generateKeyPairSigner();
  await t.embeddedChains!.solana.airdrop(stranger.address, 1_000_000_000n);
  const state = (await solana.escrowState(escrowId))!;
  const { state: address, vault } = await solana.escrowAccounts(escrowId);
  const owner = kind === 'settle' ? state.worker : state.requester;
  const [destination] = await findAssociatedTokenPda({ owner, mint: solana.mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { value: lifetime } = await rpc().getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(stranger, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getCreateAssociatedTokenIdempotentInstruction({ payer: stranger, ata: destination, owner, mint: solana.mint }),
          releaseInstruction(kind, { program: LOCAL_ESCROW_PROGRAM_ID, state: address, vault, destination, requester: state.requester }),
        ],
        m,
      ),
  );
  return t.embeddedChains!.solana.sendTransaction(getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message)));
}

async function signedDelivery(worker: Worker, escrow: Json & { escrow_id: string }, uri: string, options: { feePayer?: KeyPairSigner; hash?: Uint8Array } = {}) {
  const instruction = submitDeliverableInstruction({
    program: LOCAL_ESCROW_PROGRAM_ID,
    deliverer: worker.kit,
    state: escrow.escrow_pda as SolanaAddress,
    escrowId: escrow.escrow_id,
    hash: options.hash ?? uriHash(uri),
  });
  const { value: lifetime } = await rpc().getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(options.feePayer ?? worker.kit, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions([instruction], m),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

async function fundedWorker(identity: Parameters<typeof newWorker>[0] = 'evm') {
  const worker = await newWorker(identity);
  await t.embeddedChains!.solana.airdrop(worker.wallet, 1_000_000_000n);
  return worker;
}

describe('POST /api/mpp/escrow/deliver-signed', () => {
  const deliverSigned = (worker: Worker, body: Json) => signedCall('/api/mpp/escrow/deliver-signed', body, worker, payA);

  it('broadcasts the worker\'s transaction, then judges and settles', async () => {
    const worker = await fundedWorker();
    const escrow = await posted(await authorize(), worker);
    const uri = dataUri('The ledger, signed by its author.');
    const response = await deliverSigned(worker, { escrow_id: escrow.escrow_id, deliverable_uri: uri, signed_transaction: await signedDelivery(worker, escrow, uri) });
    expect(response.status, await response.clone().text()).toBe(200);
    const body = await json(response);
    const signature = (body.signatures as Record<string, string>).submit_deliverable!;
    expect((await solana.status(signature as never)).state).toBe('landed');
    expect((await until(escrow.escrow_id, ['settled'])).status).toBe('settled');
  });

  it('records a transaction that landed already (sent before a crash lost its record) instead of refusing it as a duplicate', async () => {
    const worker = await fundedWorker();
    const escrow = await posted(await authorize(), worker);
    const uri = dataUri('The ledger, sent twice.');
    const wire = await signedDelivery(worker, escrow, uri);
    const inspected = inspectSignedDeliverable(wire, { programAddress: LOCAL_ESCROW_PROGRAM_ID });
    if (!inspected.ok) throw new Error(inspected.message);
    await solana.submitSigned(inspected.wire, inspected.signature as Signature);
    const response = await deliverSigned(worker, { escrow_id: escrow.escrow_id, deliverable_uri: uri, signed_transaction: wire });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await json(response)).signatures as Record<string, string>).submit_deliverable).toBe(inspected.signature);
    expect((await until(escrow.escrow_id, ['settled'])).status).toBe('settled');
  });

  it('refuses a wrong hash (400), another fee payer (403), garbage (400), another agent (403)', async () => {
    const worker = await fundedWorker();
    const escrow = await posted(await authorize(), worker);
    const uri = dataUri('ledger');
    const cases: [Json, Worker, number, string][] = [
      [{ signed_transaction: await signedDelivery(worker, escrow, uri, { hash: uriHash('data:,other') }) }, worker, 400, 'URI_HASH_MISMATCH'],
      [{ signed_transaction: await signedDelivery(worker, escrow, uri, { feePayer: (await fundedWorker()).kit }) }, worker, 403, 'FEE_PAYER_MISMATCH'],
      [{ signed_transaction: Buffer.from('not a transaction').toString('base64') }, worker, 400, 'TRANSACTION_INVALID'],
      [{ signed_transaction: await signedDelivery(worker, escrow, uri) }, { ...worker, identifier: 'someone-else' }, 403, 'AGENT_MISMATCH'],
    ];
    for (const [fields, agent, status, code] of cases) {
      const response = await deliverSigned(agent, { escrow_id: escrow.escrow_id, deliverable_uri: uri, ...fields });
      expect({ status: response.status, code: (await json(response)).code }).toEqual({ status, code });
    }
    expect((await row(escrow.escrow_id)).status).toBe('posted');
    const missing = await deliverSigned(worker, { escrow_id: escrow.escrow_id, deliverable_uri: uri });
    expect(missing.status).toBe(400);
  });
});

describe('every worker identifier proves itself (issue 26)', () => {
  const refusal = async (response: Response) => {
    const body = await json<{ code: string; field?: string }>(response);
    return { status: response.status, code: body.code, field: body.field };
  };
  const untouched = { status: 'posted', deliverableUri: null, deliveredAt: null, deliveryFeePaymentId: null };

  it('a stranger sending only an EVM worker\'s identifier, or its own signature, cannot deliver; the worker then can', async () => {
    const worker = await newWorker('evm');
    const escrow = await posted(await authorize(), worker);
    const bare = await deliver({ ...worker, signer: null }, escrow.escrow_id, dataUri('Nothing about the books.'));
    expect(await refusal(bare)).toEqual({ status: 401, code: 'PROOF_MISSING', field: 'X-Agent-Signature' });
    const forged = await deliver({ ...worker, signer: { evm: privateKeyToAccount(generatePrivateKey()) } }, escrow.escrow_id, dataUri('Nothing about the books.'));
    expect(await refusal(forged)).toEqual({ status: 401, code: 'PROOF_INVALID', field: 'X-Agent-Signature' });
    expect(await row(escrow.escrow_id)).toMatchObject(untouched);

    // Any spelling of the address: the signature covers the identifier as sent.
    const real = await deliver({ ...worker, identifier: getAddress(worker.identifier) }, escrow.escrow_id, dataUri('The ledger is reconciled.'));
    expect(real.status, await real.clone().text()).toBe(200);
    expect((await until(escrow.escrow_id, ['settled'])).status).toBe('settled');
    expect(await solana.tokenBalance(worker.wallet)).toBe(10n * USD);
  });

  it('a proof is accepted once: the same signed request again is 401 PROOF_REPLAYED', async () => {
    const worker = await newWorker('evm');
    const escrow = await posted(await authorize(), worker);
    const path = '/api/mpp/escrow/deliver';
    // Refused after the proof (a private address), so the escrow is still open to the replay.
    const body = JSON.stringify({ escrow_id: escrow.escrow_id, deliverable_uri: 'https://10.0.0.1/report.txt' });
    const headers = await agentProofHeaders(worker.identifier, worker.signer!, { method: 'POST', path, body });
    expect((await refusal(await pay(path, { method: 'POST', body, headers }))).code).toBe('DELIVERABLE_URI_REFUSED');
    expect(await refusal(await pay(path, { method: 'POST', body, headers }))).toEqual({ status: 401, code: 'PROOF_REPLAYED', field: 'X-Agent-Signature' });
    expect(await row(escrow.escrow_id)).toMatchObject(untouched);
  });

  it('an opaque worker identifier proves itself only through an authorization with the employer', async () => {
    const worker = await newWorker('opaque');
    const escrow = await posted(await authorize(), worker);
    const unproven = await deliver(worker, escrow.escrow_id, dataUri('ledger'));
    expect(await refusal(unproven)).toEqual({ status: 401, code: 'PROOF_UNAVAILABLE', field: 'X-Agent-Signature' });
    const guessed = await deliver({ ...worker, signer: { hmac: 'a-guess' } }, escrow.escrow_id, dataUri('ledger'));
    expect(await refusal(guessed)).toEqual({ status: 401, code: 'PROOF_UNAVAILABLE', field: 'X-Agent-Signature' });
    expect(await row(escrow.escrow_id)).toMatchObject(untouched);

    // Once the employer authorizes it, its HMAC secret proves it.
    const authorized = await authorize({ agent_identifier: worker.identifier });
    expect(await refusal(await deliver({ ...worker, signer: { hmac: 'a-guess' } }, escrow.escrow_id, dataUri('ledger')))).toMatchObject({ status: 401, code: 'PROOF_INVALID' });
    const delivered = await deliver({ ...worker, signer: authorized.signer }, escrow.escrow_id, dataUri('ledger'));
    expect(delivered.status, await delivered.clone().text()).toBe(200);
  });

  it('deliver-signed: the transaction proves the wallet; an identifier other than that wallet\'s key proves itself too', async () => {
    const deliverSigned = (worker: Worker, escrow: Json & { escrow_id: string }, uri: string, wire: string) =>
      signedCall('/api/mpp/escrow/deliver-signed', { escrow_id: escrow.escrow_id, deliverable_uri: uri, signed_transaction: wire }, worker, payA);
    const uri = dataUri('The ledger, signed by its author.');
    const signature = (wire: string) => {
      const inspected = inspectSignedDeliverable(wire, { programAddress: LOCAL_ESCROW_PROGRAM_ID });
      if (!inspected.ok) throw new Error(inspected.message);
      return inspected.signature as Signature;
    };

    const evmWorker = await fundedWorker('evm');
    const escrow = await posted(await authorize(), evmWorker);
    const wire = await signedDelivery(evmWorker, escrow, uri);
    expect(await refusal(await deliverSigned({ ...evmWorker, signer: null }, escrow, uri, wire))).toEqual({ status: 401, code: 'PROOF_MISSING', field: 'X-Agent-Signature' });
    expect((await solana.status(signature(wire))).state).not.toBe('landed');
    expect(await row(escrow.escrow_id)).toMatchObject(untouched);
    const proven = await deliverSigned(evmWorker, escrow, uri, wire);
    expect(proven.status, await proven.clone().text()).toBe(200);

    // A Solana identifier naming another key than the wallet: that key signs the request.
    const other = await fundedWorker('solana');
    const foreignKey = { ...(await fundedWorker('evm')), identifier: other.identifier, signer: other.signer };
    const second = await posted(await authorize(), foreignKey);
    const secondWire = await signedDelivery(foreignKey, second, uri);
    expect(await refusal(await deliverSigned({ ...foreignKey, signer: null }, second, uri, secondWire))).toMatchObject({ status: 401, code: 'PROOF_MISSING' });
    expect((await deliverSigned(foreignKey, second, uri, secondWire)).status).toBe(200);

    // The identifier is the wallet's own key: its signature over the transaction is the proof.
    const walletKey = await fundedWorker('solana');
    const third = await posted(await authorize(), walletKey);
    const unsigned = await deliverSigned({ ...walletKey, signer: null }, third, uri, await signedDelivery(walletKey, third, uri));
    expect(unsigned.status, await unsigned.clone().text()).toBe(200);
  });
});

describe('charge before acting', () => {
  const POST = '/api/mpp/escrow/post';
  const DELIVER = '/api/mpp/escrow/deliver';
  const DELIVER_SIGNED = '/api/mpp/escrow/deliver-signed';

  /** A call carrying this payment proof (and the agent's identity proof), as bytes that can be sent again. */
  async function paidCall(path: string, body: Json, agent: { identifier: string; signer: AgentSigner | null }, payment: Record<string, string>) {
    const text = JSON.stringify(body);
    const proof = agent.signer ? await agentProofHeaders(agent.identifier, agent.signer, { method: 'POST', path, body: text }) : { 'X-Agent-Identifier': agent.identifier };
    const headers = { ...proof, ...payment, 'content-type': 'application/json' };
    return () => fetch(`${server.url}${path}`, { method: 'POST', headers, body: text });
  }

  /** Sends every call at once: one 200 and one 402 PAYMENT_SETTLEMENT_FAILED; answers which one acted. */
  async function race(sends: (() => Promise<Response>)[]): Promise<{ winner: number; loser: number; body: Json }> {
    const responses = await Promise.all(sends.map((send) => send()));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
    const winner = responses.findIndex((r) => r.status === 200);
    expect((await json(responses[1 - winner]!)).code).toBe('PAYMENT_SETTLEMENT_FAILED');
    return { winner, loser: 1 - winner, body: await json(responses[winner]!) };
  }

  /** A redemption: the identical request with the same proof is served the first answer, then the proof is spent. */
  async function redeem(send: () => Promise<Response>, payer: string, firstBody: Json) {
    const fee = await feeOf(payer);
    await loseAnswer(t, { id: fee.id });
    const again = await send();
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await json(again)).toEqual(firstBody);
    const third = await send();
    expect({ status: third.status, code: (await json(third)).code }).toEqual({ status: 402, code: 'PAYMENT_ALREADY_USED' });
    return fee;
  }

  const postBody = (worker: Worker, amount = '2.00') => ({
    employer_id: employerId,
    worker_wallet_address: worker.wallet,
    worker_agent_identifier: worker.identifier,
    amount_usdc: amount,
    rubric_prompt: must('ledger'),
  });
  const postedBy = (poster: Poster) => t.database.db.select().from(escrows).where(eq(escrows.posterAgentIdentifier, poster.identifier));

  it('post: two at once from a payer who can cover one fee lock one escrow; the other locks nothing', async () => {
    const poster = await authorize();
    const workers = [await newWorker(), await newWorker()];
    const poor = await proofMaker(t, server.url, 'A', '0.10');
    const sends = await Promise.all(workers.map(async (worker) => paidCall(POST, postBody(worker), poster, await poor.proof(POST))));
    const before = await available();
    const { winner } = await race(sends);
    expect((await postedBy(poster)).map((r) => [r.workerAgentIdentifier, r.status])).toEqual([[workers[winner]!.identifier, 'posted']]);
    expect(before - (await available())).toBe(2n * USD);
  });

  it('post: a fee settled whose answer was lost gets the first escrow back, never a second', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const payer = await proofMaker(t, server.url, 'A', '1');
    const send = await paidCall(POST, postBody(worker, '3.00'), poster, await payer.proof(POST));
    const first = await send();
    expect(first.status, await first.clone().text()).toBe(200);
    const before = await available();
    const fee = await redeem(send, payer.payer, await json(first));
    expect((await postedBy(poster)).map((r) => [r.status, r.feePaymentId])).toEqual([['posted', fee.id]]);
    expect(await available()).toBe(before);
    expect(await stablecoinOf(payer.payer)).toBe(USD - 100_000n);
  });

  it('deliver: two at once from a payer who can cover one fee deliver one escrow; the other stays posted', async () => {
    const worker = await newWorker();
    const poster = await authorize();
    const pair = [await posted(poster, worker), await posted(poster, worker)];
    const poor = await proofMaker(t, server.url, 'A', '0.02');
    const sends = await Promise.all(pair.map(async (escrow) => paidCall(DELIVER, { escrow_id: escrow.escrow_id, deliverable_uri: dataUri('The ledger.') }, worker, await poor.proof(DELIVER))));
    const { winner, loser } = await race(sends);
    expect(await row(pair[loser]!.escrow_id)).toMatchObject({ status: 'posted', deliverableUri: null, deliveredAt: null, deliveryFeePaymentId: null });
    expect((await row(pair[winner]!.escrow_id)).deliveryFeePaymentId).not.toBeNull();
    await until(pair[winner]!.escrow_id, ['settled']);
  });

  it('deliver: a fee settled whose answer was lost gets the first delivery back; nothing is fetched or paid twice', async () => {
    const worker = await newWorker('solana');
    const escrow = await posted(await authorize(), worker);
    const payer = await proofMaker(t, server.url, 'A', '1');
    const hits = files.hits;
    const send = await paidCall(DELIVER, { escrow_id: escrow.escrow_id, deliverable_uri: `${files.url}/redeem-${randomUUID()}.txt` }, worker, await payer.proof(DELIVER));
    const first = await send();
    expect(first.status, await first.clone().text()).toBe(200);
    // Judged and paid out before the answer is asked for again.
    const settled = await until(escrow.escrow_id, ['settled']);
    const fee = await redeem(send, payer.payer, await json(first));
    expect(files.hits - hits).toBe(1);
    expect(await row(escrow.escrow_id)).toMatchObject({ status: 'settled', deliveredAt: settled.deliveredAt, deliveryFeePaymentId: fee.id });
    expect(await solana.tokenBalance(worker.wallet)).toBe(10n * USD);
    expect(await stablecoinOf(payer.payer)).toBe(USD - 20_000n);
  });

  it('deliver-signed: two at once from a payer who can cover one fee broadcast one transaction; the other is never sent', async () => {
    const worker = await fundedWorker();
    const poster = await authorize();
    const pair = [await posted(poster, worker), await posted(poster, worker)];
    const uri = dataUri('The ledger, signed.');
    const transactions = await Promise.all(pair.map((escrow) => signedDelivery(worker, escrow, uri)));
    const poor = await proofMaker(t, server.url, 'A', '0.02');
    const sends = await Promise.all(
      pair.map(async (escrow, i) => paidCall(DELIVER_SIGNED, { escrow_id: escrow.escrow_id, deliverable_uri: uri, signed_transaction: transactions[i] }, worker, await poor.proof(DELIVER_SIGNED))),
    );
    const { winner, loser } = await race(sends);
    const signatureOf = (wire: string) => {
      const inspected = inspectSignedDeliverable(wire, { programAddress: LOCAL_ESCROW_PROGRAM_ID });
      if (!inspected.ok) throw new Error(inspected.message);
      return inspected.signature as Signature;
    };
    expect((await solana.status(signatureOf(transactions[winner]!))).state).toBe('landed');
    expect((await solana.status(signatureOf(transactions[loser]!))).state).not.toBe('landed');
    expect(await row(pair[loser]!.escrow_id)).toMatchObject({ status: 'posted', deliverableUri: null, deliveredAt: null, deliveryFeePaymentId: null });
    expect((await row(pair[winner]!.escrow_id)).deliveryFeePaymentId).not.toBeNull();
    await until(pair[winner]!.escrow_id, ['settled']);
  });

  it('deliver-signed: a fee settled whose answer was lost gets the first delivery back; nothing is fetched or sent twice', async () => {
    const worker = await fundedWorker();
    const escrow = await posted(await authorize(), worker);
    const payer = await proofMaker(t, server.url, 'A', '1');
    const uri = `${files.url}/redeem-signed-${randomUUID()}.txt`;
    const hits = files.hits;
    const body = { escrow_id: escrow.escrow_id, deliverable_uri: uri, signed_transaction: await signedDelivery(worker, escrow, uri) };
    const send = await paidCall(DELIVER_SIGNED, body, worker, await payer.proof(DELIVER_SIGNED));
    const first = await send();
    expect(first.status, await first.clone().text()).toBe(200);
    const settled = await until(escrow.escrow_id, ['settled']);
    const fee = await redeem(send, payer.payer, await json(first));
    expect(files.hits - hits).toBe(1);
    expect(await row(escrow.escrow_id)).toMatchObject({ status: 'settled', deliveredAt: settled.deliveredAt, deliveryFeePaymentId: fee.id, signatures: settled.signatures });
    expect(await solana.tokenBalance(worker.wallet)).toBe(10n * USD);
    expect(await stablecoinOf(payer.payer)).toBe(USD - 20_000n);
  });
});

describe('a redeemed post fee whose escrow is not posted', () => {
  it('answers what a fresh post in that state answers, without looking at the proof again', async () => {
    const poster = await authorize();
    const worker = await newWorker();
    const redeem = async (status: 'funding' | 'funding_failed') => {
      const feePaymentId = randomUUID();
      await t.database.db.insert(escrows).values({
        employerId,
        posterAgentIdentifier: poster.identifier,
        workerWalletAddress: worker.wallet,
        workerAgentIdentifier: worker.identifier,
        amount: USD,
        rubricPrompt: must('ledger'),
        status,
        requestedExpiryHours: 24,
        appliedExpiryHours: 24,
        workerReputationTier: 'unknown',
        workerAttestationCount: 0,
        expiresAt: new Date(Date.now() + 86_400_000),
        feePaymentId,
      });
      const request = {
        identifier: poster.identifier,
        employerId,
        workerWalletAddress: worker.wallet,
        workerAgentIdentifier: worker.identifier,
        amount: USD,
        rubricPrompt: must('ledger'),
        expiryHours: 24,
        // No proof at all: only the escrow found under the fee can answer.
        proof: { method: 'POST', pathWithQuery: '/api/mpp/escrow/post', headers: new Headers(), body: new Uint8Array() },
        feePaymentId,
        redeemed: true,
      };
      return restartedService()
        .post(request)
        .catch((error: { status: number; code: string }) => ({ status: error.status, code: error.code }));
    };
    expect(await redeem('funding')).toEqual({ status: 502, code: 'ESCROW_FUNDING_PENDING' });
    expect(await redeem('funding_failed')).toEqual({ status: 502, code: 'ESCROW_FUNDING_FAILED' });
  });
});

/** The one fee payment a payer made (its other, refused, proofs are not asked for here). */
async function feeOf(payer: string): Promise<{ id: string }> {
  const { rows } = await t.database.pool.query<{ id: string }>("SELECT id FROM payments WHERE lower(payer) = lower($1) AND status <> 'voided'", [payer]);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}


/** A rail A payer's stablecoin on Tempo. */
const stablecoinOf = (address: string) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });
