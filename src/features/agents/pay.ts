import { createHash } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database, Db } from '../../db/client.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { formatUsd } from '../../money.js';
import type { EmployersService } from '../employers/index.js';
import { encodeMemo } from '../memo/index.js';
import { agentSpikeDetected } from '../notifications/index.js';
import { parseAgentIdentifier } from './identifiers.js';
import type { AgentRequestVerifier, SignedAgentRequest } from './request-proof.js';
import type { ReputationTier } from '../reputation/index.js';
import { SpendReservations } from './spend.js';
import * as store from './store.js';
import type { OtherReservations } from './store.js';
import { TreasuryTransferBatcher } from './transfer-batcher.js';

/** What agent/pay needs of the reputation feature: an agent's tier, and a feedback write queued in our transaction. */
export interface ReputationPort {
  tierOf(identity: { solana?: string | null; erc8004AgentId?: bigint | null }): Promise<{ tier: ReputationTier }>;
  enqueue(
    db: Db,
    write: { kind: 'erc8004_feedback'; writeType: string; subject: string; sourceType: string; sourceId: string; amount: bigint; score: number },
  ): Promise<void>;
}

export interface AgentPayRequest {
  identifier: string;
  employerId: string;
  recipient: Address;
  amount: bigint;
  reference: string | null;
  idempotencyKey: string | null;
  /** The request as sent, for the identity proof. */
  proof: SignedAgentRequest;
  feePaymentId: string | null;
  /** The fee settled before and its answer was lost (`c.var.payment.redeemed`): the call it bought is answered, not repeated. */
  redeemed?: boolean;
}

export interface AgentPayResult {
  call: store.PayCallRow;
  employerAccountId: string;
  explorerUrl: string | null;
  /** True when an Idempotency-Key retry returned the first call's result. */
  replayed: boolean;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// A reservation this old without a settled transfer is looked at by the reconciler.
const STALE_RESERVATION_SECONDS = 120;
// A broadcast transfer with no receipt after this long is given up (its nonce has been reused since).
const LOST_TRANSFER_SECONDS = 3600;

const notAuthorized = () =>
  new AppError('AGENT_NOT_AUTHORIZED', 'This agent is not authorized to pay for this employer (no active authorization matches X-Agent-Identifier).');

/**
 * POST /api/mpp/agent/pay after the payment gate (spec 4.4, 8.2): the agent's one spend
 * reservation (its authorization, proof, gates 1-5: `SpendReservations`, shared with escrow/post),
 * the treasury check (422), the transfer from the employer's treasury on Tempo, and gate 6 after
 * success.
 */
export interface AgentPayServiceOptions {
  database: Database;
  verifier: AgentRequestVerifier;
  employers: EmployersService;
  tempo: TempoChain;
  reputation: ReputationPort;
  /** Escrow's posts, which count toward the same caps (escrow's `posterReservations`). */
  escrowReservations: OtherReservations;
  log: Logger;
}

export class AgentPayService {
  private readonly transfers: TreasuryTransferBatcher;
  private readonly spend: SpendReservations;
  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly tempo: TempoChain;
  private readonly reputation: ReputationPort;
  private readonly log: Logger;

  constructor({ database, verifier, employers, tempo, reputation, escrowReservations, log }: AgentPayServiceOptions) {
    this.database = database;
    this.employers = employers;
    this.tempo = tempo;
    this.reputation = reputation;
    this.log = log;
    this.transfers = new TreasuryTransferBatcher(tempo);
    this.spend = new SpendReservations(database, verifier, reputation, escrowReservations);
  }

