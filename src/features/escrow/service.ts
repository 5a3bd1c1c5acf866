import { randomUUID } from 'node:crypto';
import type { Address as SolanaAddress, Signature } from '@solana/kit';
import type { Hex } from 'viem';
import { crashPoint } from '../../faults.js';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { SignedSolanaTransaction, SolanaChain } from '../../chains/solana/solana-chain.js';
import type { Config } from '../../config.js';
import type { Database, Db } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { AppError, type CodeWithStatus } from '../../errors.js';
import type { Logger } from '../../log.js';
import { displayUsd, formatUsd } from '../../money.js';
import type { AiProvider } from '../../providers/ai/provider.js';
import { normaliseIdentifier, parseAgentIdentifier } from '../agents/index.js';
import type { AgentRequestVerifier, SignedAgentRequest } from '../agents/index.js';
import { identityOf, SpendReservations } from '../agents/index.js';
import type { EmployersService } from '../employers/index.js';
import { encodeMemo } from '../memo/index.js';
import { notify } from '../notifications/index.js';
import { enqueueReputationWrite, escrowPayer, type LinkedIdentity, type ReputationTier } from '../reputation/index.js';
import { appliedExpiryHours } from './expiry.js';
import { DeliverableFetchError, fetchDeliverable, type FetchDeliverableOptions } from './fetch-deliverable.js';
import { judgeDeliverable } from './judge.js';
import { inspectSignedDeliverable, uriHash } from './signed-deliverable.js';
import * as store from './store.js';
import type { EscrowRow } from './store.js';

export interface EscrowOptions {
  /** A verdict below this confidence is escalated to the employer instead of settling. */
  judgeMinConfidence: number;
  /** The judge's model name, recorded with the verdict (never shown on the status route). */
  model: string;
  fetch: Omit<FetchDeliverableOptions, 'maxBytes'>;
  /** How long one worker holds an escrow per step (default LEASE_SECONDS; local crash tests shorten it). */
  leaseSeconds?: number;
}

/** The escrow settings of the configuration. */
export function escrowOptionsFrom(config: Config): EscrowOptions {
  return {
    judgeMinConfidence: config.escrow.judgeMinConfidence,
    model: config.ai.model,
    fetch: { ipfsGateway: config.escrow.ipfsGateway, allowHosts: config.escrow.fetchAllowHosts },
    leaseSeconds: config.faults.takeoverSeconds,
  };
}

export interface EscrowReputationPort {
  tierOf(identity: LinkedIdentity): Promise<{ tier: ReputationTier; count: number }>;
}

export interface PostEscrowRequest {
  identifier: string;
  employerId: string;
  workerWalletAddress: string;
  workerAgentIdentifier: string;
  amount: bigint;
  rubricPrompt: string;
  expiryHours: number;
  proof: SignedAgentRequest;
  feePaymentId: string | null;
  /** The fee settled before and its answer was lost (`c.var.payment.redeemed`): the escrow it bought is answered, not posted again. */
  redeemed?: boolean;
}

export interface DeliverRequest {
  identifier: string;
  escrowId: string;
  deliverableUri: string;
  proof: SignedAgentRequest;
  /** The delivery fee: recorded with the delivery, so a redeemed fee finds it. */
  feePaymentId: string | null;
  /** As for a post: the delivery this fee bought is answered, not made again. */
  redeemed?: boolean;
}

// The money of one escrow is moved by one worker at a time, for at most this long per step.
const LEASE_SECONDS = 90;
// A funding this old with no worker on it was interrupted; the reconciler finishes it.
const FUNDING_STALE_SECONDS = 120;
// An EVM transaction signed but not mined after this long has lost its nonce: it never will be.
const LOST_TRANSACTION_SECONDS = 3600;
// A funding whose vault still cannot be funded after this long is given up and refunded.
const FUNDING_GIVE_UP_SECONDS = 3600;

type Outcome = 'settled' | 'rejected_refunded' | 'expired_refunded';

/**
 * Escrow between agents (spec 2.1, 3.1, 4.4): the requester's employer treasury (Tempo) funds a
 * vault of the escrow program on Solana, which only the program moves; the worker delivers; the
 * judge decides; the program pays the worker or refunds, and the refund goes back to the treasury.
 * Every move of money is a recorded step (its transaction known before it is sent) under a lease,
 * so a crash at any point resumes without paying twice. `advance` is the one place that moves an escrow after delivery.
 */
/** The service's ports and its settings (`escrowOptionsFrom`), in one object. */
export interface EscrowServiceOptions extends EscrowOptions {
  database: Database;
  verifier: AgentRequestVerifier;
  employers: EmployersService;
  tempo: TempoChain;
  solana: SolanaChain;
  reputation: EscrowReputationPort;
  ai: AiProvider;
  log: Logger;
}

