import type { Signature } from '@solana/kit';
import { keccak256, stringToHex, type Hex } from 'viem';
import { crashPoint } from '../../faults.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { SolanaChain } from '../../chains/solana/solana-chain.js';
import type { Database, Db } from '../../db/client.js';
import { badRequest } from '../../errors.js';
import { isSolanaKey, parseAgentId, parseAgentIdentifier } from '../agents/index.js';
import { listAuthorizations } from '../agents/index.js';
import * as store from './store.js';
import type { ReputationWriteRow, Subjects } from './store.js';

// ---- tiers (spec 4.4 escrow expiry, 8.1) ---------------------------------------------------------

export type ReputationTier = 'unknown' | 'new' | 'established' | 'trusted';

/**
 * Fewest vouching payers for each tier (distinct parties that paid the subject, see tierOf).
 * `unknown` (none) and `trusted` (20) are the spec's; the middle one is ours.
 */
export const TIER_NEW_MIN = 1;
export const TIER_ESTABLISHED_MIN = 5;
export const TIER_TRUSTED_MIN = 20;

export function reputationTier(count: number): ReputationTier {
  if (count >= TIER_TRUSTED_MIN) return 'trusted';
  if (count >= TIER_ESTABLISHED_MIN) return 'established';
  if (count >= TIER_NEW_MIN) return 'new';
  return 'unknown';
}

// ---- addresses (spec 4.5 and NOTES) --------------------------------------------------------------

export type ReputationAddress = { kind: 'solana'; key: string } | { kind: 'erc8004'; agentId: bigint };

/**
 * A reputation address: decimal digits are an ERC-8004 agent id (canonical decimal, uint256: one
 * spelling per agent, the one stored as subject); anything else must be base58 of exactly 32
 * bytes (a Solana key). Digits are tried first: a digits-only base58 key (the system program's
 * "111...1") is not a reputation subject, a numeric id always is. Everything else (0x addresses,
 * words, base58 of another length) is null.
 */
export function parseReputationAddress(address: string): ReputationAddress | null {
  if (/^\d+$/.test(address)) {
    const agentId = parseAgentId(address);
    return agentId === null ? null : { kind: 'erc8004', agentId };
  }
  return isSolanaKey(address) ? { kind: 'solana', key: address } : null;
}

// ---- queueing (called inside the caller's transaction) -------------------------------------------

/**
 * Spec 6: a fee settled on Solana (x402 rail C) earns its payer an attestation. The payment gate
 * calls this in the transaction that keeps the fee (`openPayments({ onSettled })`), so the write
 * exists exactly when the payment is kept; a refunded fee earns nothing. A payer that is not a
 * Solana key (never expected on rail C) gets none rather than failing the payment. It records no
 * payer: the subject paid, nobody paid it, so it vouches for nothing (no tier).
 */
export async function attestSettledPayment(db: Db, payment: { id: string; rail: string; payer: string | null; amount: bigint }): Promise<void> {
  if (payment.rail !== 'C' || !payment.payer || parseReputationAddress(payment.payer)?.kind !== 'solana') return;
  await enqueueReputationWrite(db, {
    kind: 'attestation',
    writeType: 'payment',
    subject: payment.payer,
    sourceType: 'payment',
    sourceId: payment.id,
    amount: payment.amount,
  });
}

export interface ReputationWrite {
  kind: 'attestation' | 'erc8004_feedback';
  /** Without the service slug: 'payment', 'agent-pay', 'escrow-settled', 'escrow-refunded', 'payroll'. */
  writeType: string;
  /** A base58 Solana key (attestation) or a decimal ERC-8004 agent id (feedback). */
  subject: string;
  sourceType: string;
  sourceId: string;
  /** Base units moved by the source event, if any. */
  amount?: bigint | null;
  /** Feedback score 0-100 (default 100). */
  score?: number | null;
  /**
   * Who paid the subject for the source event, when another party did (`employer:<uuid>`): what
   * tiers count. Leave it out when the subject paid (its fees, its agent/pay) or was refunded.
   */
  payer?: string | null;
}

/**
 * Queues a reputation artifact for the job to write on chain. Call it with the transaction that
 * makes the source event happen, so the write exists exactly when the event committed; the same
 * (source, subject, type) queued again is a no-op. A malformed write is a caller bug and throws.
 */
