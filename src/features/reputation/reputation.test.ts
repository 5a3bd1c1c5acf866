import { randomBytes, randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { getBase58Decoder, type Signature } from '@solana/kit';
import { eq, sql } from 'drizzle-orm';
import { createWalletClient, parseEventLogs, zeroHash, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { erc8004Agent } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { agentReputationRegistryAbi } from '../../chains/evm/abis.js';
import { reputationWrites } from './tables.js';
import type { AppEnv } from '../../http/context.js';
import { handleError } from '../../http/errors.js';
import { HttpMetrics } from '../../http/metrics.js';
import { requestContext } from '../../http/request-context.js';
import { validationHook } from '../../http/validation.js';
import { createLogger } from '../../log.js';
import { claimProof, markServed } from '../../payments/store.js';
import { Faucet } from '../dev/faucet.js';
import type { JobDefinition, JobRunner } from '../../jobs/runner.js';
import { defineReputationJobs } from './jobs.js';
import { reputationRoutes } from './routes.js';
import {
  attestSettledPayment,
  enqueueReputationWrite,
  escrowPayer,
  parseReputationAddress,
  reputationBackoffSeconds,
  reputationTier,
  ReputationService,
  TIER_ESTABLISHED_MIN,
  TIER_NEW_MIN,
  TIER_TRUSTED_MIN,
  type ReputationSummary,
  type ReputationWrite,
} from './service.js';

/**
 * Reputation artifacts end to end on the embedded chains: queued rows written as Solana memos and
 * ERC-8004 feedback, retried with backoff, recovered from a recorded reference without a second
 * write, and read back as the 2.3 summary (and through GET /api/reputation/{address}).
 */
let t: TestApp;
let reputation: ReputationService;
let faucet: Faucet;
let agentOwner: PrivateKeyAccount;

const USD = 1_000_000n;
const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);
/** A random 32-byte key whose base58 form has `length` characters (43 or 44). */
function solanaKey(length = 44): string {
  for (;;) {
    const key = base58(randomBytes(32));
    if (key.length === length) return key;
  }
}

const db = () => t.database.db;
const rowsOf = (sourceId: string) => db().select().from(reputationWrites).where(eq(reputationWrites.sourceId, sourceId));
const rowById = async (id: string) => (await db().select().from(reputationWrites).where(eq(reputationWrites.id, id)))[0]!;
const rowOf = async (sourceId: string) => (await rowsOf(sourceId))[0]!;
/** Makes a row due now (the test's stand-in for waiting out its backoff or lease). */
const makeDue = (id: string) => db().update(reputationWrites).set({ nextAttemptAt: sql`now() - interval '1 second'` }).where(eq(reputationWrites.id, id));
const secondsUntilNextAttempt = async (id: string) =>
  ((await rowById(id)).nextAttemptAt.getTime() - Date.now()) / 1000;

/** Registers an agent owned by a wallet other than the service's (the service cannot rate its own agents). */
const registerForeignAgent = async (owner: PrivateKeyAccount) => (await erc8004Agent(t, { owner, uri: `https://agents.example/${randomUUID()}.json` })).agentId;

/** Every piece of the service wallet's unrevoked feedback for an agent, read from the registry. */
const feedbackOnChain = (agentId: bigint) => t.chains!.tempo.feedbackSummary(agentId, { clients: [t.chains!.tempo.serviceAddress] });

async function drain() {
  const total = { written: 0, retried: 0, failed: 0 };
  for (;;) {
    const round = await reputation.processDue();
    total.written += round.written;
    total.retried += round.retried;
    total.failed += round.failed;
    if (round.written + round.retried + round.failed === 0) return total;
  }
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  reputation = new ReputationService({ database: t.database, chains: { tempo: t.chains!.tempo, solana: t.chains!.solana }, serviceSlug: 'svc', maxAttempts: 3 });
  faucet = new Faucet({ chains: t.embeddedChains! });
  // SOL for the service's attestation fees; gas for the foreign agent's owner.
  await faucet.fund(t.chains!.solana.network, t.chains!.solana.serviceAddress, USD);
  agentOwner = privateKeyToAccount(generatePrivateKey());
  await faucet.fund('eip155:4217', agentOwner.address, USD);
});

afterAll(async () => {
  await t?.close();
});