export class EscrowService {
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly spend: SpendReservations;
  private readonly database: Database;
  private readonly verifier: AgentRequestVerifier;
  private readonly employers: EmployersService;
  private readonly tempo: TempoChain;
  private readonly solana: SolanaChain;
  private readonly reputation: EscrowReputationPort;
  private readonly ai: AiProvider;
  private readonly options: EscrowOptions;
  private readonly log: Logger;

  constructor({ database, verifier, employers, tempo, solana, reputation, ai, log, ...options }: EscrowServiceOptions) {
    this.database = database;
    this.verifier = verifier;
    this.employers = employers;
    this.tempo = tempo;
    this.solana = solana;
    this.reputation = reputation;
    this.ai = ai;
    this.options = options;
    this.log = log;
    this.spend = new SpendReservations(database, verifier, reputation, store.posterReservations);
  }

  // ---- post ------------------------------------------------------------------------------------

  async post(request: PostEscrowRequest): Promise<EscrowRow> {
    // Before the identity proof: the replay store would refuse the signature the redeemed
    // (byte-identical) request repeats; an escrow under this fee passed the proof when it was made.
    if (request.redeemed && request.feePaymentId !== null) {
      const earlier = await store.findByFeePayment(this.database.db, request.feePaymentId);
      if (earlier) return postedAnswer(earlier);
    }
    const spender = await this.spend.spender(request.employerId, request.identifier, request.proof, notAuthorized);
    const workerIdentifier = normaliseIdentifier(request.workerAgentIdentifier);
    // The worker's record: settled escrows attest to its wallet; an ERC-8004 worker also has feedback.
    const worker = await this.reputation.tierOf({ ...identityOf(workerIdentifier), solana: request.workerWalletAddress });
    const applied = appliedExpiryHours(request.expiryHours, worker.tier);

    // The same reservation as agent/pay's, on the same caps; the worker's wallet is the recipient (gate 5).
    const lease = randomUUID();
    const { value: row } = await this.spend.reserve(spender, { amount: request.amount, recipient: request.workerWalletAddress }, notAuthorized, (db, authorization) =>
      store.insertEscrow(db, {
        id: randomUUID(),
        employerId: request.employerId,
        posterAuthorizationId: authorization.id,
        posterAgentIdentifier: spender.identifier,
        workerWalletAddress: request.workerWalletAddress,
        workerAgentIdentifier: workerIdentifier,
        amount: request.amount,
        rubricPrompt: request.rubricPrompt,
        status: 'funding',
        requestedExpiryHours: request.expiryHours,
        appliedExpiryHours: applied,
        workerReputationTier: worker.tier,
        workerAttestationCount: worker.count,
        expiresAt: new Date(this.database.clock.nowMs() + applied * 3_600_000),
        feePaymentId: request.feePaymentId,
        // The request funds it; the reconciler keeps off until the lease lapses.
        leaseUntil: new Date(this.database.clock.nowMs() + (this.options.leaseSeconds ?? LEASE_SECONDS) * 1000),
        leaseOwner: lease,
      }),
    );
    try {
      return await this.fund(row, lease);
    } finally {
      await store.releaseLease(this.database.db, row.id, lease);
    }
  }

  /**
   * The treasury debit on Tempo, then the vault on Solana, each recorded under the post's lease
   * before it is sent; an interrupted funding is finished by `advance`.
   */
  private async fund(row: EscrowRow, lease: string): Promise<EscrowRow> {
    const accountId = await this.treasuryAccountOf(row.employerId);
    const account = accountId === null ? null : await this.tempo.treasuryAccount(accountId);
    if (accountId === null || !account || account.available < row.amount) {
      await store.transition(this.database.db, row.id, ['funding'], { status: 'funding_failed', finalizedAt: this.database.clock.now() });
      throw insufficientTreasury(account?.available ?? 0n, row.amount);
    }
    // Custody is the escrow program, funded from the service's Solana float: without either, nothing is debited.
    if (!this.solana.escrowProgram || (await this.solana.tokenBalance(this.solana.serviceAddress)) < row.amount) {
      await store.transition(this.database.db, row.id, ['funding'], { status: 'funding_failed', finalizedAt: this.database.clock.now() });
      this.log.error({ escrowId: row.id }, 'escrow custody unavailable: no escrow program (SOLANA_ESCROW_PROGRAM_ID), or the Solana float is short');
      throw new AppError('ESCROW_CUSTODY_UNAVAILABLE', 'Escrow custody cannot take this amount right now; nothing was debited. Retry later.');
    }
    try {
      const memo = encodeMemo({ type: 'agent_payment', employerId: row.employerId, employeeId: row.posterAuthorizationId ?? row.id, runId: row.id, amount: row.amount });
      await this.tempo.transferFromTreasury(accountId, this.tempo.serviceAddress, row.amount, memo, {
        beforeBroadcast: (signed) => this.recordSend(row.id, lease, { pending_treasury_debit: { ...signed, at: this.database.clock.nowMs() } }),
      });
    } catch (error) {
      // The lease lapsed and the reconciler took the funding over: nothing was sent; it says what became of it.
      if (error instanceof LeaseLostError) return postedAnswer((await store.findEscrow(this.database.db, row.id))!);
      if (error instanceof ChainRevertError) {
        await store.transition(this.database.db, row.id, ['funding'], { status: 'funding_failed', finalizedAt: this.database.clock.now() });
        if (error.errorName === 'InsufficientAvailable') throw insufficientTreasury(null, row.amount);
        if (error.errorName === 'Unauthorized') {
          throw new AppError('TREASURY_NOT_DELEGATED', "The service is not an agent of this employer's treasury account; its administrator must allow it.");
        }
        throw new AppError('ESCROW_FUNDING_FAILED', `The treasury refused the debit (${error.errorName}); nothing was locked.`);
      }
      throw this.fundingPending(row, error);
    }
    try {
      return await this.fundVault(row, lease);
    } catch (error) {
      throw this.fundingPending(row, error);
    }
  }

