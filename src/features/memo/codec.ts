import { createHash } from 'node:crypto';
import { bytesToHex, hexToBytes, type Hex } from 'viem';

/**
 * Our 32-byte payroll memo (spec 2.14), carried on chain with every payroll transfer. Layout
 * (byte offsets; docs/api.md "Memo layout"):
 *
 *   0      1  magic 0x50 ('P')
 *   1      1  version (high nibble, 1) | message type (low nibble)
 *   2      4  employer tag: sha256(employer id)[0..4]
 *   6      4  employee tag: sha256(employee id)[0..4]
 *   10     2  pay period start, days since 1970-01-01 (0 = none)
 *   12     2  pay period end, days since 1970-01-01 (0 = none)
 *   14     2  cost centre tag: sha256(cost centre)[0..2] (0 = none)
 *   16    12  record hash: sha256(run id | employee id | amount)[0..12]
 *   28     4  checksum: sha256(bytes 0..28)[0..4]
 *
 * Tags and hashes, not ids: a memo is public on chain, so it proves which record a transfer
 * settles (whoever holds the record can recompute it) without publishing tenant ids. SHA-256
 * (native in Node) rather than keccak: prepare encodes 10,000 memos in a request.
 */
export const MEMO_PATTERN = /^0x[0-9a-fA-F]{64}$/;

const MAGIC = 0x50;
const VERSION = 1;
export const MEMO_TYPES = { salary: 1, advance: 2, agent_payment: 3, bonus: 4 } as const;
export type MemoType = keyof typeof MEMO_TYPES;

export interface MemoInput {
  type: MemoType;
  employerId: string;
  employeeId: string;
  runId: string;
  amount: bigint;
  payPeriodStart?: Date | null;
  payPeriodEnd?: Date | null;
  costCentre?: string | null;
}

export interface MemoFields {
  version: number;
  type: MemoType;
  employer_tag: Hex;
  employee_tag: Hex;
  pay_period_start: string | null;
  pay_period_end: string | null;
  cost_centre_tag: Hex | null;
  record_hash: Hex;
}

const DAY_MS = 86_400_000;
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest();
const tag = (text: string, bytes: number) => sha256(text).subarray(0, bytes);
const days = (date: Date | null | undefined) => (date ? Math.floor(date.getTime() / DAY_MS) : 0);
const isoDay = (value: number) => (value === 0 ? null : new Date(value * DAY_MS).toISOString().slice(0, 10));

/** The record hash that binds a memo to one payroll item. */
export function recordHash(runId: string, employeeId: string, amount: bigint): Uint8Array {
  return tag(`${runId}|${employeeId}|${amount}`, 12);
}

/** The employer tag of the last memo encoded: a run encodes thousands for one employer. */
let lastEmployer: { id: string; tag: Uint8Array } | null = null;

export function encodeMemo(input: MemoInput): Hex {
  const memo = Buffer.alloc(32);
  memo[0] = MAGIC;
  memo[1] = (VERSION << 4) | MEMO_TYPES[input.type];
  if (lastEmployer?.id !== input.employerId) lastEmployer = { id: input.employerId, tag: tag(input.employerId, 4) };
  memo.set(lastEmployer.tag, 2);
  memo.set(tag(input.employeeId, 4), 6);
  memo.writeUInt16BE(Math.min(days(input.payPeriodStart), 0xffff), 10);
  memo.writeUInt16BE(Math.min(days(input.payPeriodEnd), 0xffff), 12);
  if (input.costCentre) memo.set(tag(input.costCentre, 2), 14);
  memo.set(recordHash(input.runId, input.employeeId, input.amount), 16);
  memo.set(sha256(memo.subarray(0, 28)).subarray(0, 4), 28);
  return `0x${memo.toString('hex')}`;
}

/** The fields of one of our memos, or null for any other 32 bytes (wrong magic, version, type or checksum). */
export function decodeMemo(memo: Hex): MemoFields | null {
  if (!MEMO_PATTERN.test(memo)) throw new Error('memo must be 0x and 64 hex characters');
  const bytes = hexToBytes(memo);
  if (bytes[0] !== MAGIC || bytes[1]! >> 4 !== VERSION) return null;
  const type = (Object.keys(MEMO_TYPES) as MemoType[]).find((name) => MEMO_TYPES[name] === (bytes[1]! & 0x0f));
  if (!type) return null;
  const checksum = sha256(bytes.subarray(0, 28)).subarray(0, 4);
  if (!checksum.every((byte, i) => byte === bytes[28 + i])) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const costCentre = bytes.subarray(14, 16);
  return {
    version: VERSION,
    type,
    employer_tag: bytesToHex(bytes.subarray(2, 6)),
    employee_tag: bytesToHex(bytes.subarray(6, 10)),
    pay_period_start: isoDay(view.getUint16(10)),
    pay_period_end: isoDay(view.getUint16(12)),
    cost_centre_tag: costCentre[0] === 0 && costCentre[1] === 0 ? null : bytesToHex(costCentre),
    record_hash: bytesToHex(bytes.subarray(16, 28)),
  };
}