describe('addresses and tiers', () => {
  it('accepts 32-byte base58 keys (43 or 44 chars) and canonical decimal agent ids, nothing else', () => {
    const key44 = solanaKey(44);
    const key43 = solanaKey(43);
    expect(parseReputationAddress(key44)).toEqual({ kind: 'solana', key: key44 });
    expect(parseReputationAddress(key43)).toEqual({ kind: 'solana', key: key43 });
    expect(parseReputationAddress('42')).toEqual({ kind: 'erc8004', agentId: 42n });
    expect(parseReputationAddress('0')).toEqual({ kind: 'erc8004', agentId: 0n });
    expect(parseReputationAddress((2n ** 256n - 1n).toString())).toEqual({ kind: 'erc8004', agentId: 2n ** 256n - 1n });

    for (const refused of [
      '0xabc',
      'hello',
      base58(randomBytes(31)), // base58, but 31 bytes
      base58(Uint8Array.from([1, ...randomBytes(32)])), // 33 bytes
      '0x5FbDB2315678afecb367f032d93F642f64180aa3', // an EVM address
      '',
      '007',
      '-1',
      (2n ** 256n).toString(),
      `${solanaKey()}1`,
    ]) {
      expect(parseReputationAddress(refused), refused).toBeNull();
    }
  });

  it('maps attestation counts onto tiers: unknown 0, new 1-4, established 5-19, trusted 20+', () => {
    expect([TIER_NEW_MIN, TIER_ESTABLISHED_MIN, TIER_TRUSTED_MIN]).toEqual([1, 5, 20]);
    expect([0, 1, 4, 5, 19, 20, 1000].map(reputationTier)).toEqual(['unknown', 'new', 'new', 'established', 'established', 'trusted', 'trusted']);
  });

  it('backs off from 30 s, doubling, capped at 1 h', () => {
    expect([1, 2, 3, 4, 8, 20].map(reputationBackoffSeconds)).toEqual([30, 60, 120, 240, 3600, 3600]);
  });

  it('refuses to queue a write whose subject does not fit its kind', async () => {
    const base = { writeType: 'payment', sourceType: 'test', sourceId: randomUUID() };
    await expect(enqueueReputationWrite(db(), { ...base, kind: 'attestation', subject: '42' })).rejects.toThrow(RangeError);
    await expect(enqueueReputationWrite(db(), { ...base, kind: 'erc8004_feedback', subject: solanaKey() })).rejects.toThrow(RangeError);
    await expect(enqueueReputationWrite(db(), { ...base, kind: 'erc8004_feedback', subject: '42', score: 101 })).rejects.toThrow(RangeError);
    expect(await rowsOf(base.sourceId)).toHaveLength(0);
  });
});