  private async fundVault(row: EscrowRow, lease: string): Promise<EscrowRow> {
    const current = (await store.findEscrow(this.database.db, row.id))!;
    const debit = pendingOf(current, 'pending_treasury_debit');
    // Funded already (a resumed attempt that had sent it): the vault exists and holds the amount.
    let initialize = pendingOf(current, 'pending_initialize')?.signature as string | undefined;
    if (!(initialize && (await this.solana.status(initialize as Signature)).state === 'landed')) {
      const terms = { worker: row.workerWalletAddress as SolanaAddress, expiresAt: row.expiresAt };
      ({ signature: initialize } = await this.solana.fundEscrow(row.id, row.amount, terms, {
        beforeSend: (signed) => this.recordSolanaSend(row.id, lease, 'pending_initialize', signed),
      }));
    }
    const { state } = await this.solana.escrowAccounts(row.id);
    return this.database.transaction(async (tx) => {
      await store.mergeSignatures(tx.db, row.id, { initialize, treasury_debit: debit?.hash ?? null, pending_initialize: null, pending_treasury_debit: null });
      const posted = await store.transition(tx.db, row.id, ['funding'], { status: 'posted', escrowPda: state });
      return posted ?? (await store.findEscrow(tx.db, row.id))!;
    });
  }

  private fundingPending(row: EscrowRow, error: unknown): AppError {
    this.log.error({ escrowId: row.id, err: error }, 'escrow funding interrupted; the reconciler finishes it');
    return new AppError('ESCROW_FUNDING_PENDING', 'The escrow could not be funded yet; it is posted or its debit returned within minutes (poll the status route).', {
      escrow_id: row.id,
    });
  }

  // ---- deliver ---------------------------------------------------------------------------------

  /** Spec 4.4 deliver: the worker's identity, then the content fetched once, hashed, and recorded. */
  async deliver(request: DeliverRequest): Promise<EscrowRow> {
    const earlier = await this.redeemedDelivery(request);
    if (earlier) return earlier;
    const escrow = await this.openForWorker(request.escrowId, request.identifier);
    // The worker proves its identifier: by its authorization with this employer, else by its own key.
    await this.verifier.verifyForEmployer(escrow.employerId, escrow.workerAgentIdentifier, request.proof);
    return this.acceptDelivery(escrow, request, async () => ({}));
  }

  /**
   * Spec 4.4 deliver-signed: the worker's own submit-deliverable transaction, checked (program,
   * uri_hash, escrow, fee payer, signatures), broadcast, and then the same delivery as `deliver`.
   */
  async deliverSigned(request: DeliverRequest & { signedTransaction: string }): Promise<EscrowRow> {
    const program = this.solana.escrowProgram;
    if (!program) throw new AppError('DELIVER_SIGNED_UNAVAILABLE', 'No escrow program is configured (SOLANA_ESCROW_PROGRAM_ID).');
    const earlier = await this.redeemedDelivery(request);
    if (earlier) return earlier;
    const inspected = inspectSignedDeliverable(request.signedTransaction, { programAddress: program });
    if (!inspected.ok) throw new AppError(inspected.code, inspected.message, { field: inspected.field });
    const escrow = await this.openForWorker(request.escrowId, request.identifier);
    if (inspected.feePayer !== escrow.workerWalletAddress || inspected.worker !== escrow.workerWalletAddress) {
      throw new AppError('FEE_PAYER_MISMATCH', "The transaction's fee payer and signing worker must be the escrow's worker wallet.", { field: 'signed_transaction' });
    }
    if (inspected.escrowId !== escrow.id) throw invalidTransaction('ESCROW_MISMATCH', 'The instruction names another escrow.');
    if (inspected.escrowAccount !== escrow.escrowPda) throw invalidTransaction('ESCROW_ACCOUNT_MISMATCH', "The instruction's escrow account is not this escrow's.");
    if (!Buffer.from(inspected.uriHash).equals(Buffer.from(uriHash(request.deliverableUri)))) {
      throw invalidTransaction('URI_HASH_MISMATCH', 'uri_hash is not the SHA-256 of deliverable_uri.');
    }
    // The wallet's signature over the transaction binds the escrow and the URI. It proves the identifier
    // only when the identifier is that very key; any other proves itself as on deliver (docs/decisions.md).
    const identity = parseAgentIdentifier(escrow.workerAgentIdentifier);
    if (!(identity.kind === 'solana' && identity.publicKey === escrow.workerWalletAddress)) {
      await this.verifier.verifyForEmployer(escrow.employerId, escrow.workerAgentIdentifier, request.proof);
    }
    // Broadcast once the content is fetched, so a deliverable we refuse leaves no trace on chain.
    return this.acceptDelivery(escrow, request, async () => {
      // Landed already (sent before a crash lost its record, or by the worker itself): sending it
      // again would be refused as a duplicate, yet the delivery is on chain; it is recorded as is.
      if ((await this.solana.status(inspected.signature as Signature)).state === 'landed') return { submit_deliverable: inspected.signature };
      try {
        await this.solana.submitSigned(inspected.wire, inspected.signature as Signature);
      } catch (error) {
        throw new AppError('BROADCAST_FAILED', `The transaction did not land: ${(error as Error).message}`, { signature: inspected.signature });
      }
      return { submit_deliverable: inspected.signature };
    });
  }

