/** Dates and addresses as the pages show them (money is lib/money.ts). */

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' });
}

export function shortAddress(address: string): string {
  return address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

// The charts' dates are UTC calendar days and months (the server buckets in UTC): shown in UTC so a
// reader west of Greenwich does not see yesterday's date.
const DAY = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
const DAY_SHORT = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
const MONTH = new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const MONTH_SHORT = new Intl.DateTimeFormat('en-US', { month: 'short', timeZone: 'UTC' });

/** "2026-11-26" -> "Nov 26, 2026" (short: "Nov 26"); none: "—". */
export function formatDay(day: string | null | undefined, short = false): string {
  if (!day) return '—';
  return (short ? DAY_SHORT : DAY).format(new Date(`${day}T00:00:00Z`));
}

/** "2026-11" -> "November 2026" (short: "Nov"). */
export function formatMonth(month: string, short = false): string {
  return (short ? MONTH_SHORT : MONTH).format(new Date(`${month}-01T00:00:00Z`));
}