describe('writing and summarising', () => {
  let worker: string;
  let agentId: bigint;
  let summary: ReputationSummary;
  // The employer whose escrow paid the worker (what the escrow records as the payer).
  const escrowPayer = `employer:${randomUUID()}`;

  beforeAll(async () => {
    worker = solanaKey();
    agentId = await registerForeignAgent(agentOwner);
  });

  it('writes queued attestations on Solana and feedback on Tempo, once per source', async () => {
    const amounts = [1n * USD, 2_500_000n, 250_000n];
    for (const [i, amount] of amounts.entries()) {
      const write = { kind: 'attestation', writeType: 'payment', subject: worker, sourceType: 'payment', sourceId: `sum-p${i}`, amount } as const;
      await enqueueReputationWrite(db(), write);
      await enqueueReputationWrite(db(), write); // a retried event queues nothing more
    }
    await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'escrow-settled', subject: worker, sourceType: 'escrow', sourceId: 'sum-e1', amount: 5n * USD, payer: escrowPayer });
    await enqueueReputationWrite(db(), { kind: 'erc8004_feedback', writeType: 'agent-pay', subject: agentId.toString(), sourceType: 'agent_pay', sourceId: 'sum-a1', amount: 3n * USD, score: 80 });
    await enqueueReputationWrite(db(), { kind: 'erc8004_feedback', writeType: 'payroll', subject: agentId.toString(), sourceType: 'payroll_run', sourceId: 'sum-r1' });
    // The same escrow also earned the worker's agent identity feedback (linked identities count it once).
    await enqueueReputationWrite(db(), {
      kind: 'erc8004_feedback',
      writeType: 'escrow-settled',
      subject: agentId.toString(),
      sourceType: 'escrow',
      sourceId: 'sum-e1',
      amount: 5n * USD,
      score: 90,
      payer: escrowPayer,
    });

    expect(await drain()).toEqual({ written: 7, retried: 0, failed: 0 });

    const attestation = await rowOf('sum-p1');
    expect(attestation).toMatchObject({ status: 'written', attempts: 1, lastError: null });
    expect(attestation.writtenAt).toBeInstanceOf(Date);
    const onSolana = await t.chains!.solana.readAttestation(attestation.chainReference as Signature);
    expect(onSolana).toEqual({
      signer: t.chains!.solana.serviceAddress,
      attestation: { type: 'svc-payment', subject: worker, source: 'payment:sum-p1', amount: '2500000' },
    });

    const feedback = await rowOf('sum-a1');
    expect(feedback.status).toBe('written');
    const receipt = await t.chains!.tempo.connection.receipt(feedback.chainReference as Hex);
    const [event] = parseEventLogs({ abi: agentReputationRegistryAbi, eventName: 'NewFeedback', logs: receipt!.logs });
    expect(event!.args).toMatchObject({ agentId, clientAddress: t.chains!.tempo.serviceAddress, score: 80, tag1: 'svc-agent-pay', tag2: 'agent_pay' });
    expect(await feedbackOnChain(agentId)).toEqual({ count: 3, averageScore: 90 }); // (80 + 100 + 90) / 3
  });

  it('summarises a Solana key from its written attestations; pending and failed rows do not count', async () => {
    await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'payment', subject: worker, sourceType: 'payment', sourceId: 'sum-pending', amount: 999n });
    await db()
      .update(reputationWrites)
      .set({ nextAttemptAt: sql`now() + interval '1 hour'` })
      .where(eq(reputationWrites.sourceId, 'sum-pending'));
    await db().insert(reputationWrites).values({ kind: 'attestation', writeType: 'payment', subject: worker, sourceType: 'payment', sourceId: 'sum-failed', amount: 777n, status: 'failed', attempts: 8 });

    summary = await reputation.summary(worker);
    expect(summary.subject).toEqual({ solana: worker, tempo_agent_id: null });
    expect(summary.tempo).toBeNull();
    expect(summary.solana).toMatchObject({
      attestationCount: 4,
      byType: { 'svc-payment': 3, 'svc-escrow-settled': 1 },
      totalValueMovedBaseUnits: '8750000',
    });
    expect(summary.solana!.latest).toHaveLength(4);
    expect(summary.solana!.latest[0]).toMatchObject({ signature: expect.any(String), explorer_url: expect.stringContaining('explorer.solana.com/tx/') });
    expect(summary.unified).toMatchObject({
      totalPayments: 3,
      totalValueMovedBaseUnits: '8750000',
      agentFeedbackScore: null,
      agentFeedbackCount: 0,
      workerAttestationCount: 1,
    });
    expect(Date.parse(summary.unified.firstActivityAt!)).toBeLessThanOrEqual(Date.parse(summary.unified.latestActivityAt!));
    expect(Date.parse(summary.last_updated)).toBeGreaterThan(0);
  });

  it("summarises an agent id from the registry, counting only the service's own feedback", async () => {
    // Another client's feedback (a friend of the agent, or a sock puppet) is on chain but not ours.
    const stranger = privateKeyToAccount(generatePrivateKey());
    await faucet.fund('eip155:4217', stranger.address, USD);
    const tempo = t.chains!.tempo;
    const wallet = createWalletClient({ account: stranger, chain: tempo.connection.chain, transport: tempo.connection.transport });
    const hash = await wallet.writeContract({
      address: tempo.contracts.agentReputationRegistry,
      abi: agentReputationRegistryAbi,
      functionName: 'giveFeedback',
      args: [agentId, 0, 'svc-agent-pay', '', '', '', zeroHash],
    });
    await tempo.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    expect((await tempo.feedbackSummary(agentId)).count).toBe(4); // every client

    const agent = await reputation.summary(agentId.toString());
    expect(agent.subject).toEqual({ solana: null, tempo_agent_id: agentId.toString() });
    expect(agent.solana).toBeNull();
    expect(agent.tempo).toMatchObject({ agentId: agentId.toString(), owner: agentOwner.address, feedbackCount: 3, averageScore: 90 });
    expect(agent.tempo!.latest.map((l) => l.type).sort()).toEqual(['svc-agent-pay', 'svc-escrow-settled', 'svc-payroll']);
    expect(agent.unified).toMatchObject({
      totalPayments: 1,
      totalValueMovedBaseUnits: '8000000',
      agentFeedbackScore: 90,
      agentFeedbackCount: 3,
      workerAttestationCount: 0,
    });
  });

  it("includes a linked identity's artifacts, counting an event seen on both chains once", async () => {
    const linked = new ReputationService({
      database: t.database,
      chains: { tempo: t.chains!.tempo, solana: t.chains!.solana },
      serviceSlug: 'svc',
      linkedIdentity: async (address) => (address.kind === 'solana' && address.key === worker ? { erc8004AgentId: agentId } : null),
    });
    const both = await linked.summary(worker);
    expect(both.subject).toEqual({ solana: worker, tempo_agent_id: agentId.toString() });
    expect(both.solana!.attestationCount).toBe(4);
    expect(both.tempo!.feedbackCount).toBe(3);
    // payments p0-p2 and agent pay a1; value 1 + 2.5 + 0.25 + 5 (escrow e1, once) + 3.
    expect(both.unified).toMatchObject({ totalPayments: 4, totalValueMovedBaseUnits: '11750000', agentFeedbackScore: 90, agentFeedbackCount: 3, workerAttestationCount: 1 });
  });

  it('gives tiers from the written rows: the distinct parties who paid the subject', async () => {
    // Of 4 attestations only the escrow's was paid for by someone else; fees the key paid vouch for nothing.
    expect(await reputation.tierOf({ solana: worker })).toEqual({ tier: 'new', count: 1 });
    // The same payer on both chains counts once; the agent's agent-pay and payroll feedback do not count.
    expect(await reputation.tierOf({ solana: worker, erc8004AgentId: agentId })).toEqual({ tier: 'new', count: 1 });
    expect(await reputation.tierOf({ solana: solanaKey() })).toEqual({ tier: 'unknown', count: 0 });
    expect(await reputation.tierOf({})).toEqual({ tier: 'unknown', count: 0 });
  });
});

