/** Decimal USD strings <-> integer base units (6 decimals), without floats. */

export const UNITS = 1_000_000n;

/** "1250.5" -> 1250500000n; null when it is not a plain non-negative decimal with at most 6 places. */
export function toUnits(decimal: string): bigint | null {
  const text = decimal.trim();
  if (!/^\d+(\.\d{1,6})?$/.test(text)) return null;
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * UNITS + BigInt((fraction + '000000').slice(0, 6));
}

/** 1250500000n -> "1250.50" (2 places when exact cents, else up to 6). */
export function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const fraction = (abs % UNITS).toString().padStart(6, '0').replace(/0+$/, '');
  const text = `${abs / UNITS}.${fraction.padEnd(2, '0')}`;
  return negative ? `-${text}` : text;
}

/** One month of an annual salary (a decimal string), rounded down to the base unit. */
export function monthlyUnits(annualUsd: string): bigint {
  return (toUnits(annualUsd) ?? 0n) / 12n;
}

/** What the server accepts as an amount: a decimal string with at most 6 places (no sign, exponent or separators). */
export function normaliseAmountInput(value: string): string {
  return value.trim().replace(/^\$/, '').replace(/,/g, '');
}
