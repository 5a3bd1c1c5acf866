import { canonicalEvmAddress } from '../../chains/evm/address.js';
import { displayUsd, formatUsd } from '../../money.js';
import type { ReputationTier } from '../reputation/index.js';
import type { AuthorizationRow } from './store.js';

/** Spec 8.2's "reputation-based eligibility for higher caps": the tiers (the escrow's) that unlock the owner's elevated caps. */
const ELEVATED_TIERS: ReadonlySet<ReputationTier> = new Set(['established', 'trusted']);

export interface EffectiveCaps {
  perTx: bigint;
  perDay: bigint;
  /** Whether the owner's elevated caps are the ones in force. */
  elevated: boolean;
}

/**
 * The caps in force: the elevated ones while the agent's tier is `established` or `trusted` and
 * gate 6 has not halved its cap (a spike suspends the elevation until the owner restores the cap).
 */
export function effectiveCaps(authorization: AuthorizationRow, tier: ReputationTier): EffectiveCaps {
  const eligible = ELEVATED_TIERS.has(tier) && authorization.capHalvedAt === null;
  const perTx = eligible && authorization.elevatedPerTxCap !== null ? authorization.elevatedPerTxCap : authorization.perTxCap;
  const perDay = eligible && authorization.elevatedPerDayCap !== null ? authorization.elevatedPerDayCap : authorization.perDayCap;
  return { perTx, perDay, elevated: eligible && (authorization.elevatedPerTxCap !== null || authorization.elevatedPerDayCap !== null) };
}

export const GATE_CODES = ['AGENT_PAUSED', 'PER_TX_CAP_EXCEEDED', 'PER_DAY_CAP_EXCEEDED', 'VELOCITY_EXCEEDED', 'RECIPIENT_NOT_ALLOWED'] as const;
export type GateCode = (typeof GATE_CODES)[number];
export interface GateRefusal {
  gate: 1 | 2 | 3 | 4 | 5;
  code: GateCode;
  message: string;
  details: Record<string, unknown>;
}

/**
 * Gates 1-5 of spec 8.2, in order, for one payment against what the authorization has used
 * (reserved and paid amounts over the rolling 24 h; calls in the last 60 s). The first that
 * refuses decides; null lets the payment through. Pure: the caller holds the authorization row.
 */
export function evaluateGates(
  authorization: AuthorizationRow,
  caps: EffectiveCaps,
  used: { spentLastDay: bigint; callsLastMinute: number },
  payment: { amount: bigint; recipient: string },
): GateRefusal | null {
  if (authorization.pausedAt !== null) {
    return {
      gate: 1,
      code: 'AGENT_PAUSED',
      message: 'Payments by this agent are paused by the employer.',
      details: { paused_at: authorization.pausedAt.toISOString(), pause_reason: authorization.pauseReason },
    };
  }
  if (payment.amount > caps.perTx) {
    return {
      gate: 2,
      code: 'PER_TX_CAP_EXCEEDED',
      message: `The payment is above this agent's per-transaction cap of ${displayUsd(caps.perTx)}.`,
      details: { per_tx_cap_usd: formatUsd(caps.perTx) },
    };
  }
  if (used.spentLastDay + payment.amount > caps.perDay) {
    return {
      gate: 3,
      code: 'PER_DAY_CAP_EXCEEDED',
      message: `The payment would take this agent past its ${displayUsd(caps.perDay)} cap for the last 24 hours.`,
      details: { per_day_cap_usd: formatUsd(caps.perDay), spent_last_24h_usd: formatUsd(used.spentLastDay) },
    };
  }
  if (used.callsLastMinute >= authorization.velocityPerMinute) {
    return {
      gate: 4,
      code: 'VELOCITY_EXCEEDED',
      message: `This agent may make at most ${authorization.velocityPerMinute} payments in 60 seconds.`,
      details: { velocity_per_minute: authorization.velocityPerMinute, retry_after_seconds: 60 },
    };
  }
  if (authorization.allowedRecipients !== null && !authorization.allowedRecipients.includes(recipientKey(payment.recipient))) {
    return {
      gate: 5,
      code: 'RECIPIENT_NOT_ALLOWED',
      message: "The recipient is not on this agent's allowlist.",
      details: { recipient: payment.recipient },
    };
  }
  return null;
}

/**
 * How a recipient is kept in an allowlist and compared with one: an EVM address in its EIP-55
 * spelling (`canonicalEvmAddress`; lists kept lower-cased before #33 were rewritten by
 * src/db/repairs.ts), a Solana address exactly as written (base58 is case-sensitive).
 */
export function recipientKey(address: string): string {
  return canonicalEvmAddress(address) ?? address;
}
