import { describe, expect, it } from 'vitest';
import { accruedAt, type StreamInfo } from './stream';

const stream = (clockSkewMs: number): StreamInfo => ({ active: true, ratePerSecond: 1_000n, accruingSince: 1_000_000n, clockSkewMs });

describe('accruedAt', () => {
  it('counts from accruing_since on the service clock, to the millisecond', () => {
    expect(accruedAt(stream(0), 1_000_010_500)).toBe(10_500n);
    expect(accruedAt(stream(0), 999_999_000)).toBe(0n);
  });

  it('a browser behind the service (a wrong clock, or the dev clock moved 2 h) still shows what the chain pays', () => {
    expect(accruedAt(stream(7_200_000), 1_000_010_500)).toBe(7_210_500n);
    expect(accruedAt(stream(-10_500), 1_000_010_500)).toBe(0n);
  });

  it('an inactive stream accrues nothing', () => {
    expect(accruedAt({ ...stream(0), active: false }, 1_000_010_500)).toBe(0n);
  });
});