  async pay(request: AgentPayRequest): Promise<AgentPayResult> {
    if (request.idempotencyKey !== null && !KEY_PATTERN.test(request.idempotencyKey)) {
      throw new AppError('VALIDATION_ERROR', 'Idempotency-Key: must be 1-255 printable ASCII characters', { field: 'Idempotency-Key' });
    }
    // Before the identity proof: the replay store would refuse the signature the redeemed request
    // repeats. The gate redeems only a byte-identical request, and a call recorded under this fee
    // passed the proof when it was made.
    if (request.redeemed && request.feePaymentId !== null) {
      const earlier = await store.findCallByFee(this.database.db, request.feePaymentId);
      if (earlier) return this.answerEarlier(earlier);
    }
    const spender = await this.spend.spender(request.employerId, request.identifier, request.proof, notAuthorized);
    const requestHash = createHash('sha256')
      .update(JSON.stringify([request.employerId, request.recipient.toLowerCase(), request.amount.toString(), request.reference]))
      .digest('hex');

    const reserved = await this.spend.reserve(
      spender,
      { amount: request.amount, recipient: request.recipient },
      notAuthorized, // revoked in between
      (db, authorization) => {
        const callId = crypto.randomUUID();
        return store.insertCall(db, {
          id: callId,
          // Public on chain: tags and a hash of this call, no ids (src/features/memo/codec.ts).
          memo: encodeMemo({ type: 'agent_payment', employerId: request.employerId, employeeId: authorization.id, runId: callId, amount: request.amount }),
          authorizationId: authorization.id,
          employerId: request.employerId,
          recipientWallet: request.recipient,
          amount: request.amount,
          reference: request.reference,
          feePaymentId: request.feePaymentId,
          idempotencyKey: request.idempotencyKey,
          requestHash,
        });
      },
      (db, authorization) => (request.idempotencyKey === null ? Promise.resolve(null) : store.findCallByKey(db, authorization.id, request.idempotencyKey)),
    );

    const employer = await this.employers.findEmployer(request.employerId);
    const employerAccountId = employer?.employerAccountId ?? null;
    if (reserved.kind === 'existing') return this.replay(reserved.value, requestHash, employerAccountId);
    const { value: call, authorization } = reserved;
    if (employerAccountId === null) {
      await this.release(call, NO_TREASURY);
      throw insufficientTreasury(0n, call.amount);
    }
    const accountId = BigInt(employerAccountId);
    const account = await this.tempo.treasuryAccount(accountId);
    if (!account || account.available < call.amount) {
      await this.release(call, SHORT_TREASURY);
      throw insufficientTreasury(account?.available ?? 0n, call.amount);
    }

    let txHash: Hex;
    try {
      ({ txHash } = await this.transfers.transfer({
        accountId,
        to: request.recipient,
        amount: call.amount,
        memo: call.memo as Hex,
        beforeBroadcast: async (signed) => {
          if (!(await store.recordCallTransfer(this.database.db, call.id, signed.hash))) throw new Error('the reservation was released by the reconciler before its transfer was sent');
        },
      }));
    } catch (error) {
      throw await this.transferFailed(call, error);
    }
    const paid = await this.settlePaid(call, authorization, txHash);
    return { call: paid, employerAccountId, explorerUrl: this.tempo.explorerUrl(txHash), replayed: false };
  }

  /**
   * Settles reservations a crash or a lost answer left behind: a transfer that mined is paid (with
   * gate 6 and reputation as usual), one that reverted or never went out is released.
   */
  async reconcileStale(limit = 50): Promise<{ paid: number; released: number }> {
    const result = { paid: 0, released: 0 };
    for (const call of await store.staleReservations(this.database.db, STALE_RESERVATION_SECONDS, limit)) {
      const ageSeconds = (this.database.clock.nowMs() - call.createdAt.getTime()) / 1000;
      const receipt = call.txHash ? await this.tempo.connection.receipt(call.txHash as Hex) : null;
      if (receipt?.status === 'success') {
        const authorization = await store.findAuthorization(this.database.db, call.employerId, call.authorizationId);
        if (authorization) {
          await this.settlePaid(call, authorization, call.txHash as Hex);
          result.paid++;
        }
      } else if (!call.txHash) {
        // Nothing recorded: its request stalled or died before sending, and can no longer send (`recordCallTransfer`).
        if (await store.releaseCall(this.database.db, call.id, 'the transfer was never sent', { unsentOnly: true })) result.released++;
      } else if (receipt || ageSeconds > LOST_TRANSFER_SECONDS) {
        if (await store.releaseCall(this.database.db, call.id, receipt ? 'the transfer reverted' : 'the transfer was never mined')) result.released++;
      }
    }
    return result;
  }

  /**
   * What a call made for a redeemed fee answers, as a fresh call in its state would: paid, the
   * payment; reserved, an unknown outcome (502); released, the refusal its release reason implies.
   */
  private async answerEarlier(call: store.PayCallRow): Promise<AgentPayResult> {
    if (call.status === 'paid' && call.txHash) {
      const employer = await this.employers.findEmployer(call.employerId);
      return { call, employerAccountId: employer?.employerAccountId ?? '', explorerUrl: this.tempo.explorerUrl(call.txHash as Hex), replayed: false };
    }
    if (call.status === 'released') throw releasedAnswer(call);
    throw outcomeUnknown(call.txHash);
  }

  /** An Idempotency-Key seen before: the first call's result, never a second transfer. */
  private replay(prior: store.PayCallRow, requestHash: string, employerAccountId: string | null): AgentPayResult {
    if (prior.requestHash !== requestHash) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different payment.');
    }
    if (prior.status !== 'paid' || !prior.txHash) {
      throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A payment with this Idempotency-Key is still in progress.');
    }
    return { call: prior, employerAccountId: employerAccountId ?? '', explorerUrl: this.tempo.explorerUrl(prior.txHash as Hex), replayed: true };
  }

