import { describe, expect, it } from 'vitest';
import { fromUnits, monthlyUnits } from './money';

describe('monthlyUnits', () => {
  it('is a twelfth of the salary to the nearest cent, so a pre-filled payroll amount reads 8166.67, not 8166.666666', () => {
    expect(fromUnits(monthlyUnits('98000'))).toBe('8166.67');
    expect(fromUnits(monthlyUnits('120000'))).toBe('10000.00');
    expect(fromUnits(monthlyUnits('100000'))).toBe('8333.33');
    expect(fromUnits(monthlyUnits('0.06'))).toBe('0.01'); // 0.005 rounds up
    expect(monthlyUnits('not a number')).toBe(0n);
  });
});