export async function enqueueReputationWrite(db: Db, write: ReputationWrite): Promise<void> {
  const parsed = parseReputationAddress(write.subject);
  const expected = write.kind === 'attestation' ? 'solana' : 'erc8004';
  if (parsed?.kind !== expected) throw new RangeError(`reputation ${write.kind} subject is not a ${expected} address: ${write.subject}`);
  if (write.score != null && !(Number.isInteger(write.score) && write.score >= 0 && write.score <= 100)) {
    throw new RangeError(`feedback score must be an integer 0-100, got ${write.score}`);
  }
  if (write.amount != null && write.amount < 0n) throw new RangeError('reputation amount must not be negative');
  await store.insertPendingWrite(db, {
    kind: write.kind,
    writeType: write.writeType,
    // An agent id is stored in its canonical decimal form, as summaries look it up.
    subject: parsed.kind === 'erc8004' ? parsed.agentId.toString() : write.subject,
    sourceType: write.sourceType,
    sourceId: write.sourceId,
    amount: write.amount ?? null,
    score: write.score ?? null,
    payer: write.payer ?? null,
  });
}

/**
 * The payer a settled escrow records for its worker: the employer whose treasury paid it, unless
 * the worker (its identifier or its wallet) is one of that employer's own agents, revoked ones
 * included: the requester paying itself, or an employer its own agent, vouches for nothing.
 */
export async function escrowPayer(db: Db, escrow: { employerId: string; workerAgentIdentifier: string; workerWalletAddress: string }): Promise<string | null> {
  const worker = new Set([escrow.workerAgentIdentifier, escrow.workerWalletAddress].map((id) => parseAgentIdentifier(id).canonical));
  const own = await listAuthorizations(db, escrow.employerId, true);
  return own.some((a) => worker.has(parseAgentIdentifier(a.agentIdentifier).canonical)) ? null : `employer:${escrow.employerId}`;
}

// ---- the service ---------------------------------------------------------------------------------

/** Another identity of the same party (a registered agent's Solana key and ERC-8004 id). */
export interface LinkedIdentity {
  solana?: string | null;
  erc8004AgentId?: bigint | null;
}

export interface ReputationOptions {
  /** SERVICE_SLUG: prefixes every type written on chain and shown (`svc-escrow-settled`). */
  serviceSlug: string;
  /** Attempts before a write is given up ('failed', visible to admins). Default 8. */
  maxAttempts?: number;
  /** How long a claimed write is left to its round (default LEASE_SECONDS; local crash tests shorten it). */
  leaseSeconds?: number;
  /** The other identity of the address's owner, when known; summaries then cover both. */
  linkedIdentity?: (address: ReputationAddress) => Promise<LinkedIdentity | null>;
}

export interface ProcessResult {
  written: number;
  retried: number;
  failed: number;
}

// A claimed row is left to its round this long. Far longer than one write takes (an EVM receipt,
// or a Solana blockhash's ~60-90 s life), so it only runs out for a round that died.
const LEASE_SECONDS = 5 * 60;
const BACKOFF_FIRST_SECONDS = 30;
const BACKOFF_MAX_SECONDS = 60 * 60;
// After an attempt that signed and sent (or may have sent), the retry waits until the signature
// can no longer land unseen: a Solana transaction unknown two minutes after signing never will
// (its blockhash expired), so the retry's lookup is decisive.
const AFTER_SEND_MIN_SECONDS = 2 * 60;
const LATEST_LIMIT = 10;
const MAX_ERROR_LENGTH = 1000;

/** Thrown from the pre-broadcast hook when another round took the row: nothing is sent. */
class ClaimLost extends Error {}

/** The retry delay after the `attempts`-th attempt failed: 30 s, doubling, at most 1 h. */
export function reputationBackoffSeconds(attempts: number): number {
  return Math.min(BACKOFF_FIRST_SECONDS * 2 ** Math.max(0, attempts - 1), BACKOFF_MAX_SECONDS);
}

/**
 * Writes queued reputation artifacts on chain (Solana attestations as signed memos, ERC-8004
 * feedback on Tempo from the service wallet) and reads them back as the 2.3 summary.
 */
/** The service's ports and its settings, in one object. */
export interface ReputationServiceOptions extends ReputationOptions {
  database: Database;
  chains: { tempo: TempoChain; solana: SolanaChain };
}

export class ReputationService {
  private readonly slug: string;
  private readonly maxAttempts: number;
  private readonly database: Database;
  private readonly chains: { tempo: TempoChain; solana: SolanaChain };
  private readonly options: ReputationOptions;

  constructor({ database, chains, ...options }: ReputationServiceOptions) {
    this.database = database;
    this.chains = chains;
    this.options = options;
    this.slug = options.serviceSlug;
    this.maxAttempts = options.maxAttempts ?? 8;
  }

  /** The on-chain type of a stored write type. */
  typeOf(writeType: string): string {
    return `${this.slug}-${writeType}`;
  }

  // ---- writing -----------------------------------------------------------------------------------