  /** reserved -> paid, then gate 6 and the reputation write, in one transaction. */
  private async settlePaid(call: store.PayCallRow, authorization: store.AuthorizationRow, txHash: Hex): Promise<store.PayCallRow> {
    return this.database.transaction(async (tx) => {
      const paid = await store.markCallPaid(tx.db, call.id, txHash);
      if (!paid) return { ...call, status: 'paid' as const, txHash }; // settled by someone else already
      const check = await store.anomalyCheck(tx.db, paid);
      if (check.priorPayments >= 5 && check.anomalous) {
        const halved = await store.halveCap(tx.db, paid.authorizationId);
        if (halved) {
          await agentSpikeDetected(tx.db, {
            employerId: paid.employerId,
            authorizationId: halved.id,
            label: halved.label,
            amount: paid.amount,
            median: check.median ?? 0n,
            newCap: halved.perTxCap,
            anomalyKey: paid.id,
          });
        }
      }
      const identity = parseAgentIdentifier(authorization.agentIdentifier);
      if (identity.kind === 'erc8004') {
        await this.reputation.enqueue(tx.db, {
          kind: 'erc8004_feedback',
          writeType: 'agent-pay',
          subject: identity.agentId.toString(),
          sourceType: 'agent_pay',
          sourceId: paid.id,
          amount: paid.amount,
          score: 100,
        });
      }
      return paid;
    });
  }

  private async release(call: store.PayCallRow, reason: string): Promise<void> {
    await store.releaseCall(this.database.db, call.id, reason);
  }

  /**
   * The error to answer for a failed transfer. A revert moved nothing: the reservation is released
   * (422 for a short or undelegated treasury, else 502). Any other failure after the transaction
   * was signed leaves the outcome unknown: the reservation stays (it still counts toward the caps)
   * until the reconciler reads the receipt.
   */
  private async transferFailed(call: store.PayCallRow, error: unknown): Promise<AppError> {
    if (error instanceof ChainRevertError) {
      await this.release(call, `${REVERTED}${error.errorName}`);
      if (error.errorName === 'InsufficientAvailable') return insufficientTreasury(null, call.amount);
      if (error.errorName === 'Unauthorized') return notDelegated();
      return new AppError('TRANSFER_FAILED', `The transfer was refused by the chain (${error.errorName}); nothing was paid.`);
    }
    const signed = await store.findCall(this.database.db, call.id);
    if (!signed?.txHash) {
      await this.release(call, `transfer not sent: ${(error as Error).message}`);
      return new AppError('TRANSFER_FAILED', 'The transfer could not be sent; nothing was paid.');
    }
    this.log.error({ callId: call.id, txHash: signed.txHash, err: error }, 'agent payment outcome unknown');
    return outcomeUnknown(signed.txHash);
  }
}

// Why a reservation was released (`failure_reason`): a redeemed call answers what they imply.
const NO_TREASURY = 'the employer has no treasury account';
const SHORT_TREASURY = 'insufficient treasury balance';
const REVERTED = 'transfer reverted: ';

/**
 * The refusal a released call implies, as its first answer gave it: a short treasury or a missing
 * delegation is 422 (the fee is kept, as then); any other failed transfer (reverted, never sent,
 * never mined) paid nothing and is 502 TRANSFER_FAILED, so the gate refunds the fee, as then.
 */
function releasedAnswer(call: store.PayCallRow): AppError {
  const reason = call.failureReason ?? '';
  if (reason === NO_TREASURY || reason === SHORT_TREASURY || reason === `${REVERTED}InsufficientAvailable`) return insufficientTreasury(null, call.amount);
  if (reason === `${REVERTED}Unauthorized`) return notDelegated();
  return new AppError('TRANSFER_FAILED', `The transfer did not go through (${reason || 'released'}); nothing was paid.`);
}

const notDelegated = () =>
  new AppError('TREASURY_NOT_DELEGATED', "The service is not an agent of this employer's treasury account; its administrator must allow it.");

/** A transfer signed (or maybe signed) whose receipt is not known: it settles or is released within minutes. */
const outcomeUnknown = (txHash: string | null) =>
  txHash
    ? new AppError('TRANSFER_OUTCOME_UNKNOWN', `The transfer ${txHash} was sent but not confirmed; it settles or is released within minutes.`, { tx_hash: txHash })
    : new AppError('TRANSFER_OUTCOME_UNKNOWN', 'The transfer was started but not confirmed; it settles or is released within minutes.');

const insufficientTreasury = (available: bigint | null, amount: bigint) =>
  new AppError('INSUFFICIENT_TREASURY_BALANCE', "The employer's treasury does not hold enough available balance for this payment.", {
    amount_usd: formatUsd(amount),
    ...(available !== null && { available_usd: formatUsd(available) }),
  });
