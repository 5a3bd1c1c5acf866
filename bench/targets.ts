/**
 * The performance targets the feature issues set, checked where each figure is measured; run.ts
 * lists every one in BENCHMARKS.md, met or not, and by how much a missed one misses.
 */
export interface TargetCheck {
  figure: string;
  goal: string;
  measured: string;
  met: boolean;
  /** Empty when met. */
  gap: string;
}

export const targetChecks: TargetCheck[] = [];

const show = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(value >= 100 ? 0 : 2));

/**
 * Records `measured` against a bound: `below` (<), `atMost` (<=) or `atLeast` (>=), in `unit`;
 * `why`, for a miss, says what holds the figure back.
 */
export function checkTarget(figure: string, measured: number, bound: { below: number } | { atMost: number } | { atLeast: number }, unit: string, why = ''): void {
  const because = why ? `; ${why}` : '';
  const suffix = unit ? ` ${unit}` : '';
  if ('atLeast' in bound) {
    const met = measured >= bound.atLeast;
    targetChecks.push({
      figure,
      goal: `>= ${show(bound.atLeast)}${suffix}`,
      measured: `${show(measured)}${suffix}`,
      met,
      gap: met ? '' : `${show(bound.atLeast - measured)}${suffix} short (${(measured / bound.atLeast).toFixed(2)} of the target)${because}`,
    });
    return;
  }
  const [limit, op] = 'below' in bound ? [bound.below, '<'] : [bound.atMost, '<=' as const];
  const met = op === '<' ? measured < limit : measured <= limit;
  targetChecks.push({
    figure,
    goal: `${op} ${show(limit)}${suffix}`,
    measured: `${show(measured)}${suffix}`,
    met,
    gap: met ? '' : `${show(measured - limit)}${suffix} over (${(measured / limit).toFixed(1)}x the limit)${because}`,
  });
}
