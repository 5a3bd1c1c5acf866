import { concat, getAddress, keccak256, type Address, type Hex } from 'viem';

/** The ten 0xFD bytes between a virtual address's master id and its user tag (spec 2.13). */
const VIRTUAL_MARKER = 'fd'.repeat(10);

/** A UUID's 16 bytes (RFC 9562 byte order: the hex digits as written). */
const uuidBytes = (uuid: string): Hex => `0x${uuid.replaceAll('-', '').toLowerCase()}`;

/**
 * The employee's 6-byte user tag: the first 6 bytes of keccak256(employerId bytes || employeeId
 * bytes), each UUID as its 16 bytes (docs/api.md, "Virtual deposit addresses", with a test vector).
 */
export function userTag(employerId: string, employeeId: string): Hex {
  return keccak256(concat([uuidBytes(employerId), uuidBytes(employeeId)])).slice(0, 2 + 12) as Hex;
}

/** masterId (4 bytes) || 0xFD x 10 || userTag (6 bytes): the employee's deposit address, checksummed. */
export function virtualAddress(masterId: Hex, tag: Hex): Address {
  if (!/^0x[0-9a-fA-F]{8}$/.test(masterId)) throw new Error(`master id must be 4 bytes, got ${masterId}`);
  if (!/^0x[0-9a-fA-F]{12}$/.test(tag)) throw new Error(`user tag must be 6 bytes, got ${tag}`);
  return getAddress(`${masterId}${VIRTUAL_MARKER}${tag.slice(2)}`);
}