describe('retries and recovery', () => {
  it('retries a failing write with backoff and gives it up after maxAttempts', async () => {
    // Agent ids are sequential; this one does not exist, so the registry refuses the feedback.
    await enqueueReputationWrite(db(), { kind: 'erc8004_feedback', writeType: 'agent-pay', subject: '999999999', sourceType: 'agent_pay', sourceId: 'fail-1' });
    const { id } = await rowOf('fail-1');

    expect(await reputation.processDue()).toEqual({ written: 0, retried: 1, failed: 0 });
    let row = await rowById(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, pendingReference: null });
    expect(row.lastError).toMatch(/NonexistentAgent|revert/i);
    expect(await secondsUntilNextAttempt(id)).toBeGreaterThan(25);
    expect(await secondsUntilNextAttempt(id)).toBeLessThanOrEqual(30);
    expect(await reputation.processDue()).toEqual({ written: 0, retried: 0, failed: 0 }); // not due yet

    await makeDue(id);
    expect(await reputation.processDue()).toEqual({ written: 0, retried: 1, failed: 0 });
    expect((await rowById(id)).attempts).toBe(2);
    expect(await secondsUntilNextAttempt(id)).toBeGreaterThan(55);
    expect(await secondsUntilNextAttempt(id)).toBeLessThanOrEqual(60);

    await makeDue(id);
    expect(await reputation.processDue()).toEqual({ written: 0, retried: 0, failed: 1 });
    row = await rowById(id);
    expect(row).toMatchObject({ status: 'failed', attempts: 3, chainReference: null });
    expect((await reputation.failedWrites()).map((r) => r.id)).toContain(id);

    await makeDue(id); // a failed row is never picked up again
    expect(await reputation.processDue()).toEqual({ written: 0, retried: 0, failed: 0 });
  });

  it('marks a feedback written from its recorded hash when the earlier attempt landed, without writing again', async () => {
    const agentId = await registerForeignAgent(agentOwner);
    await enqueueReputationWrite(db(), { kind: 'erc8004_feedback', writeType: 'payroll', subject: agentId.toString(), sourceType: 'payroll_run', sourceId: 'landed-evm' });
    const { id } = await rowOf('landed-evm');
    // The earlier attempt: it recorded its hash, broadcast, and crashed before marking the row.
    let hash: Hex | undefined;
    await t.chains!.tempo.giveFeedback(
      { agentId, score: 100, tag1: 'svc-payroll', tag2: 'payroll_run', endpoint: '', feedbackUri: '', feedbackHash: zeroHash },
      { beforeBroadcast: async (signed) => void (hash = signed.hash) },
    );
    await db().update(reputationWrites).set({ pendingReference: hash! }).where(eq(reputationWrites.id, id));
    expect((await feedbackOnChain(agentId)).count).toBe(1);

    expect(await reputation.processDue()).toEqual({ written: 1, retried: 0, failed: 0 });
    expect(await rowById(id)).toMatchObject({ status: 'written', chainReference: hash });
    expect((await feedbackOnChain(agentId)).count).toBe(1);
  });

  it('writes again when the recorded hash was never broadcast', async () => {
    const agentId = await registerForeignAgent(agentOwner);
    await enqueueReputationWrite(db(), { kind: 'erc8004_feedback', writeType: 'payroll', subject: agentId.toString(), sourceType: 'payroll_run', sourceId: 'unsent-evm' });
    const { id } = await rowOf('unsent-evm');
    // The earlier attempt recorded its hash and crashed before broadcasting.
    let hash: Hex | undefined;
    await expect(
      t.chains!.tempo.giveFeedback(
        { agentId, score: 100, tag1: 'svc-payroll', tag2: '', endpoint: '', feedbackUri: '', feedbackHash: zeroHash },
        {
          beforeBroadcast: async (signed) => {
            hash = signed.hash;
            throw new Error('crashed');
          },
        },
      ),
    ).rejects.toThrow('crashed');
    await db().update(reputationWrites).set({ pendingReference: hash! }).where(eq(reputationWrites.id, id));

    expect(await reputation.processDue()).toEqual({ written: 1, retried: 0, failed: 0 });
    const row = await rowById(id);
    expect(row.status).toBe('written');
    expect(row.chainReference).not.toBe(hash);
    expect(row.pendingReference).toBe(row.chainReference);
    expect((await feedbackOnChain(agentId)).count).toBe(1);
  });

  it('waits, without giving up, while the recorded transaction is still pending in the mempool', async () => {
    const agentId = await registerForeignAgent(agentOwner);
    await enqueueReputationWrite(db(), { kind: 'erc8004_feedback', writeType: 'payroll', subject: agentId.toString(), sourceType: 'payroll_run', sourceId: 'in-flight' });
    const { id } = await rowOf('in-flight');
    const pendingHash = `0x${'ab'.repeat(32)}` as Hex;
    // Past the attempt limit already: a give-up now could hide a write that still lands.
    await db().update(reputationWrites).set({ pendingReference: pendingHash, attempts: 5 }).where(eq(reputationWrites.id, id));
    // The automining chain never leaves a transaction pending; a live node's mempool would.
    const connection = t.chains!.tempo.connection;
    const receipt = vi.spyOn(connection, 'receipt').mockResolvedValue(null);
    const lookup = vi.spyOn(connection.publicClient, 'getTransaction').mockResolvedValue({ hash: pendingHash } as never);
    const writes = vi.spyOn(t.chains!.tempo, 'giveFeedback');
    try {
      expect(await reputation.processDue()).toEqual({ written: 0, retried: 1, failed: 0 });
      expect(writes).not.toHaveBeenCalled();
    } finally {
      receipt.mockRestore();
      lookup.mockRestore();
      writes.mockRestore();
    }
    expect(await rowById(id)).toMatchObject({ status: 'pending', pendingReference: pendingHash, lastError: expect.stringContaining('still pending') });
    // Once the node no longer knows it (dropped), the write goes out again.
    await makeDue(id);
    expect(await reputation.processDue()).toEqual({ written: 1, retried: 0, failed: 0 });
    expect((await feedbackOnChain(agentId)).count).toBe(1);
  });

  it('marks an attestation written from its recorded signature when the earlier attempt landed', async () => {
    const subject = solanaKey(43);
    await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'escrow-refunded', subject, sourceType: 'escrow', sourceId: 'landed-sol', amount: 7n });
    const { id } = await rowOf('landed-sol');
    const solana = t.chains!.solana;
    const { signature } = await solana.writeAttestation({ type: 'svc-escrow-refunded', subject, source: 'escrow:landed-sol', amount: '7' });
    await db().update(reputationWrites).set({ pendingReference: signature }).where(eq(reputationWrites.id, id));

    const writes = vi.spyOn(solana, 'writeAttestation');
    try {
      expect(await reputation.processDue()).toEqual({ written: 1, retried: 0, failed: 0 });
      expect(writes).not.toHaveBeenCalled();
    } finally {
      writes.mockRestore();
    }
    expect(await rowById(id)).toMatchObject({ status: 'written', chainReference: signature });
  });

  it('does not broadcast when another round took the row over (its claim is stale)', async () => {
    const subject = solanaKey();
    await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'payment', subject, sourceType: 'payment', sourceId: 'stale-claim' });
    const { id } = await rowOf('stale-claim');
    const solana = t.chains!.solana;
    // While this round signs, another round claims the row (this round's lease ran out).
    const original = solana.writeAttestation.bind(solana);
    const writes = vi.spyOn(solana, 'writeAttestation').mockImplementation(async (attestation, options) => {
      await db().update(reputationWrites).set({ attempts: sql`${reputationWrites.attempts} + 1` }).where(eq(reputationWrites.id, id));
      return original(attestation, options);
    });
    try {
      expect(await reputation.processDue()).toEqual({ written: 0, retried: 0, failed: 0 });
    } finally {
      writes.mockRestore();
    }
    expect(await rowById(id)).toMatchObject({ status: 'pending', pendingReference: null, chainReference: null });
    // The round that holds it now writes it.
    await makeDue(id);
    expect(await reputation.processDue()).toEqual({ written: 1, retried: 0, failed: 0 });
  });
});

