import { describe, expect, it } from 'vitest';
import { canonicalEvmAddress } from './address.js';

const CHECKSUMMED = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const LOWER = CHECKSUMMED.toLowerCase();
const UPPER = `0x${CHECKSUMMED.slice(2).toUpperCase()}`;
// One letter's case flipped: mixed case that is not the checksum.
const BAD_CHECKSUM = '0x5fbDB2315678afecb367f032d93F642f64180aa3';

describe('the EVM address rule (canonicalEvmAddress)', () => {
  it('accepts all lower-case, all upper-case and checksummed hex, each as its EIP-55 spelling', () => {
    expect(canonicalEvmAddress(LOWER)).toBe(CHECKSUMMED);
    expect(canonicalEvmAddress(UPPER)).toBe(CHECKSUMMED);
    expect(canonicalEvmAddress(CHECKSUMMED)).toBe(CHECKSUMMED);
  });

  it('accepts an address of digits only, which has no case', () => {
    expect(canonicalEvmAddress('0x0000000000000000000000000000000000000001')).toBe('0x0000000000000000000000000000000000000001');
  });

  it('refuses mixed case that is not the checksum', () => {
    expect(canonicalEvmAddress(BAD_CHECKSUM)).toBeNull();
  });

  it('refuses a wrong length, non-hex digits and a missing or upper-case prefix', () => {
    for (const value of [LOWER.slice(0, -1), `${LOWER}0`, `${LOWER.slice(0, -1)}g`, LOWER.slice(2), `0X${LOWER.slice(2)}`, '', ` ${LOWER}`]) {
      expect(canonicalEvmAddress(value), value).toBeNull();
    }
  });
});
