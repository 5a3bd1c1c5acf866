/** The pure side of the tables' search, sort and CSV export (components/useTableControls.ts holds the state). */

/** What a column gives search, sort and export: its plain value, not its rendering. */
export type CellValue = string | number | bigint | boolean | null | undefined;

export type SortDirection = 'ascending' | 'descending';

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Two decimal strings compared exactly (amounts are 6-decimal strings; no float rounding). */
function compareDecimals(a: string, b: string): number {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const units = (text: string) => {
    const [whole = '0', fraction = ''] = text.replace('-', '').split('.');
    const magnitude = BigInt(whole + fraction.padEnd(scale, '0'));
    return text.startsWith('-') ? -magnitude : magnitude;
  };
  const difference = units(a) - units(b);
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Ascending order of two cells: numbers and decimal strings by value, other text by collation. */
export function compareCells(a: CellValue, b: CellValue): number {
  const left = String(a);
  const right = String(b);
  if (DECIMAL.test(left) && DECIMAL.test(right)) return compareDecimals(left, right);
  return collator.compare(left, right);
}

const isBlank = (value: CellValue) => value === null || value === undefined || value === '';

/** The rows ordered by one column (a stable sort); blank cells go last in either direction. */
export function sortRows<T>(rows: readonly T[], value: (row: T) => CellValue, direction: SortDirection): T[] {
  const sign = direction === 'ascending' ? 1 : -1;
  return [...rows].sort((x, y) => {
    const a = value(x);
    const b = value(y);
    if (isBlank(a) || isBlank(b)) return Number(isBlank(a)) - Number(isBlank(b));
    return sign * compareCells(a, b);
  });
}

/** Whether a row's cells hold every word of the query (case-insensitive, any cell per word). */
export function rowMatches(query: string, cells: CellValue[]): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = cells.filter((cell) => !isBlank(cell)).map((cell) => String(cell).toLowerCase());
  return words.every((word) => text.some((cell) => cell.includes(word)));
}

const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field (RFC 4180): quoted when it holds a quote, comma or line break, quotes doubled.
 * Text a spreadsheet would run as a formula (= + - @, tab, CR first) gets a leading '; a plain
 * number such as -5.25 stays a number.
 */
export function csvField(value: CellValue): string {
  let text = isBlank(value) ? '' : String(value);
  if (FORMULA_START.test(text) && !DECIMAL.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A whole CSV document: a header line, then one line per row, CRLF between lines. */
export function toCsv(header: string[], rows: CellValue[][]): string {
  return [header, ...rows].map((cells) => cells.map(csvField).join(',')).join('\r\n') + '\r\n';
}
