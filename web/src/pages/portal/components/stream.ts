import { api } from '../../../lib/api';

/** The employee's salary stream (rate and start of accrual) for the live balance. */
export interface StreamInfo {
  active: boolean;
  /** Base units per second. */
  ratePerSecond: bigint;
  /** Unix seconds from which the unclaimed amount accrues (the chain's clock). */
  accruingSince: bigint;
  /**
   * How far the service's clock is ahead of this browser's, measured at the read: the accrual runs on
   * the service's time (a wrong browser clock, or local mode's dev clock moved forward).
   */
  clockSkewMs: number;
}

export type StreamLookup = { kind: 'stream'; stream: StreamInfo } | { kind: 'unavailable' };

/** `GET /api/employees/{id}/salary-stream`: free for the employee; it starts the stream on first use. */
export async function readStream(employeeId: string): Promise<StreamLookup> {
  try {
    const stream = await api<{ active: boolean; rate_per_second: string; accruing_since: string; as_of: string }>(`/api/employees/${employeeId}/salary-stream`);
    return {
      kind: 'stream',
      stream: {
        active: stream.active,
        ratePerSecond: BigInt(stream.rate_per_second),
        accruingSince: BigInt(stream.accruing_since),
        clockSkewMs: Date.parse(stream.as_of) - Date.now(),
      },
    };
  } catch {
    // No wallet or salary yet, or a treasury the service cannot stream from: show the wallet alone.
    return { kind: 'unavailable' };
  }
}

/**
 * What has accrued at this browser's `nowMs` (read on the service's clock), to the millisecond (the
 * contract counts whole seconds; the display runs smoothly).
 */
export function accruedAt(stream: StreamInfo, nowMs: number): bigint {
  if (!stream.active || stream.ratePerSecond === 0n) return 0n;
  const elapsedMs = BigInt(Math.floor(nowMs + stream.clockSkewMs)) - stream.accruingSince * 1000n;
  return elapsedMs > 0n ? (elapsedMs * stream.ratePerSecond) / 1000n : 0n;
}
