import { badRequest } from '../../errors.js';
import { TOTAL_BPS } from './optimizer.js';

/** A percentage with at most 2 decimal places, as JavaScript prints the number: "33.33", "100", "0.5". */
const PERCENT_PATTERN = /^(\d{1,3})(?:\.(\d{1,2}))?$/;

/**
 * Rebalance percentages (one per yield source) to basis points, exactly: each entry must be a
 * finite number from 0 to 100 with at most 2 decimal places, and the entries must sum to exactly
 * 100. The conversion reads the number's decimal form, so no float arithmetic touches it
 * (33.33 -> 3333 bps, where 33.33 * 100 would be 3332.9999999999995). Any violation is a 400
 * naming the field (`allocation`, `allocation.2`, `params.targetAllocation.0`).
 */
export function percentagesToBps(values: readonly unknown[], field: string, sources: readonly string[]): number[] {
  if (values.length !== sources.length) {
    throw badRequest(field, `must have ${sources.length} entries, one per yield source (${sources.join(', ')}); got ${values.length}`);
  }
  const bps = values.map((value, i) => {
    const at = `${field}.${i}`;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(at, 'must be a finite number');
    if (value < 0 || value > 100) throw badRequest(at, 'must be between 0 and 100');
    const match = PERCENT_PATTERN.exec(String(value));
    if (!match) throw badRequest(at, 'must have at most 2 decimal places');
    return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  });
  const sum = bps.reduce((a, b) => a + b, 0);
  if (sum !== TOTAL_BPS) {
    throw badRequest(field, `must sum to exactly 100; the entries sum to ${Math.trunc(sum / 100)}.${String(sum % 100).padStart(2, '0')}`);
  }
  return bps;
}

/**
 * The rebalance target: `allocation` or `params.targetAllocation` (spec 4.3). Both may be sent
 * only if they are the same list; none is a 400 on `allocation`.
 */
export function rebalanceTarget(body: { allocation?: number[] | undefined; params?: { targetAllocation?: number[] | undefined } | undefined }): {
  values: number[];
  field: string;
} {
  const direct = body.allocation;
  const nested = body.params?.targetAllocation;
  if (direct && nested && (direct.length !== nested.length || direct.some((v, i) => v !== nested[i]))) {
    throw badRequest('allocation', 'differs from params.targetAllocation; send one of them (or both the same)');
  }
  if (direct) return { values: direct, field: 'allocation' };
  if (nested) return { values: nested, field: 'params.targetAllocation' };
  throw badRequest('allocation', 'is required for rebalance (or params.targetAllocation): target percentages, one per yield source');
}