  /**
   * One round: claims due writes and writes each on chain. Every claim and result is its own
   * statement on the pool handle; no transaction stays open across a chain write.
   */
  async processDue(limit = 25): Promise<ProcessResult> {
    const db = this.database.db;
    const result: ProcessResult = { written: 0, retried: 0, failed: 0 };
    for (const row of await store.claimDueWrites(db, limit, this.options.leaseSeconds ?? LEASE_SECONDS)) {
      let sent = false;
      try {
        const earlier = row.pendingReference ? await this.lookUp(row, row.pendingReference) : 'absent';
        if (earlier === 'in_flight') {
          // Still in the node's mempool: writing again would write twice. Wait for it, without
          // giving up (a give-up while it may still land would hide a real write).
          await store.markAttemptFailed(db, row.id, row.attempts, `transaction ${row.pendingReference} is still pending`, {
            giveUp: false,
            delaySeconds: reputationBackoffSeconds(row.attempts),
          });
          result.retried += 1;
          continue;
        }
        const reference =
          earlier === 'landed'
            ? row.pendingReference!
            : await this.write(row, async (signed) => {
                if (!(await store.setPendingReference(db, row.id, row.attempts, signed))) throw new ClaimLost();
                crashPoint('reputation.before-send');
                sent = true;
              });
        crashPoint('reputation.after-send');
        await store.markWritten(db, row.id, reference);
        result.written += 1;
      } catch (error) {
        if (error instanceof ClaimLost) continue; // another round owns the row now
        const giveUp = row.attempts >= this.maxAttempts;
        const delaySeconds = Math.max(reputationBackoffSeconds(row.attempts), sent ? AFTER_SEND_MIN_SECONDS : 0);
        const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
        await store.markAttemptFailed(db, row.id, row.attempts, message, { giveUp, delaySeconds });
        if (giveUp) result.failed += 1;
        else result.retried += 1;
      }
    }
    return result;
  }

  /** Writes one row on chain; `recorded` runs with the signature/hash before it is sent. */
  private async write(row: ReputationWriteRow, recorded: (reference: string) => Promise<void>): Promise<string> {
    const type = this.typeOf(row.writeType);
    if (row.kind === 'attestation') {
      const attestation = {
        type,
        subject: row.subject,
        source: `${row.sourceType}:${row.sourceId}`,
        ...(row.amount !== null ? { amount: row.amount.toString() } : {}),
        ...(row.score !== null ? { score: row.score } : {}),
      };
      const { signature } = await this.chains.solana.writeAttestation(attestation, { beforeSend: (signed) => recorded(signed.signature) });
      return signature;
    }
    const { txHash } = await this.chains.tempo.giveFeedback(
      {
        agentId: BigInt(row.subject),
        score: row.score ?? 100,
        tag1: type,
        tag2: row.sourceType,
        endpoint: '',
        feedbackUri: '',
        // Binds the feedback to its source event: anyone holding the source key can check it.
        feedbackHash: keccak256(stringToHex(`${row.sourceType}:${row.sourceId}:${row.subject}:${row.writeType}`)),
      },
      { beforeBroadcast: (signed) => recorded(signed.hash) },
    );
    return txHash;
  }

  /**
   * What became of an earlier attempt's transaction. `absent` (never sent, dropped, reverted or
   * expired) means writing again cannot write twice: an EVM replacement takes the same nonce, and
   * a Solana signature unknown after AFTER_SEND_MIN_SECONDS can no longer land.
   */
  private async lookUp(row: ReputationWriteRow, reference: string): Promise<'landed' | 'in_flight' | 'absent'> {
    if (row.kind === 'attestation') {
      const status = await this.chains.solana.status(reference as Signature);
      return status.state === 'landed' ? 'landed' : 'absent';
    }
    const fate = await this.chains.tempo.connection.fate(reference as Hex);
    if (fate === 'pending') return 'in_flight';
    return fate?.status === 'success' ? 'landed' : 'absent';
  }

  /** Writes given up on after maxAttempts, newest first (admin view). */
  failedWrites(limit = 100): Promise<ReputationWriteRow[]> {
    return store.listFailedWrites(this.database.db, limit);
  }

  // ---- reading -----------------------------------------------------------------------------------