  /**
   * The delivery a redeemed fee made, answered as it was then; null when the fee made none yet
   * (then the call proceeds as a fresh one). Looked up before the escrow's state (no longer
   * `posted`) and the identity proof (its signature spent) would refuse the repeated request.
   */
  private async redeemedDelivery(request: DeliverRequest): Promise<EscrowRow | null> {
    if (!request.redeemed || request.feePaymentId === null) return null;
    const delivered = await store.findByDeliveryFeePayment(this.database.db, request.feePaymentId);
    return delivered && asAnswered(delivered, 'delivered');
  }

  /** 404 for an unknown escrow, 403 for another agent or an expired one, 409 when already delivered. */
  private async openForWorker(escrowId: string, identifier: string): Promise<EscrowRow> {
    const escrow = await store.findEscrow(this.database.db, escrowId);
    if (!escrow || !isPublic(escrow)) throw notFound();
    if (normaliseIdentifier(identifier) !== escrow.workerAgentIdentifier) {
      throw new AppError('AGENT_MISMATCH', "X-Agent-Identifier is not this escrow's worker_agent_identifier.");
    }
    if (escrow.expiresAt.getTime() <= this.database.clock.nowMs()) throw new AppError('ESCROW_EXPIRED', `The escrow expired at ${escrow.expiresAt.toISOString()}.`);
    if (escrow.status !== 'posted') throw alreadyDelivered(escrow);
    return escrow;
  }

  /**
   * Fetches and hashes the content once, runs `onChain` (the worker's own transaction), then
   * posted -> delivered, recording the fee that bought the delivery.
   */
  private async acceptDelivery(escrow: EscrowRow, request: DeliverRequest, onChain: () => Promise<Record<string, string>>): Promise<EscrowRow> {
    const uri = request.deliverableUri;
    let fetched;
    try {
      fetched = await fetchDeliverable(uri, this.options.fetch);
    } catch (error) {
      if (error instanceof DeliverableFetchError) throw fetchRefusal(error);
      throw error;
    }
    const signatures = await onChain();
    const delivered = await this.database.transaction(async (tx) => {
      const row = await store.transition(tx.db, escrow.id, ['posted'], {
        status: 'delivered',
        deliverableUri: uri,
        deliverableSha256: fetched.sha256,
        deliverableContent: Buffer.from(fetched.bytes),
        deliveredAt: this.database.clock.now(),
        deliveryFeePaymentId: request.feePaymentId,
      });
      if (!row || Object.keys(signatures).length === 0) return row;
      await store.mergeSignatures(tx.db, row.id, signatures);
      return store.findEscrow(tx.db, row.id);
    });
    if (!delivered) throw alreadyDelivered((await store.findEscrow(this.database.db, escrow.id)) ?? escrow);
    this.kick(delivered.id);
    return delivered;
  }

  // ---- reads and the employer's decision ---------------------------------------------------------

  /** Any paying caller may read an escrow's public fields (spec 4.4). */
  async publicStatus(id: string): Promise<EscrowRow> {
    const escrow = await store.findEscrow(this.database.db, id);
    if (!escrow || !isPublic(escrow)) throw notFound();
    return escrow;
  }

