import { describe, expect, it } from 'vitest';
import { formatDollars, formatUsd, parseUsd } from './money.js';

describe('money', () => {
  it('parses plain decimal strings into base units exactly', () => {
    expect(parseUsd('0')).toBe(0n);
    expect(parseUsd('1')).toBe(1_000_000n);
    expect(parseUsd('0.1')).toBe(100_000n);
    expect(parseUsd('0.000001')).toBe(1n);
    expect(parseUsd('100000.50')).toBe(100_000_500_000n);
    expect(parseUsd('999999999999999.999999')).toBe(999_999_999_999_999_999_999n);
  });

  it('refuses anything else', () => {
    for (const bad of ['', '-1', '+1', '1.', '.5', '01', '1e6', '1,5', ' 1', '1.0000001', 'NaN', '0x10', '1_000']) {
      expect(parseUsd(bad), bad).toBeNull();
    }
  });

  it('formats base units with all six places', () => {
    expect(formatUsd(0n)).toBe('0.000000');
    expect(formatUsd(1n)).toBe('0.000001');
    expect(formatUsd(1_500_000n)).toBe('1.500000');
    expect(formatUsd(-2_000_001n)).toBe('-2.000001');
    expect(parseUsd(formatUsd(123_456_789n))).toBe(123_456_789n);
  });

  it('formats dollars for people: grouped, rounded half up to the cent', () => {
    expect(formatDollars(0n)).toBe('$0.00');
    expect(formatDollars(4_999n)).toBe('$0.00');
    expect(formatDollars(5_000n)).toBe('$0.01');
    expect(formatDollars(1_234_565_000n)).toBe('$1,234.57');
    expect(formatDollars(1_000_000_000_000n)).toBe('$1,000,000.00');
    expect(formatDollars(-2_500_000n)).toBe('-$2.50');
  });
});
