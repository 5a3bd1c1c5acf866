import type { Employer, Schema } from './api';
import { formatDay } from './format';

/**
 * Pay schedules (issue 29) as the pages show them. The rules themselves (next pay date, the period
 * it pays, the pay for a period) are the server's: the employer answer carries the next pay date
 * and period, GET /api/employers/{id}/payroll/expected the amounts.
 */
export type PaySchedule = NonNullable<Employer['pay_schedule']>;
export type PayFrequency = PaySchedule['frequency'];
export type ExpectedPay = Schema<'PayrollExpectedPay'>;

export const FREQUENCIES: { value: PayFrequency; label: string }[] = [
  { value: 'monthly', label: 'Monthly' },
  { value: 'semi_monthly', label: 'Twice a month (the 15th and the last day)' },
  { value: 'biweekly', label: 'Every two weeks' },
  { value: 'weekly', label: 'Every week' },
];

/**
 * A payslip's pay date (a timestamp: the run's pay date at midnight UTC, or when the payment was
 * final) as its UTC day, like the PDF: a local-time reading would show a run's Nov 28 as Nov 27
 * west of UTC.
 */
export function formatPayDate(iso: string | null | undefined): string {
  return formatDay(iso?.slice(0, 10));
}

/** "Oct 1, 2026 – Oct 31, 2026"; an open end shows as "…". */
export function formatPeriod(start: string | null | undefined, end: string | null | undefined): string {
  if (!start && !end) return '—';
  return `${start ? formatDay(start) : '…'} – ${end ? formatDay(end) : '…'}`;
}

function ordinal(day: number): string {
  const tens = day % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[day % 10] ?? 'th';
  return `${day}${suffix}`;
}

/** "Monthly on the 28th", "Every two weeks from Dec 4, 2026". */
export function describeSchedule(schedule: PaySchedule): string {
  switch (schedule.frequency) {
    case 'monthly':
      if (schedule.pay_day === 31) return 'Monthly on the last day';
      return `Monthly on the ${ordinal(schedule.pay_day ?? 1)}${(schedule.pay_day ?? 1) > 28 ? ' (the last day in shorter months)' : ''}`;
    case 'semi_monthly':
      return 'Twice a month, on the 15th and the last day';
    case 'biweekly':
      return `Every two weeks from ${formatDay(schedule.anchor_date)}`;
    case 'weekly':
      return `Every week from ${formatDay(schedule.anchor_date)}`;
  }
}
