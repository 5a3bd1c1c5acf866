/**
 * Client-side decoding of our 32-byte payroll memo (docs/api.md "Memo layout"). The paid
 * `POST /api/mpp/memo/decode` does the same on the server; the layout is public, so the dashboard
 * decodes it itself rather than paying for it.
 */
export interface MemoFields {
  version: number;
  type: 'salary' | 'advance' | 'agent_payment' | 'bonus';
  employer_tag: string;
  employee_tag: string;
  pay_period_start: string | null;
  pay_period_end: string | null;
  cost_centre_tag: string | null;
  record_hash: string;
}

const TYPES = ['salary', 'advance', 'agent_payment', 'bonus'] as const;
const DAY_MS = 86_400_000;

const hex = (bytes: Uint8Array) => `0x${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
const isoDay = (days: number) => (days === 0 ? null : new Date(days * DAY_MS).toISOString().slice(0, 10));

async function sha256(data: Uint8Array | string): Promise<Uint8Array | null> {
  if (!globalThis.crypto?.subtle) return null; // not a secure context: the checksum cannot be checked
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

export interface DecodedMemo {
  fields: MemoFields | null;
  /** true / false when checked; null when the browser cannot hash (not a secure context). */
  checksumValid: boolean | null;
}

/** The memo's fields, or `fields: null` for 32 bytes that are not ours (magic, version, type or checksum). */
export async function decodeMemo(memo: string): Promise<DecodedMemo> {
  if (!/^0x[0-9a-fA-F]{64}$/.test(memo)) return { fields: null, checksumValid: null };
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(memo.slice(2 + i * 2, 4 + i * 2), 16);
  if (bytes[0] !== 0x50 || bytes[1]! >> 4 !== 1) return { fields: null, checksumValid: null };
  const type = TYPES[(bytes[1]! & 0x0f) - 1];
  if (!type) return { fields: null, checksumValid: null };
  const digest = await sha256(bytes.subarray(0, 28));
  const checksumValid = digest ? digest.subarray(0, 4).every((b, i) => b === bytes[28 + i]) : null;
  if (checksumValid === false) return { fields: null, checksumValid };
  const view = new DataView(bytes.buffer);
  const cost = bytes.subarray(14, 16);
  return {
    checksumValid,
    fields: {
      version: 1,
      type,
      employer_tag: hex(bytes.subarray(2, 6)),
      employee_tag: hex(bytes.subarray(6, 10)),
      pay_period_start: isoDay(view.getUint16(10)),
      pay_period_end: isoDay(view.getUint16(12)),
      cost_centre_tag: cost[0] === 0 && cost[1] === 0 ? null : hex(cost),
      record_hash: hex(bytes.subarray(16, 28)),
    },
  };
}

/** Whether the record hash binds this memo to (run, employee, amount in base units); null when it cannot be checked. */
export async function recordHashMatches(fields: MemoFields, runId: string, employeeId: string, amountUnits: bigint): Promise<boolean | null> {
  const digest = await sha256(`${runId}|${employeeId}|${amountUnits}`);
  return digest ? hex(digest.subarray(0, 12)) === fields.record_hash : null;
}
