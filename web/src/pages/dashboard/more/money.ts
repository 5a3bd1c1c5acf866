const GROUPS = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

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
    grouped = GROUPS.format(BigInt(whole || '0'));
  } catch {
    return decimal;
  }
  return `${negative ? '-' : ''}$${grouped}.${digits}`;
}

/** "25.000000" -> "25", "0.500000" -> "0.5": what an edit field starts with. */
export function plainDecimal(decimal: string | null | undefined): string {
  if (!decimal) return '';
  if (!decimal.includes('.')) return decimal;
  return decimal.replace(/0+$/, '').replace(/\.$/, '');
}

/** Matches the API's request amount rule: no sign, exponent or separators, at most 6 decimals. */
export const USD_INPUT = /^(0|[1-9]\d{0,14})(\.\d{1,6})?$/;
