import type { ReputationTier } from '../reputation/index.js';

/**
 * Reputation-scaled escrow expiry (spec 4.4, 8.1). A worker with no track record gets the whole
 * requested window; the more settled escrows a worker has, the shorter the window it is held to,
 * down to its tier's floor, so money promised to a proven worker is not locked up for days when it
 * delivers in hours. Never longer than asked, never below 1 hour.
 *
 * | tier        | attestations | applied                          |
 * |-------------|--------------|----------------------------------|
 * | unknown     | 0            | requested                        |
 * | new         | 1-4          | requested                        |
 * | established | 5-19         | 3/4 of requested, floor 12 h     |
 * | trusted     | 20+          | 1/2 of requested, floor 6 h      |
 */
const SCALING: Record<ReputationTier, { numerator: number; denominator: number; floorHours: number } | null> = {
  unknown: null,
  new: null,
  established: { numerator: 3, denominator: 4, floorHours: 12 },
  trusted: { numerator: 1, denominator: 2, floorHours: 6 },
};

export function appliedExpiryHours(requestedHours: number, tier: ReputationTier): number {
  const scaling = SCALING[tier];
  if (!scaling) return requestedHours;
  const scaled = Math.ceil((requestedHours * scaling.numerator) / scaling.denominator);
  return Math.min(requestedHours, Math.max(scaling.floorHours, scaled, 1));
}
