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

/**
 * An amount for a person to read (notifications, e-mails, messages): "$38,583.34". Cents when the
 * amount is whole cents; otherwise every significant decimal ("$0.003805"), never a rounded figure.
 */
export function displayUsd(units: bigint): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  const whole = (abs / UNIT).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = (abs % UNIT).toString().padStart(USD_DECIMALS, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${sign}$${whole}.${fraction}`;
}
