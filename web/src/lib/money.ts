/** The web app's one money module: USD decimal strings <-> integer base units (6 decimals), without floats. */

export const UNITS = 1_000_000n;

const USD = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A decimal USD string from the API ("12.500000", "-3.1") as base units. */
export function usdToUnits(decimal: string): bigint {
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction = ''] = decimal.replace(/^-/, '').split('.');
  const units = BigInt(whole || '0') * UNITS + BigInt((fraction + '000000').slice(0, 6));
  return negative ? -units : units;
}

/** "1250.5" -> 1250500000n; null when it is not a plain non-negative decimal with at most 6 places. */
export function toUnits(decimal: string): bigint | null {
  const text = decimal.trim();
  if (!/^\d+(\.\d{1,6})?$/.test(text)) return null;
  return usdToUnits(text);
}

/** 1250500000n -> "1250.50" (2 places when exact cents, else up to 6). */
export function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const fraction = (abs % UNITS).toString().padStart(6, '0').replace(/0+$/, '');
  const text = `${abs / UNITS}.${fraction.padEnd(2, '0')}`;
  return negative ? `-${text}` : text;
}

const CENT = 10_000n;

/** One month of an annual salary (a decimal string), to the nearest cent: payroll pays whole cents (120,000 / 12 -> 10,000.00; 98,000 / 12 -> 8,166.67). */
export function monthlyUnits(annualUsd: string): bigint {
  const month = (toUnits(annualUsd) ?? 0n) / 12n;
  return ((month + CENT / 2n) / CENT) * CENT;
}

/** Integer base units (6 decimals) as dollars, without going through a float for the integer part. */
export function formatBaseUnits(units: string | bigint | number, decimals = 6): string {
  const value = BigInt(units);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const scale = 10n ** BigInt(decimals);
  const cents = (abs * 100n + scale / 2n) / scale; // rounded half up to the cent
  const text = USD.format(Number(cents / 100n)).replace(/\.00$/, '') + '.' + String(cents % 100n).padStart(2, '0');
  return negative ? `-${text}` : text;
}

/** A decimal USD string from the API ("12.500000") as "$12.50". */
export function formatUsd(decimal: string): string {
  return formatBaseUnits(usdToUnits(decimal));
}

/**
 * A 6-place USD decimal from the API ("0.001000") as dollars without losing sub-cent digits:
 * at least two decimals, trailing zeros dropped ("$0.001", "$0.05", "$1,250.50").
 */
export function formatUsdExact(decimal: string | null | undefined): string {
  if (decimal === null || decimal === undefined || decimal === '') return '—';
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction = ''] = decimal.replace(/^-/, '').split('.');
  let digits = fraction.replace(/0+$/, '');
  if (digits.length < 2) digits = digits.padEnd(2, '0');
  let grouped: string;
  try {
    grouped = GROUPED.format(BigInt(whole || '0'));
  } catch {
    return decimal;
  }
  return `${negative ? '-' : ''}$${grouped}.${digits}`;
}

/** Base units (6 decimals) as dollars with all six places, e.g. `$1,234.567890`: a live balance moves visibly every second. */
export function formatMicroUsd(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const fraction = String(abs % UNITS).padStart(6, '0');
  return `${negative ? '-' : ''}$${GROUPED.format(abs / UNITS)}.${fraction}`;
}

/** "25.000000" -> "25", "0.500000" -> "0.5": what an edit field starts with. */
export function plainDecimal(decimal: string | null | undefined): string {
  if (!decimal) return '';
  if (!decimal.includes('.')) return decimal;
  return decimal.replace(/0+$/, '').replace(/\.$/, '');
}

/** What the server accepts as an amount: a decimal string with at most 6 places (no sign, exponent or separators). */
export function normaliseAmountInput(value: string): string {
  return value.trim().replace(/^\$/, '').replace(/,/g, '');
}

/** Matches the API's request amount rule: no sign, exponent or separators, at most 6 decimals. */
export const USD_INPUT = /^(0|[1-9]\d{0,14})(\.\d{1,6})?$/;
