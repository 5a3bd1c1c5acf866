import type { Database, Db } from '../../db/client.js';
import { AppError } from '../../errors.js';
import type { ReputationTier } from '../reputation/index.js';
import { normaliseIdentifier, parseAgentIdentifier } from './identifiers.js';
import type { AgentRequestVerifier, SignedAgentRequest } from './request-proof.js';
import { effectiveCaps, evaluateGates } from './spend-gates.js';
import * as store from './store.js';

/** An agent about to spend an employer's money: its authorization (proof checked) and its tier. */
export interface Spender {
  authorization: store.AuthorizationRow;
  identifier: string;
  tier: ReputationTier;
}

export interface SpenderTiers {
  tierOf(identity: { solana?: string | null; erc8004AgentId?: bigint | null }): Promise<{ tier: ReputationTier }>;
}

export type Reservation<R, P> = { kind: 'reserved'; value: R; authorization: store.AuthorizationRow } | { kind: 'existing'; value: P };

/**
 * The one spend reservation of an agent (spec 8.2, gates 1-5), shared by agent/pay and
 * escrow/post: both draw on one authorization's caps, and every kind of reservation counts toward
 * them (`store.spendUsage`, with escrow's posts as `escrowReservations`). The gates are
 * evaluated and the reservation recorded in one transaction holding the authorization row, so
 * parallel spends of any kind, on any instance, cannot overshoot a cap.
 */
export class SpendReservations {
  constructor(
    private readonly database: Database,
    private readonly verifier: AgentRequestVerifier,
    private readonly tiers: SpenderTiers,
    private readonly escrowReservations: store.OtherReservations,
  ) {}

  /**
   * The employer's active authorization whose identifier is exactly this one, with its identity
   * proof checked; `refusal` is the 403 when there is none. The tier is looked up only when the
   * owner set elevated caps (it matters for nothing else).
   */
  async spender(employerId: string, rawIdentifier: string, proof: SignedAgentRequest, refusal: () => AppError): Promise<Spender> {
    const identifier = normaliseIdentifier(rawIdentifier);
    const authorization = await store.findActiveByIdentifier(this.database.db, employerId, identifier);
    if (!authorization) throw refusal();
    await this.verifier.verifyAuthorized(authorization, identifier, proof);
    const elevated = authorization.elevatedPerTxCap !== null || authorization.elevatedPerDayCap !== null;
    const tier = elevated ? (await this.tiers.tierOf(identityOf(identifier))).tier : 'unknown';
    return { authorization, identifier, tier };
  }

  /**
   * Locks the authorization (revoked meanwhile: `refusal`), answers what `existing` finds (an
   * Idempotency-Key retry is answered, never gated again), else evaluates gates 1-5 against
   * everything the authorization has reserved and runs `record`, which inserts the reservation
   * in the same transaction. A gate's refusal is a 403 naming the gate.
   */
  async reserve<R, P = never>(
    spender: Spender,
    payment: { amount: bigint; recipient: string },
    refusal: () => AppError,
    record: (db: Db, authorization: store.AuthorizationRow) => Promise<R>,
    existing?: (db: Db, authorization: store.AuthorizationRow) => Promise<P | null>,
  ): Promise<Reservation<R, P>> {
    return this.database.transaction(async (tx) => {
      const authorization = await store.lockAuthorization(tx.db, spender.authorization.id);
      if (!authorization) throw refusal();
      const found = existing ? await existing(tx.db, authorization) : null;
      if (found !== null) return { kind: 'existing' as const, value: found };
      const gate = evaluateGates(authorization, effectiveCaps(authorization, spender.tier), await store.spendUsage(tx.db, authorization.id, this.escrowReservations), payment);
      if (gate) throw new AppError(gate.code, gate.message, { gate: gate.gate, ...gate.details });
      return { kind: 'reserved' as const, value: await record(tx.db, authorization), authorization };
    });
  }
}

/** The on-chain identity an agent identifier names, for its tier (none for an opaque one). */
export function identityOf(identifier: string): { solana?: string; erc8004AgentId?: bigint } {
  const identity = parseAgentIdentifier(identifier);
  if (identity.kind === 'erc8004') return { erc8004AgentId: identity.agentId };
  if (identity.kind === 'solana') return { solana: identity.publicKey };
  return {};
}