  /**
   * The 2.3 summary of an address (and its linked identity); 400 when it is neither a Solana key
   * nor an agent id, zero totals for one never seen. Only writes that landed count.
   * Solana figures come from the written attestation rows (each holds its signature). The Tempo
   * count and score are read from the registry itself, restricted to the service wallet as
   * client: anyone may give an agent feedback, and feedback from other clients (the agent's
   * friends, or a thousand sock puppets) must not move a score this service vouches for.
   */
  async summary(input: string): Promise<ReputationSummary> {
    const address = parseReputationAddress(input);
    if (!address) throw badRequest('address', 'must be a base58 Solana public key (32 bytes) or a decimal ERC-8004 agent id');
    const linked = (await this.options.linkedIdentity?.(address)) ?? null;
    const solanaKey = address.kind === 'solana' ? address.key : (linked?.solana ?? null);
    const agentId = address.kind === 'erc8004' ? address.agentId : (linked?.erc8004AgentId ?? null);
    const subjects: Subjects = { solana: solanaKey, agentId: agentId?.toString() ?? null };
    const db = this.database.db;
    const [byType, unified, solana, tempo] = await Promise.all([
      store.writtenTotalsByType(db, subjects),
      store.unifiedTotals(db, subjects),
      solanaKey === null ? null : store.latestWritten(db, subjects, 'attestation', LATEST_LIMIT),
      agentId === null ? null : this.tempoDetail(agentId, subjects),
    ]);
    const attestations = byType.filter((t) => t.kind === 'attestation');
    return {
      subject: { solana: solanaKey, tempo_agent_id: subjects.agentId },
      solana:
        solana === null
          ? null
          : {
              attestationCount: attestations.reduce((sum, t) => sum + t.count, 0),
              byType: Object.fromEntries(attestations.map((t) => [this.typeOf(t.writeType), t.count])),
              totalValueMovedBaseUnits: attestations.reduce((sum, t) => sum + t.amount, 0n).toString(),
              latest: solana.map((row) => ({
                type: this.typeOf(row.writeType),
                signature: row.chainReference!,
                explorer_url: this.chains.solana.explorerUrl(row.chainReference!),
                written_at: row.writtenAt!.toISOString(),
              })),
            },
      tempo,
      unified: {
        totalPayments: unified.payments,
        totalValueMovedBaseUnits: unified.valueMoved.toString(),
        agentFeedbackScore: tempo && tempo.feedbackCount > 0 ? tempo.averageScore : null,
        agentFeedbackCount: tempo?.feedbackCount ?? 0,
        workerAttestationCount: attestations.find((t) => t.writeType === 'escrow-settled')?.count ?? 0,
        firstActivityAt: unified.firstActivityAt?.toISOString() ?? null,
        latestActivityAt: unified.latestActivityAt?.toISOString() ?? null,
      },
      // Computed now from the chains and the written rows: this is when it was true.
      last_updated: this.database.clock.now().toISOString(),
    };
  }

  private async tempoDetail(agentId: bigint, subjects: Subjects): Promise<TempoDetail> {
    const tempo = this.chains.tempo;
    const [owner, onChain, latest] = await Promise.all([
      tempo.agentOwner(agentId),
      tempo.feedbackSummary(agentId, { clients: [tempo.serviceAddress] }),
      store.latestWritten(this.database.db, subjects, 'erc8004_feedback', LATEST_LIMIT),
    ]);
    return {
      agentId: agentId.toString(),
      owner,
      feedbackCount: onChain.count,
      averageScore: onChain.count > 0 ? onChain.averageScore : null,
      latest: latest.map((row) => ({
        type: this.typeOf(row.writeType),
        tx_hash: row.chainReference!,
        explorer_url: tempo.explorerUrl(row.chainReference! as Hex),
        written_at: row.writtenAt!.toISOString(),
      })),
    };
  }

  /**
   * Tier for escrow expiry and caps: how many distinct parties paid the agent id or the key
   * (written rows that record another payer and are not a zero score), from the rows (cheap, no
   * chain read; the summary is the chain-checked view). What the subject paid itself (its fees,
   * its agent/pay) is in the summary but vouches for nothing, so it cannot buy a tier.
   */
  async tierOf(identity: LinkedIdentity): Promise<{ tier: ReputationTier; count: number }> {
    const count = await store.countVouchingPayers(this.database.db, {
      solana: identity.solana ?? null,
      agentId: identity.erc8004AgentId?.toString() ?? null,
    });
    return { tier: reputationTier(count), count };
  }
}

export interface SolanaDetail {
  attestationCount: number;
  byType: Record<string, number>;
  totalValueMovedBaseUnits: string;
  latest: { type: string; signature: string; explorer_url: string; written_at: string }[];
}

export interface TempoDetail {
  agentId: string;
  owner: string | null;
  feedbackCount: number;
  averageScore: number | null;
  latest: { type: string; tx_hash: string; explorer_url: string | null; written_at: string }[];
}

export interface ReputationSummary {
  subject: { solana: string | null; tempo_agent_id: string | null };
  solana: SolanaDetail | null;
  tempo: TempoDetail | null;
  unified: {
    totalPayments: number;
    totalValueMovedBaseUnits: string;
    agentFeedbackScore: number | null;
    agentFeedbackCount: number;
    workerAttestationCount: number;
    firstActivityAt: string | null;
    latestActivityAt: string | null;
  };
  last_updated: string;
}
