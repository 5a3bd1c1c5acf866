import { describe, expect, it } from 'vitest';
import { appliedExpiryHours } from './expiry.js';

describe('reputation-scaled escrow expiry', () => {
  it('gives unknown and new workers exactly what was asked', () => {
    for (const hours of [1, 24, 168]) {
      expect(appliedExpiryHours(hours, 'unknown')).toBe(hours);
      expect(appliedExpiryHours(hours, 'new')).toBe(hours);
    }
  });

  it('shortens the window for established and trusted workers down to their floors, never beyond what was asked', () => {
    expect(appliedExpiryHours(168, 'established')).toBe(126);
    expect(appliedExpiryHours(24, 'established')).toBe(18);
    expect(appliedExpiryHours(13, 'established')).toBe(12); // ceil(9.75) = 10, raised to the 12 h floor
    expect(appliedExpiryHours(8, 'established')).toBe(8); // the floor never lengthens a short request
    expect(appliedExpiryHours(168, 'trusted')).toBe(84);
    expect(appliedExpiryHours(24, 'trusted')).toBe(12);
    expect(appliedExpiryHours(10, 'trusted')).toBe(6);
    expect(appliedExpiryHours(1, 'trusted')).toBe(1);
  });

  it('never gives a trusted worker longer than an established one for the same request', () => {
    for (let hours = 1; hours <= 168; hours++) {
      expect(appliedExpiryHours(hours, 'trusted')).toBeLessThanOrEqual(appliedExpiryHours(hours, 'established'));
      expect(appliedExpiryHours(hours, 'established')).toBeLessThanOrEqual(hours);
    }
  });
});