describe('the job', () => {
  it("drains due writes every minute as 'process-reputation-writes'", async () => {
    let job: JobDefinition | undefined;
    defineReputationJobs({ define: (definition: JobDefinition) => void (job = definition) } as unknown as JobRunner, { reputation });
    expect(job).toMatchObject({ name: 'process-reputation-writes', schedule: '* * * * *' });
    const subject = solanaKey();
    for (let i = 0; i < 30; i++) {
      await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'payment', subject, sourceType: 'payment', sourceId: `job-${i}`, amount: 1n });
    }
    const log = { info: vi.fn(), warn: vi.fn() };
    await job!.handle({}, { jobId: 'j', retryCount: 0, signal: new AbortController().signal, log: log as never });
    expect(log.info).toHaveBeenCalledWith({ written: 30, retried: 0, failed: 0 }, 'reputation writes processed');
    // Thirty fees the key paid itself: written, and worth no tier.
    expect(await reputation.tierOf({ solana: subject })).toEqual({ tier: 'unknown', count: 0 });
  });
});

describe('GET /api/reputation/{address}', () => {
  let app: OpenAPIHono<AppEnv>;

  beforeAll(() => {
    app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    app.use('*', requestContext(createLogger('silent'), new HttpMetrics({ processMetrics: false })));
    app.route('/', reputationRoutes({ reputation }));
    app.onError(handleError);
  });
  const get = (address: string) => Promise.resolve(app.request(`/api/reputation/${encodeURIComponent(address)}`));

  it('answers 400 naming the address for anything but a Solana key or an agent id', async () => {
    for (const address of ['0xabc', 'hello', base58(randomBytes(20)), '0x5FbDB2315678afecb367f032d93F642f64180aa3', '007']) {
      const response = await get(address);
      expect(response.status, address).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'address', error: expect.any(String) });
    }
  });

  it('answers 200 with zero totals for valid addresses it has never seen', async () => {
    for (const address of [solanaKey(44), solanaKey(43), '123456789']) {
      const response = await get(address);
      expect(response.status, address).toBe(200);
      const body = (await response.json()) as ReputationSummary;
      expect(body.unified).toEqual({
        totalPayments: 0,
        totalValueMovedBaseUnits: '0',
        agentFeedbackScore: null,
        agentFeedbackCount: 0,
        workerAttestationCount: 0,
        firstActivityAt: null,
        latestActivityAt: null,
      });
      if (address === '123456789') expect(body.tempo).toMatchObject({ agentId: address, owner: null, feedbackCount: 0, averageScore: null, latest: [] });
      else expect(body.solana).toEqual({ attestationCount: 0, byType: {}, totalValueMovedBaseUnits: '0', latest: [] });
    }
  });

  it('is described in the OpenAPI document', () => {
    const document = app.getOpenAPIDocument({ openapi: '3.0.3', info: { title: 'test', version: '1.0.0' } });
    const operation = document.paths?.['/api/reputation/{address}']?.get;
    expect(operation?.security).toBeUndefined();
    expect(Object.keys(operation?.responses ?? {})).toEqual(['200', '400']);
  });
});

