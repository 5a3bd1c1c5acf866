/**
 * An employer's pay schedule (issue 29): when payroll pays, and which days each pay date pays for.
 * Pure functions over UTC calendar days written `YYYY-MM-DD` (docs/decisions.md, "Pay schedules").
 *
 * - monthly: on `payDay` (1-31) of every month, clamped to the month's last day (31 -> Feb 28/29).
 *   Pay day 31 is the month-end schedule: it pays its own calendar month. Any other pay day pays
 *   the previous calendar month (in arrears). The rule follows the pay day, not the date: pay day
 *   28 lands on February's last day yet still pays January, so March 28 does not pay February twice.
 * - semi_monthly: on the 15th and on the month's last day. Pays the half-month ending on or before
 *   the pay date: 1st-15th, then 16th-last day.
 * - weekly / biweekly: every 7 / 14 days from `anchorDate` (the first pay date; none before it).
 *   Pays the 7 / 14 days ending on the pay date.
 */

export const PAY_FREQUENCIES = ['monthly', 'semi_monthly', 'biweekly', 'weekly'] as const;
export type PayFrequency = (typeof PAY_FREQUENCIES)[number];

export type PaySchedule =
  | { frequency: 'monthly'; payDay: number }
  | { frequency: 'semi_monthly' }
  | { frequency: 'weekly' | 'biweekly'; anchorDate: string };

/** A pay period: both days included. */
export interface PayPeriod {
  start: string;
  end: string;
}

const DAY_MS = 86_400_000;
const REPEAT_DAYS = { weekly: 7, biweekly: 14 } as const;
/** The semi-monthly first pay day; the second is the month's last day. */
const MID_MONTH = 15;
/** The monthly pay day that means "the last day of the month". */
const MONTH_END = 31;

const toDay = (date: Date) => date.toISOString().slice(0, 10);
const fromDay = (day: string) => new Date(`${day}T00:00:00Z`);
const addDays = (day: string, days: number) => toDay(new Date(fromDay(day).getTime() + days * DAY_MS));
const daysBetween = (from: string, to: string) => Math.round((fromDay(to).getTime() - fromDay(from).getTime()) / DAY_MS);

/** `month` is 0-based and may run past either end of the year (Date.UTC carries it). */
const dayOf = (year: number, month: number, day: number) => toDay(new Date(Date.UTC(year, month, day)));
const lastDayOfMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

function parts(day: string): { year: number; month: number; date: number } {
  const d = fromDay(day);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth(), date: d.getUTCDate() };
}

/** A date-time as its UTC calendar day. */
export function utcDay(date: Date): string {
  return toDay(date);
}

/** The pay dates of one month, in order. */
function monthPayDates(schedule: PaySchedule & { frequency: 'monthly' | 'semi_monthly' }, year: number, month: number): string[] {
  const last = lastDayOfMonth(year, month);
  if (schedule.frequency === 'monthly') return [dayOf(year, month, Math.min(schedule.payDay, last))];
  return [dayOf(year, month, MID_MONTH), dayOf(year, month, last)];
}

/** The first pay date on or after `from`. */
export function nextPayDate(schedule: PaySchedule, from: string): string {
  if ('anchorDate' in schedule) {
    const every = REPEAT_DAYS[schedule.frequency];
    const since = daysBetween(schedule.anchorDate, from);
    return since <= 0 ? schedule.anchorDate : addDays(schedule.anchorDate, Math.ceil(since / every) * every);
  }
  const { year, month } = parts(from);
  // This month's pay dates, then next month's: one of them is on or after `from`.
  const candidates = [...monthPayDates(schedule, year, month), ...monthPayDates(schedule, year, month + 1)];
  return candidates.find((day) => day >= from)!;
}

/** The pay period a pay on `payDate` pays (see the conventions above). */
export function periodFor(schedule: PaySchedule, payDate: string): PayPeriod {
  if ('anchorDate' in schedule) {
    return { start: addDays(payDate, 1 - REPEAT_DAYS[schedule.frequency]), end: payDate };
  }
  const { year, month, date } = parts(payDate);
  if (schedule.frequency === 'monthly') {
    const paid = schedule.payDay === MONTH_END ? month : month - 1;
    return { start: dayOf(year, paid, 1), end: dayOf(year, paid + 1, 0) };
  }
  const last = lastDayOfMonth(year, month);
  if (date === last) return { start: dayOf(year, month, MID_MONTH + 1), end: payDate };
  if (date >= MID_MONTH) return { start: dayOf(year, month, 1), end: dayOf(year, month, MID_MONTH) };
  // Before the 15th: the second half of the previous month.
  return { start: dayOf(year, month - 1, MID_MONTH + 1), end: dayOf(year, month, 0) };
}

/** The next pay date on or after `from` and the period it pays. */
export function nextPayment(schedule: PaySchedule, from: string): { payDate: string; period: PayPeriod } {
  const payDate = nextPayDate(schedule, from);
  return { payDate, period: periodFor(schedule, payDate) };
}

/** How a schedule is stored (the employer's three columns; all null: no schedule). */
export interface PayScheduleColumns {
  paySchedule: PayFrequency | null;
  payDay: number | null;
  payAnchorDate: string | null;
}

/** The stored columns as a schedule; null when none is set. The table's CHECK keeps them consistent. */
export function scheduleFromColumns(row: PayScheduleColumns): PaySchedule | null {
  switch (row.paySchedule) {
    case null:
      return null;
    case 'monthly':
      return { frequency: 'monthly', payDay: row.payDay! };
    case 'semi_monthly':
      return { frequency: 'semi_monthly' };
    default:
      return { frequency: row.paySchedule, anchorDate: row.payAnchorDate! };
  }
}

/** A schedule (null clears it) as the employer's columns. */
export function scheduleColumns(schedule: PaySchedule | null): PayScheduleColumns {
  return {
    paySchedule: schedule?.frequency ?? null,
    payDay: schedule?.frequency === 'monthly' ? schedule.payDay : null,
    payAnchorDate: schedule && 'anchorDate' in schedule ? schedule.anchorDate : null,
  };
}
