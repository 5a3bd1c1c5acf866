const USD = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });

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
  const [whole = '0', fraction = ''] = decimal.replace(/^-/, '').split('.');
  const units = BigInt(whole) * 1_000_000n + BigInt((fraction + '000000').slice(0, 6));
  return formatBaseUnits(decimal.startsWith('-') ? -units : units);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' });
}

export function shortAddress(address: string): string {
  return address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}
