import type { MonthlyCost } from './store.js';

/** The first instant (UTC) of the calendar month `monthsBack` months before `now`'s. */
export function monthStart(now: Date, monthsBack: number): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1));
}

const monthKey = (start: Date) => start.toISOString().slice(0, 7);

/**
 * The last `months` UTC calendar months up to `now`'s, oldest first, each with what was paid:
 * a month without a paid run is a zero (it was observed: the runs table is the whole history).
 */
export function fillMonths(now: Date, months: number, paid: MonthlyCost[]): MonthlyCost[] {
  const byMonth = new Map(paid.map((m) => [m.month, m]));
  return Array.from({ length: months }, (_, i) => {
    const month = monthKey(monthStart(now, months - 1 - i));
    return byMonth.get(month) ?? { month, paid: 0n, runs: 0, recipients: 0 };
  });
}
