import { randomUUID } from 'node:crypto';
import { CREDIT_HEADER } from './card/credit.js';
/**
 * Where a payment proof travels (spec 4.1.4, 9), normalised before the gate looks at it:
 * - `Authorization: Payment <credential>`: MPP (rail A), as mppx reads it;
 * - `Authorization: mpp <credential>`: the legacy scheme, rewritten to `Payment` (mppx does not
 *   accept it);
 * - `PAYMENT-SIGNATURE: <base64 JSON>`: an x402 v2 payload (rails B, C);
 * - `X-PAYMENT: <base64 JSON>`: an x402 v1 or v2 payload (no library reads this header);
 * - `Payment-Credit: <credit id>`: a draw on the caller's card credit (src/payments/card/credit.ts),
 *   one per request, or one per `Idempotency-Key`.
 */
export type PaymentProof =
  | { kind: 'none' }
  /** `authorization` is always in the current `Payment` scheme. */
  | { kind: 'mpp'; authorization: string }
  /** `payload.x402Version` is 1 or 2. */
  | { kind: 'x402'; payload: Record<string, unknown> }
  /** `nonce` tells draws apart: the request's `Idempotency-Key`, else a fresh one. */
  | { kind: 'credit'; creditId: string; nonce: string }
  | { kind: 'malformed'; reason: string };

const LEGACY_MPP = /^mpp\s+/i;
const MPP = /^payment\s+/i;
// A payment header is a few KB at most (an SVM transaction is under 1.7 KB base64).
const MAX_PROOF_LENGTH = 16 * 1024;

export function readPaymentProof(request: Request): PaymentProof {
  const authorization = request.headers.get('authorization') ?? '';
  if (MPP.test(authorization)) return { kind: 'mpp', authorization };
  if (LEGACY_MPP.test(authorization)) return { kind: 'mpp', authorization: authorization.replace(LEGACY_MPP, 'Payment ') };
  for (const header of ['PAYMENT-SIGNATURE', 'X-PAYMENT'] as const) {
    const value = request.headers.get(header);
    if (value === null) continue;
    const payload = decodeX402(value);
    if (typeof payload === 'string') return { kind: 'malformed', reason: `${header}: ${payload}` };
    const version = payload.x402Version;
    if (version !== 1 && version !== 2) return { kind: 'malformed', reason: `${header}: x402Version must be 1 or 2` };
    if (header === 'PAYMENT-SIGNATURE' && version !== 2) return { kind: 'malformed', reason: 'PAYMENT-SIGNATURE: carries x402 version 2 only' };
    return { kind: 'x402', payload };
  }
  const credit = request.headers.get(CREDIT_HEADER);
  if (credit !== null) {
    if (!/^[0-9a-f-]{36}$/i.test(credit.trim())) return { kind: 'malformed', reason: `${CREDIT_HEADER}: must be a card credit id (a UUID)` };
    return { kind: 'credit', creditId: credit.trim().toLowerCase(), nonce: request.headers.get('idempotency-key') ?? randomUUID() };
  }
  return { kind: 'none' };
}

/** base64 (or base64url) JSON object, or a reason it is not one. */
function decodeX402(value: string): Record<string, unknown> | string {
  if (value.length > MAX_PROOF_LENGTH) return 'is too long';
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(value.trim())) return 'is not base64';
  try {
    const parsed = JSON.parse(Buffer.from(value.trim(), 'base64').toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'is not a JSON object';
    return parsed as Record<string, unknown>;
  } catch {
    return 'is not base64-encoded JSON';
  }
}