  async listForOwner(caller: Caller, employerId: string): Promise<EscrowRow[]> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    return store.listEmployerEscrows(this.database.db, employerId, 200);
  }

  /**
   * The employer decides an escalated escrow (the judge gave no verdict it may act on). The
   * decision is the verdict; payout follows as for the judge's.
   */
  async decide(caller: Caller, employerId: string, id: string, verdict: 'approved' | 'rejected', reasoning: string): Promise<EscrowRow> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    const escrow = await store.findEmployerEscrow(this.database.db, employerId, id);
    if (!escrow || !isPublic(escrow)) throw notFound();
    const decided = await store.decideEscalated(this.database.db, id, {
      validatorVerdict: verdict,
      validatorConfidence: 100,
      validatorReasoning: reasoning,
      validatorModel: `employer:${caller.userId}`,
      verdictAt: this.database.clock.now(),
    });
    if (!decided) throw new AppError('ESCROW_NOT_ESCALATED', `The escrow is ${escrow.status}${escrow.validatorVerdict ? ` with a verdict (${escrow.validatorVerdict})` : ''}; only an escalated escrow awaits your decision.`);
    this.kick(id);
    return decided;
  }

  // ---- the state machine after posting ---------------------------------------------------------

  /** Moves every escrow that has work to do (the job's safety net after a crash or a lost kick). */
  async reconcile(limit = 25): Promise<number> {
    const ids = await store.needingProgress(this.database.db, FUNDING_STALE_SECONDS, limit);
    for (const id of ids) await this.advance(id).catch((error: unknown) => this.log.warn({ escrowId: id, err: error }, 'escrow step failed; retried later'));
    return ids.length;
  }

  /** Waits for the background work started by requests (tests, shutdown). */
  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Does the escrow's next steps while holding its lease: finish a funding; expire; record the
   * delivery on chain and judge it; pay out a verdict. Null when another worker holds the lease.
   */
  async advance(id: string): Promise<EscrowRow | null> {
    const lease = randomUUID();
    let escrow = await store.takeLease(this.database.db, id, this.options.leaseSeconds ?? LEASE_SECONDS, lease);
    if (!escrow) return null;
    try {
      if (escrow.status === 'funding') return await this.resumeFunding(escrow, lease);
      if (!store.OPEN_STATUSES.includes(escrow.status as (typeof store.OPEN_STATUSES)[number])) return escrow;
      if (escrow.validatorVerdict === null && escrow.expiresAt.getTime() <= this.database.clock.nowMs()) return await this.refund(escrow, 'expired_refunded', lease);
      if (escrow.status === 'delivered') escrow = await this.startValidation(escrow, lease);
      if (escrow.status === 'validating' && escrow.validatorVerdict === null && escrow.escalatedAt === null) escrow = await this.judge(escrow);
      if (escrow.status === 'validating' && escrow.validatorVerdict === 'approved') return await this.settle(escrow, lease);
      if (escrow.status === 'validating' && escrow.validatorVerdict === 'rejected') return await this.refund(escrow, 'rejected_refunded', lease);
      return escrow;
    } finally {
      await store.releaseLease(this.database.db, id, lease);
    }
  }

  private kick(id: string): void {
    const run = this.advance(id)
      .catch((error: unknown) => this.log.warn({ escrowId: id, err: error }, 'escrow step failed; the reconciler retries it'))
      .finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
  }

  /** delivered -> validating once the content hash is on chain. */
  private async startValidation(escrow: EscrowRow, lease: string): Promise<EscrowRow> {
    const recorded = await this.sendOnce(escrow, 'deliverable', () =>
      this.solana.recordDeliverable(escrow.id, escrow.deliverableSha256!, { beforeSend: (signed) => this.recordSolanaSend(escrow.id, lease, 'pending_deliverable', signed) }),
    );
    await store.mergeSignatures(this.database.db, escrow.id, { deliverable: recorded, pending_deliverable: null });
    return (await store.transition(this.database.db, escrow.id, ['delivered'], { status: 'validating' })) ?? (await store.findEscrow(this.database.db, escrow.id))!;
  }

  /** The judge on exactly the stored (hashed) bytes; an escalation waits for the employer. */
  private async judge(escrow: EscrowRow): Promise<EscrowRow> {
    const judgement = await judgeDeliverable({
      rubric: escrow.rubricPrompt,
      deliverable: new Uint8Array(escrow.deliverableContent ?? Buffer.alloc(0)),
      provider: this.ai,
      model: this.options.model,
      minConfidence: this.options.judgeMinConfidence,
    });
    if (judgement.sanitizer.flagged) {
      this.log.warn({ escrowId: escrow.id, incidents: judgement.sanitizer.incidents }, 'escrow deliverable: decoded text holds trigger words; the judge was told to treat it as data');
    }
    const common = { validatorModel: judgement.model, sanitizerFlagged: judgement.sanitizer.flagged };
    if (judgement.kind === 'verdict') {
      const judged = await store.recordJudgement(this.database.db, escrow.id, {
        ...common,
        validatorVerdict: judgement.verdict,
        validatorConfidence: judgement.confidence,
        validatorReasoning: judgement.reasoning,
        verdictAt: this.database.clock.now(),
      });
      return judged ?? (await store.findEscrow(this.database.db, escrow.id))!;
    }
    return this.database.transaction(async (tx) => {
      const escalated = await store.recordJudgement(tx.db, escrow.id, { ...common, escalatedAt: this.database.clock.now(), escalationReason: judgement.reason });
      if (!escalated) return (await store.findEscrow(tx.db, escrow.id))!;
      await notify(tx.db, {
        employerId: escrow.employerId,
        type: 'escrow_escalated',
        severity: 'warning',
        title: `An escrow of ${displayUsd(escrow.amount)} needs your decision`,
        body: `The judge gave no verdict to act on: ${judgement.reason}. Approve or reject it before ${escrow.expiresAt.toISOString()}, or it is refunded.`,
        link: `/dashboard/settings/agents?escrow=${escrow.id}`,
        data: { escrow_id: escrow.id, reason: judgement.reason },
        dedupeKey: `escrow-escalated:${escrow.id}`,
      });
      return escalated;
    });
  }

  /** approved: the vault pays the worker (at most once: the release closes the vault). */
  private async settle(escrow: EscrowRow, lease: string): Promise<EscrowRow> {
    let released = 'settled';
    const signature = await this.sendOnce(escrow, 'settle', async () => {
      const release = await this.solana.releaseEscrow(escrow.id, 'approved', {
        beforeSend: async (signed) => {
          await this.recordSolanaSend(escrow.id, lease, 'pending_settle', signed);
          crashPoint('escrow.settle.before-send');
        },
      });
      released = release.released;
      return release;
    });
    crashPoint('escrow.settle.after-send');
    // Refund is anyone's at expiry: a stranger's landed before this verdict reached the chain.
    if (released === 'refunded') return this.refund(escrow, 'expired_refunded', lease);
    return this.finish(escrow, 'settled', { settle: signature, pending_settle: null });
  }

  /** rejected or expired: the vault back to the service wallet, then the same amount into the employer's treasury. */
  private async refund(escrow: EscrowRow, outcome: 'rejected_refunded' | 'expired_refunded', lease: string): Promise<EscrowRow> {
    const vaultRefund = await this.sendOnce(escrow, 'refund', async () => {
      const release = await this.solana.releaseEscrow(escrow.id, outcome === 'rejected_refunded' ? 'rejected' : 'expired', {
        beforeSend: (signed) => this.recordSolanaSend(escrow.id, lease, 'pending_refund', signed),
      });
      if (release.released !== 'refunded') throw new Error(`escrow ${escrow.id} was settled on chain; it cannot be refunded`);
      return release;
    });
    await store.mergeSignatures(this.database.db, escrow.id, { refund: vaultRefund, pending_refund: null });
    const treasuryRefund = await this.creditTreasuryOnce((await store.findEscrow(this.database.db, escrow.id))!, lease);
    return this.finish(escrow, outcome, { treasury_refund: treasuryRefund, pending_treasury_refund: null });
  }

  /** The terminal transition with its reputation writes and the employer's notice, in one transaction. */
  private async finish(escrow: EscrowRow, outcome: Outcome, signatures: Record<string, string | null>): Promise<EscrowRow> {
    return this.database.transaction(async (tx) => {
      await store.mergeSignatures(tx.db, escrow.id, signatures);
      const done = await store.transition(tx.db, escrow.id, store.OPEN_STATUSES, { status: outcome, finalizedAt: this.database.clock.now() });
      if (!done) return (await store.findEscrow(tx.db, escrow.id))!;
      await this.queueReputation(tx.db, done, outcome);
      await notify(tx.db, {
        employerId: done.employerId,
        type: `escrow_${outcome}`,
        severity: outcome === 'settled' ? 'success' : 'info',
        title: outcome === 'settled' ? `Escrow settled: ${displayUsd(done.amount)} paid to the worker` : `Escrow ${outcome === 'expired_refunded' ? 'expired' : 'rejected'}: ${displayUsd(done.amount)} back in your treasury`,
        link: `/dashboard/settings/agents?escrow=${done.id}`,
        data: { escrow_id: done.id, status: outcome },
        dedupeKey: `escrow-final:${done.id}`,
      });
      return done;
    });
  }

  /** Spec 6: `escrow-settled` to the worker, `escrow-refunded` to the requester (on the chain its identity lives on). */
  private async queueReputation(db: Db, escrow: EscrowRow, outcome: Outcome): Promise<void> {
    const settled = outcome === 'settled';
    const writeType = settled ? 'escrow-settled' : 'escrow-refunded';
    const subjects = settled ? [{ solana: escrow.workerWalletAddress }, identityOf(escrow.workerAgentIdentifier)] : [identityOf(escrow.posterAgentIdentifier)];
    // The employer paid the worker (what its tier counts); a refund returns the requester's own money.
    const payer = settled ? await escrowPayer(db, escrow) : null;
    const solanaKeys = new Set(subjects.map((s) => s.solana).filter((k): k is string => !!k));
    for (const key of solanaKeys) {
      await enqueueReputationWrite(db, { kind: 'attestation', writeType, subject: key, sourceType: 'escrow', sourceId: escrow.id, amount: escrow.amount, payer });
    }
    for (const agentId of new Set(subjects.map((s) => s.erc8004AgentId).filter((id): id is bigint => id != null))) {
      await enqueueReputationWrite(db, {
        kind: 'erc8004_feedback',
        writeType,
        subject: agentId.toString(),
        sourceType: 'escrow',
        sourceId: escrow.id,
        amount: escrow.amount,
        score: settled ? 100 : 0,
        payer,
      });
    }
  }

  // ---- steps that move money exactly once -------------------------------------------------------

  /**
   * Runs a Solana step at most once: a signature recorded before sending is looked up first, and
   * re-sent while it can still land. Returns the landed signature.
   */
  private async sendOnce(escrow: EscrowRow, step: string, send: () => Promise<{ signature: Signature | null }>): Promise<string | null> {
    const done = (escrow.signatures as Record<string, unknown>)[step];
    if (typeof done === 'string') return done;
    const pending = pendingOf(escrow, `pending_${step}`);
    if (pending) {
      const status = await this.solana.status(pending.signature as Signature);
      if (status.state === 'landed') return pending.signature as string;
      if (status.state === 'unknown' && (await this.solana.blockHeight()) <= BigInt(pending.lastValidBlockHeight as string)) {
        await this.solana.resend({ signature: pending.signature as Signature, wire: pending.wire as string, lastValidBlockHeight: BigInt(pending.lastValidBlockHeight as string) });
        // A chain that lands it at once (the embedded one) needs no second round.
        if ((await this.solana.status(pending.signature as Signature)).state === 'landed') return pending.signature as string;
        throw new Error(`escrow ${escrow.id}: ${step} ${pending.signature} sent again; not yet landed`);
      }
      // Failed, or expired unlanded: it never moved anything; sign a new one.
    }
    return (await send()).signature;
  }

  /** Records a transaction about to be sent, under the lease `lease` (`LeaseLostError` when it lapsed: then it is not sent). */
  private async recordSend(id: string, lease: string, entries: Record<string, unknown>): Promise<void> {
    if (!(await store.recordUnderLease(this.database.db, id, lease, entries))) throw new LeaseLostError(id);
  }

  private recordSolanaSend(id: string, lease: string, key: string, signed: SignedSolanaTransaction): Promise<void> {
    return this.recordSend(id, lease, { [key]: { signature: signed.signature, wire: signed.wire, lastValidBlockHeight: signed.lastValidBlockHeight.toString() } });
  }

  /** The refund's Tempo leg, at most once: a recorded deposit is awaited or re-broadcast, not repeated. */
  private async creditTreasuryOnce(escrow: EscrowRow, lease: string): Promise<string> {
    const done = (escrow.signatures as Record<string, unknown>).treasury_refund;
    if (typeof done === 'string') return done;
    const pending = pendingOf(escrow, 'pending_treasury_refund');
    if (pending) {
      const receipt = await this.tempo.connection.receipt(pending.hash as Hex);
      if (receipt?.status === 'success') return pending.hash as string;
      if (!receipt && this.database.clock.nowMs() - Number(pending.at) < LOST_TRANSACTION_SECONDS * 1000) {
        await this.tempo.connection.rebroadcast(pending.raw as Hex).catch(() => undefined);
        throw new Error(`escrow ${escrow.id}: treasury refund ${pending.hash} not yet mined`);
      }
      // Reverted, or lost (its nonce long reused): nothing was credited; deposit again.
    }
    const accountId = await this.treasuryAccountOf(escrow.employerId);
    if (accountId === null) throw new Error(`escrow ${escrow.id}: the employer has no treasury account to refund`);
    const { txHash } = await this.tempo.depositToTreasury(accountId, escrow.amount, {
      beforeBroadcast: (signed) => this.recordSend(escrow.id, lease, { pending_treasury_refund: { ...signed, at: this.database.clock.nowMs() } }),
    });
    return txHash;
  }

  /**
   * A funding a crash or an error interrupted. Debit mined: fund the vault (only one vault per
   * escrow can ever exist), giving up after an hour by crediting the treasury back. Debit
   * reverted, never sent, or lost: nothing moved, `funding_failed`.
   */
  private async resumeFunding(escrow: EscrowRow, lease: string): Promise<EscrowRow> {
    const debit = pendingOf(escrow, 'pending_treasury_debit');
    const receipt = debit ? await this.tempo.connection.receipt(debit.hash as Hex) : null;
    if (receipt?.status === 'success') {
      try {
        return await this.fundVault(escrow, lease);
      } catch (error) {
        if (this.database.clock.nowMs() - escrow.createdAt.getTime() < FUNDING_GIVE_UP_SECONDS * 1000) throw error;
        if ((await this.solana.escrowBalance(escrow.id)) > 0n) throw error; // funded after all; retry the bookkeeping
        await this.creditTreasuryOnce(escrow, lease);
        return (await store.transition(this.database.db, escrow.id, ['funding'], { status: 'funding_failed', finalizedAt: this.database.clock.now() })) ?? escrow;
      }
    }
    const age = this.database.clock.nowMs() - (debit ? Number(debit.at) : escrow.createdAt.getTime());
    if (debit && !receipt && age < LOST_TRANSACTION_SECONDS * 1000) {
      await this.tempo.connection.rebroadcast(debit.raw as Hex).catch(() => undefined);
      return escrow;
    }
    return (await store.transition(this.database.db, escrow.id, ['funding'], { status: 'funding_failed', finalizedAt: this.database.clock.now() })) ?? escrow;
  }

  private async treasuryAccountOf(employerId: string): Promise<bigint | null> {
    const employer = await this.employers.findEmployer(employerId);
    return employer?.employerAccountId ? BigInt(employer.employerAccountId) : null;
  }
}

