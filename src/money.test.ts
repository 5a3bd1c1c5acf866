import { describe, expect, it } from 'vitest';
import { displayUsd, formatUsd, parseUsd } from './money.js';

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

  it('shows amounts to people as dollars and cents, never hiding a fraction of a cent', () => {
    expect(displayUsd(38_583_340_000n)).toBe('$38,583.34');
    expect(displayUsd(1_500_000n)).toBe('$1.50');
    expect(displayUsd(0n)).toBe('$0.00');
    expect(displayUsd(1_234_567_890_000_000n)).toBe('$1,234,567,890.00');
    // Exact amounts are never rounded: a sub-cent remainder keeps its digits.
    expect(displayUsd(38_583_336_666n)).toBe('$38,583.336666');
    expect(displayUsd(3_805n)).toBe('$0.003805');
    expect(displayUsd(-2_500_000n)).toBe('-$2.50');
  });
});