/** A fee payment claimed at the gate (not yet kept). */
const claim = (rail: 'B' | 'C', payer: string | null) =>
  claimProof(
    db(),
    {
      proofKey: `proof-${randomUUID()}`,
      rail,
      network: rail === 'C' ? t.chains!.solana.network : 'eip155:8453',
      route: 'POST /api/mpp/memo/decode',
      payer,
      amount: 10_000n,
      asset: null,
      requestId: randomUUID(),
      proofHash: randomUUID(),
      requestHash: randomUUID(),
      trace: {},
    },
    60,
  );
// The gate keeps a fee (served) with the hook the service passes to openPayments.
const settle = (paymentId: string, payer: string | null) =>
  markServed(db(), paymentId, { httpStatus: 200, employerId: null, settlement: { reference: 'ref', payer, headers: {}, receipt: {} } }, attestSettledPayment);

describe('the rail-C settlement hook', () => {
  it('queues exactly one payment attestation to the payer of a settled Solana payment', async () => {
    const payer = solanaKey();
    const paymentId = (await claim('C', payer))!;
    expect(await rowsOf(paymentId)).toHaveLength(0); // claimed is not paid
    expect(await settle(paymentId, payer)).toBe(true);
    expect(await settle(paymentId, payer)).toBe(false);
    const rows = await rowsOf(paymentId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'attestation', writeType: 'payment', subject: payer, sourceType: 'payment', amount: 10_000n, status: 'pending' });

    expect(await reputation.processDue()).toMatchObject({ written: 1 });
    const summary = await reputation.summary(payer);
    expect(summary.unified).toMatchObject({ totalPayments: 1, totalValueMovedBaseUnits: '10000' });
  });

  it('queues nothing for other rails or a payer that is not a Solana key', async () => {
    const evmPayer = privateKeyToAccount(generatePrivateKey()).address as Address;
    const onBase = (await claim('B', evmPayer))!;
    expect(await settle(onBase, evmPayer)).toBe(true);
    const odd = (await claim('C', evmPayer))!;
    expect(await settle(odd, evmPayer)).toBe(true);
    const none = (await claim('C', null))!;
    expect(await settle(none, null)).toBe(true);
    for (const id of [onBase, odd, none]) expect(await rowsOf(id)).toHaveLength(0);
  });
});