// ---- helpers ------------------------------------------------------------------------------------

function pendingOf(escrow: EscrowRow, key: string): Record<string, unknown> | null {
  const value = (escrow.signatures as Record<string, unknown>)[key];
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
}

// The steps each answer shows: a post's answer the funding's, a delivery's those and the worker's own.
// Later steps (the judge's record, the payout, a refund) were not part of either answer.
const ANSWERED_STEPS = {
  posted: ['initialize', 'treasury_debit'],
  delivered: ['initialize', 'treasury_debit', 'submit_deliverable'],
} as const;

/**
 * The escrow as the first answer of a post or a delivery showed it (its status then, the steps
 * landed by then): a redeemed fee gets that answer again, whatever happened to the escrow since
 * (the status route shows that).
 */
function asAnswered(escrow: EscrowRow, status: keyof typeof ANSWERED_STEPS): EscrowRow {
  const steps: readonly string[] = ANSWERED_STEPS[status];
  const signatures = Object.fromEntries(Object.entries(escrow.signatures as Record<string, unknown>).filter(([step]) => steps.includes(step)));
  return { ...escrow, status, signatures };
}

/**
 * What a post whose fee is redeemed answers, as a fresh post in the escrow's state would: posted
 * (or any later state), the post's answer; still funding, 502 ESCROW_FUNDING_PENDING; funding
 * failed, 502 ESCROW_FUNDING_FAILED (the reason is not kept; nothing was locked, so the fee is
 * refunded rather than kept for a refusal we cannot name).
 */
