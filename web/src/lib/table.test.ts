import { describe, expect, it } from 'vitest';
import { parseCsv } from '../pages/dashboard/components/csv';
import { compareCells, csvField, rowMatches, sortRows, toCsv } from './table';

describe('csvField', () => {
  it('leaves plain text alone and quotes commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvField('Ada Lovelace')).toBe('Ada Lovelace');
    expect(csvField('Lovelace, Ada')).toBe('"Lovelace, Ada"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r\nlf')).toBe('"cr\r\nlf"');
  });

  it('writes blanks as empty fields and numbers as they are', () => {
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField(42)).toBe('42');
    expect(csvField(10n)).toBe('10');
    expect(csvField('-5.250000')).toBe('-5.250000');
  });

  it("prefixes text a spreadsheet would run as a formula with '", () => {
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvField('+1+1')).toBe("'+1+1");
    expect(csvField('-2+3+cmd')).toBe("'-2+3+cmd");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tx')).toBe("'\tx");
  });
});

describe('toCsv', () => {
  it('writes a header and CRLF-separated rows that a CSV reader gets back unchanged', () => {
    const rows = [
      ['Ada, Countess', 'ada@example.com', '120000.000000'],
      ['Bob "B"', 'line\nbreak', null],
    ];
    const csv = toCsv(['Name', 'Email', 'Salary'], rows);
    expect(csv).toBe('Name,Email,Salary\r\n"Ada, Countess",ada@example.com,120000.000000\r\n"Bob ""B""","line\nbreak",\r\n');
    expect(parseCsv(csv)).toEqual([
      ['Name', 'Email', 'Salary'],
      ['Ada, Countess', 'ada@example.com', '120000.000000'],
      ['Bob "B"', 'line\nbreak', ''],
    ]);
  });
});

describe('compareCells and sortRows', () => {
  it('orders decimal strings by value, exactly', () => {
    expect(compareCells('100.5', '20.25')).toBe(1);
    expect(compareCells('0.5', '0.25')).toBe(1);
    expect(compareCells('-3', '2')).toBe(-1);
    expect(compareCells('1.000000', '1')).toBe(0);
    expect(compareCells('9007199254740993.000001', '9007199254740993.000002')).toBe(-1);
  });

  it('orders text case-insensitively with numbers inside by value', () => {
    expect(compareCells('alice', 'Bob')).toBeLessThan(0);
    expect(compareCells('run 9', 'run 10')).toBeLessThan(0);
  });

  it('sorts either way, keeps ties in their order and blank cells last', () => {
    const rows = [
      { id: 'a', pay: '50.00' },
      { id: 'b', pay: null },
      { id: 'c', pay: '120000.00' },
      { id: 'd', pay: '50.00' },
      { id: 'e', pay: '7.5' },
    ];
    const pay = (row: (typeof rows)[number]) => row.pay;
    expect(sortRows(rows, pay, 'ascending').map((r) => r.id)).toEqual(['e', 'a', 'd', 'c', 'b']);
    expect(sortRows(rows, pay, 'descending').map((r) => r.id)).toEqual(['c', 'a', 'd', 'e', 'b']);
    expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});

describe('rowMatches', () => {
  it('needs every word somewhere in the row, ignoring case and blanks', () => {
    const cells = ['Ada Lovelace', 'ada@example.com', null, 'active'];
    expect(rowMatches('', cells)).toBe(true);
    expect(rowMatches('  LOVE  ', cells)).toBe(true);
    expect(rowMatches('ada active', cells)).toBe(true);
    expect(rowMatches('ada paused', cells)).toBe(false);
    expect(rowMatches('null', cells)).toBe(false);
  });
});