describe('tiers count only what others vouch for', () => {
  const anEmployer = () => `employer:${randomUUID()}`;
  const feedback = (agentId: bigint, write: Partial<ReputationWrite> & { writeType: string }) =>
    enqueueReputationWrite(db(), { kind: 'erc8004_feedback', subject: agentId.toString(), sourceType: 'test', sourceId: randomUUID(), amount: 10_000n, score: 100, ...write });
  /** What a settled escrow queues: an attestation to the worker's wallet and feedback to its agent id, one payer. */
  const settledEscrow = async (worker: { solana: string; agentId: bigint }, payer: string) => {
    const source = { writeType: 'escrow-settled', sourceType: 'escrow', sourceId: randomUUID(), amount: USD, payer };
    await enqueueReputationWrite(db(), { ...source, kind: 'attestation', subject: worker.solana });
    await feedback(worker.agentId, source);
  };

  it('leaves an agent that paid five times itself unknown: its own agent/pay feedback and rail-C fees vouch for nothing', async () => {
    const agentId = await registerForeignAgent(agentOwner);
    const key = solanaKey();
    for (let i = 0; i < 5; i++) {
      // What agent/pay's settlePaid queues for the paying agent.
      await feedback(agentId, { writeType: 'agent-pay', sourceType: 'agent_pay' });
      // What the gate's hook queues for the payer of a kept rail-C fee.
      const paymentId = (await claim('C', key))!;
      expect(await settle(paymentId, key)).toBe(true);
    }
    expect(await drain()).toMatchObject({ written: 10, failed: 0 });
    expect(await reputation.tierOf({ solana: key, erc8004AgentId: agentId })).toEqual({ tier: 'unknown', count: 0 });
  });

  it('counts no refund (score 0) and nothing the subject paid itself, even with a payer recorded', async () => {
    const agentId = await registerForeignAgent(agentOwner);
    const key = solanaKey();
    for (let i = 0; i < 5; i++) {
      // A refund: score 0 feedback to the requester's agent id, a refund attestation to its key.
      await feedback(agentId, { writeType: 'escrow-refunded', sourceType: 'escrow', score: 0, payer: anEmployer() });
      await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'escrow-refunded', subject: key, sourceType: 'escrow', sourceId: randomUUID(), amount: USD });
      // The subject named as its own payer.
      await feedback(agentId, { writeType: 'escrow-settled', sourceType: 'escrow', payer: agentId.toString() });
      await enqueueReputationWrite(db(), { kind: 'attestation', writeType: 'escrow-settled', subject: key, sourceType: 'escrow', sourceId: randomUUID(), amount: USD, payer: key });
    }
    expect(await drain()).toMatchObject({ written: 20, failed: 0 });
    expect(await reputation.tierOf({ solana: key, erc8004AgentId: agentId })).toEqual({ tier: 'unknown', count: 0 });
  });

  it('counts the distinct parties that paid the worker: a payer repeated counts once', async () => {
    const worker = { solana: solanaKey(), agentId: await registerForeignAgent(agentOwner) };
    const [a, b] = [anEmployer(), anEmployer()];
    for (const payer of [a, a, a, b]) await settledEscrow(worker, payer);
    expect(await drain()).toMatchObject({ written: 8, failed: 0 });
    expect(await reputation.tierOf({ solana: worker.solana, erc8004AgentId: worker.agentId })).toEqual({ tier: 'new', count: 2 });
    expect(await reputation.tierOf({ erc8004AgentId: worker.agentId })).toEqual({ tier: 'new', count: 2 });

    for (let i = 0; i < 3; i++) await settledEscrow(worker, anEmployer());
    await drain();
    expect(await reputation.tierOf({ solana: worker.solana })).toEqual({ tier: 'established', count: 5 });
    // Not yet written is not yet counted.
    await settledEscrow(worker, anEmployer());
    expect(await reputation.tierOf({ solana: worker.solana })).toEqual({ tier: 'established', count: 5 });
  });

  it("names the escrow's employer as the payer of a settled escrow, unless the worker is one of that employer's own agents", async () => {
    const token = await t.token(`vouch-${randomUUID()}`, `${randomUUID().slice(0, 8)}@vouch.example`);
    const employerId = ((await (await t.request('POST', '/api/employers', { token, body: { name: 'Vouch Co' } })).json()) as { id: string }).id;
    const authorize = async (agentIdentifier: string) => {
      const body = { label: 'bot', agent_identifier: agentIdentifier, per_tx_cap_usd: '5', per_day_cap_usd: '20' };
      const response = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, { token, body });
      expect(response.status, await response.clone().text()).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    const poster = `poster-${randomUUID()}`;
    const ownKey = solanaKey();
    const ownAgent = await registerForeignAgent(agentOwner);
    const formerAgent = `former-${randomUUID()}`;
    await authorize(poster);
    await authorize(`solana:${ownKey}`);
    await authorize(`erc8004:tempo:${ownAgent}`);
    const revoked = await authorize(formerAgent);
    expect((await t.request('DELETE', `/api/employers/${employerId}/agents/authorizations/${revoked}`, { token })).status).toBe(200);

    const payerOf = (workerAgentIdentifier: string, workerWalletAddress = solanaKey()) => escrowPayer(db(), { employerId, workerAgentIdentifier, workerWalletAddress });
    expect(await payerOf(`worker-${randomUUID()}`)).toBe(`employer:${employerId}`);
    expect(await payerOf(`solana:${solanaKey()}`)).toBe(`employer:${employerId}`);
    // The requester paying itself, and the employer's other agents however their identifier is spelled.
    expect(await payerOf(poster)).toBeNull();
    expect(await payerOf(`worker-${randomUUID()}`, ownKey)).toBeNull();
    expect(await payerOf(ownKey)).toBeNull();
    expect(await payerOf(`erc8004:eip155:4217:${ownAgent}`)).toBeNull();
    // Revoking an agent does not make the employer another party.
    expect(await payerOf(formerAgent)).toBeNull();
  });
});