function postedAnswer(escrow: EscrowRow): EscrowRow {
  if (escrow.status === 'funding') {
    throw new AppError('ESCROW_FUNDING_PENDING', 'The escrow could not be funded yet; it is posted or its debit returned within minutes (poll the status route).', {
      escrow_id: escrow.id,
    });
  }
  if (escrow.status === 'funding_failed') throw new AppError('ESCROW_FUNDING_FAILED', 'The escrow could not be funded; nothing was locked.', { escrow_id: escrow.id });
  return asAnswered(escrow, 'posted');
}

export function isPublic(escrow: EscrowRow): boolean {
  return (store.PUBLIC_STATUSES as readonly string[]).includes(escrow.status);
}

/** The public `signatures` object: landed signatures by step, never a pending send's bytes. */
export function publicSignatures(escrow: EscrowRow): Record<string, string> {
  return Object.fromEntries(Object.entries(escrow.signatures as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** A step's lease lapsed before it recorded its send: another worker may be acting, so nothing is sent. */
class LeaseLostError extends Error {
  constructor(escrowId: string) {
    super(`escrow ${escrowId}: the lease lapsed before the send was recorded; nothing was sent`);
  }
}

const notAuthorized = () =>
  new AppError('AGENT_NOT_AUTHORIZED', 'This agent is not authorized to post escrows for this employer (no active authorization matches X-Agent-Identifier).');
const notFound = () => new AppError('ESCROW_NOT_FOUND', 'No such escrow.');
const alreadyDelivered = (escrow: EscrowRow) =>
  new AppError('ESCROW_ALREADY_DELIVERED', `The escrow is ${escrow.status}; a deliverable is accepted once, while it is posted.`, { status: escrow.status });
const invalidTransaction = (code: CodeWithStatus<400>, message: string) => new AppError(code, message, { field: 'signed_transaction' });
const insufficientTreasury = (available: bigint | null, amount: bigint) =>
  new AppError('INSUFFICIENT_TREASURY_BALANCE', "The employer's treasury does not hold enough available balance for this escrow.", {
    amount_usd: formatUsd(amount),
    ...(available !== null && { available_usd: formatUsd(available) }),
  });

/** A deliverable that cannot be fetched: the URI's fault is 400, the remote's 422. The fee is kept (< 500). */
function fetchRefusal(error: DeliverableFetchError): AppError {
  const field = { field: 'deliverable_uri', reason: error.code };
  switch (error.code) {
    case 'UNSUPPORTED_SCHEME':
    case 'INVALID_URI':
    case 'FORBIDDEN_ADDRESS':
      return new AppError('DELIVERABLE_URI_REFUSED', `deliverable_uri: ${error.message}`, field);
    case 'TOO_LARGE':
      return new AppError('DELIVERABLE_TOO_LARGE', error.message, field);
    default:
      return new AppError('DELIVERABLE_UNREACHABLE', error.message, field);
  }
}
