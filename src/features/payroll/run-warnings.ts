import { displayUsd, formatUsd } from '../../money.js';

/**
 * What a careful payroll clerk would stop and ask about before paying: the rules behind the
 * wizard's warnings (POST /api/employers/{id}/payroll/checks). They warn, never refuse: a bonus
 * month or a correction run is legitimate, so the owner confirms and goes on.
 */

/** An amount more than this many percent above or below the salary for the period is an outlier. */
export const OUTLIER_PERCENT = 50n;
/** Paying an employee again within this many days is worth a second look. */
export const RECENT_DAYS = 7;
const DAY_MS = 86_400_000;

export interface RunWarning {
  code: 'PERIOD_ALREADY_PAID' | 'RECENTLY_PAID' | 'AMOUNT_OUTLIER';
  message: string;
  employee_id: string | null;
  run_id: string | null;
  amount_usd: string | null;
  expected_usd: string | null;
  threshold_percent: number | null;
}

export interface Period {
  start: Date;
  end: Date;
}

const CENT = 10_000n;

/** The salary a period earns, to the nearest cent: whole days (both ends included) of 365, or a twelfth of the year without a period. */
export function expectedPay(annualSalary: bigint, period: Period | null): bigint {
  const days = period ? BigInt(Math.round((period.end.getTime() - period.start.getTime()) / DAY_MS) + 1) : null;
  const exact = days === null ? annualSalary / 12n : (annualSalary * days) / 365n;
  return ((exact + CENT / 2n) / CENT) * CENT;
}

/** How long ago, in the words a person uses: minutes, hours, then days. */
function ago(from: Date, now: Date): string {
  const minutes = Math.max(1, Math.round((now.getTime() - from.getTime()) / 60_000));
  const [count, unit] = minutes < 60 ? [minutes, 'minute'] : minutes < 48 * 60 ? [Math.round(minutes / 60), 'hour'] : [Math.round(minutes / 1440), 'day'];
  return `${count} ${unit}${count === 1 ? '' : 's'} ago`;
}

const warning = (fields: Partial<RunWarning> & Pick<RunWarning, 'code' | 'message'>): RunWarning => ({
  employee_id: null,
  run_id: null,
  amount_usd: null,
  expected_usd: null,
  threshold_percent: null,
  ...fields,
});

export interface RunUnderCheck {
  items: { employeeId: string; fullName: string; annualSalary: bigint; amount: bigint }[];
  period: Period | null;
  /** Submitted or paid runs of this employer whose pay period overlaps `period`. */
  overlapping: { id: string; payPeriodStart: Date | null; payPeriodEnd: Date | null }[];
  /** The latest submitted or paid payment of each of these employees in the last RECENT_DAYS. */
  recent: { employeeId: string; runId: string; createdAt: Date }[];
}

export function runWarnings(run: RunUnderCheck, now: Date): RunWarning[] {
  const day = (d: Date | null) => d?.toISOString().slice(0, 10) ?? '?';
  const names = new Map(run.items.map((i) => [i.employeeId, i.fullName]));
  const warnings = run.overlapping.map((other) =>
    warning({
      code: 'PERIOD_ALREADY_PAID',
      run_id: other.id,
      message: `Another payroll run already paid ${day(other.payPeriodStart)} to ${day(other.payPeriodEnd)}, which overlaps this pay period.`,
    }),
  );
  for (const paid of run.recent) {
    warnings.push(
      warning({
        code: 'RECENTLY_PAID',
        employee_id: paid.employeeId,
        run_id: paid.runId,
        message: `${names.get(paid.employeeId)} was paid by another run ${ago(paid.createdAt, now)}.`,
      }),
    );
  }
  for (const item of run.items) {
    const expected = expectedPay(item.annualSalary, run.period);
    if (expected === 0n) continue; // no salary on record: nothing to compare with
    const off = item.amount > expected ? item.amount - expected : expected - item.amount;
    if (off * 100n <= expected * OUTLIER_PERCENT) continue;
    warnings.push(
      warning({
        code: 'AMOUNT_OUTLIER',
        employee_id: item.employeeId,
        amount_usd: formatUsd(item.amount),
        expected_usd: formatUsd(expected),
        threshold_percent: Number(OUTLIER_PERCENT),
        message: `${displayUsd(item.amount)} for ${item.fullName} is more than ${OUTLIER_PERCENT}% away from their salary for the period (${displayUsd(expected)}).`,
      }),
    );
  }
  return warnings;
}
