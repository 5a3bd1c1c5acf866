/**
 * Money is integer base units of a 6-decimal stablecoin (1 USD = 1_000_000 units). Decimal strings
 * are parsed with a strict pattern at the edge; no float ever touches an amount.
 */
export const USD_DECIMALS = 6;
const UNIT = 10n ** BigInt(USD_DECIMALS);

/** Plain decimal: digits, optionally a point and 1-6 digits. No sign, exponent, or spaces. */
export const USD_DECIMAL_PATTERN = /^(0|[1-9]\d{0,14})(\.\d{1,6})?$/;

/** Parses a USD decimal string into base units; returns null when it is not a plain decimal. */
export function parseUsd(value: string): bigint | null {
  if (!USD_DECIMAL_PATTERN.test(value)) return null;
  const [whole = '0', fraction = ''] = value.split('.');
  return BigInt(whole) * UNIT + BigInt(fraction.padEnd(USD_DECIMALS, '0'));
}

/** Base units as a USD decimal string with all 6 places, e.g. 1_500_000n -> "1.500000". */
export function formatUsd(units: bigint): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  return `${sign}${abs / UNIT}.${(abs % UNIT).toString().padStart(USD_DECIMALS, '0')}`;
}

/** Base units as dollars for a person to read, rounded half up to the cent: 1_234_565_000n -> "$1,234.57". */
export function formatDollars(units: bigint): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  const cents = (abs * 100n + UNIT / 2n) / UNIT;
  const whole = (cents / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}$${whole}.${(cents % 100n).toString().padStart(2, '0')}`;
}
