const GROUPED = new Intl.NumberFormat('en-US');

/** Base units (6 decimals) as dollars with all six places, e.g. `$1,234.567890`: a live balance moves visibly every second. */
export function formatMicroUsd(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = GROUPED.format(abs / 1_000_000n);
  const fraction = String(abs % 1_000_000n).padStart(6, '0');
  return `${negative ? '-' : ''}$${whole}.${fraction}`;
}

/** A decimal USD string from the API ("12.500000") as base units. */
export function usdToUnits(decimal: string): bigint {
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction = ''] = decimal.replace(/^-/, '').split('.');
  const units = BigInt(whole || '0') * 1_000_000n + BigInt((fraction + '000000').slice(0, 6));
  return negative ? -units : units;
}

/** What the API accepts as an amount: digits, at most 6 decimal places, more than zero. */
export function validAmount(text: string): string | null {
  const trimmed = text.trim();
  if (!/^\d+(\.\d{1,6})?$/.test(trimmed)) return 'Enter an amount in dollars, like 250 or 250.50 (at most 6 decimal places).';
  if (usdToUnits(trimmed) <= 0n) return 'Enter an amount above zero.';
  return null;
}
