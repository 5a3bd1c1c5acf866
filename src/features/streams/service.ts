import { randomUUID } from 'node:crypto';
import { formatUsd } from '../../money.js';
import { usdcUnits } from './schema.js';

export interface StreamRequest {
  recipientAddress: string;
  amountUsdc: number;
  durationSeconds: number;
  cliffSeconds?: number | undefined;
  cancelAuthority: 'sender' | 'recipient' | 'both';
}

export const STUB_NOTE =
  'Mock stream (spec 2.2): nothing was moved or locked on chain and nothing will be paid to the recipient. ' +
  'The handle shape is permanent; a real stream implementation will replace this stub.';

/**
 * Payroll streams on Solana (spec 4.5). The spec's current implementation is a mock: it answers
 * with a handle (`stub: true`) and moves nothing. The request is fully validated, so a real
 * implementation can replace this without changing what callers send or receive.
 */
export function openStubStream(request: StreamRequest, now: Date) {
  const units = usdcUnits(request.amountUsdc);
  if (units === null) throw new Error('amountUsdc passed validation but does not convert');
  const startedAt = Math.floor(now.getTime() / 1000);
  return {
    streamId: `stream_${randomUUID()}`,
    provider: 'native' as const,
    startedAt,
    estimatedEndAt: startedAt + request.durationSeconds,
    claimedUsdc: 0,
    // Derived from the integer units at the last moment.
    remainingUsdc: Number(formatUsd(units)),
    stub: true,
    note: STUB_NOTE,
  };
}
