import { checksumAddress, type Address } from 'viem';

/** What an EVM address looks like before its case is checked: 0x and 40 hex digits. */
export const EVM_ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

export const EVM_ADDRESS_RULE = 'must be a 0x-prefixed 20-byte hex address (mixed case must carry a valid EIP-55 checksum)';

/**
 * The one rule for every EVM address the API takes (#33): all lower-case or all upper-case hex
 * carries no checksum and is accepted; mixed case is a checksum and must be the right one, so a
 * mistyped address is refused instead of reaching the chain. Returns the EIP-55 spelling (as
 * viem's accounts write it), or null when the value breaks the rule.
 */
export function canonicalEvmAddress(value: string): Address | null {
  if (!EVM_ADDRESS_PATTERN.test(value)) return null;
  const digits = value.slice(2);
  const checksummed = checksumAddress(`0x${digits.toLowerCase()}`);
  const singleCase = digits === digits.toLowerCase() || digits === digits.toUpperCase();
  return singleCase || value === checksummed ? checksummed : null;
}
