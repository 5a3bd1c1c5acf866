import { z } from '@hono/zod-openapi';
import { isAddress } from '@solana/kit';
import { parseUsd } from '../../money.js';

/** Longest stream accepted: 10 years of 365 days. */
export const MAX_STREAM_SECONDS = 10 * 365 * 24 * 60 * 60;
/** Largest total accepted per stream, in USDC. */
export const MAX_STREAM_USDC = 1_000_000;

/**
 * A JSON number of USDC as base units: finite, > 0, at most 6 decimal places as written (no
 * exponent form), at most MAX_STREAM_USDC. The amount is read through its decimal string, never
 * through float arithmetic.
 */
export function usdcUnits(value: number): bigint | null {
  if (!Number.isFinite(value) || value <= 0 || value > MAX_STREAM_USDC) return null;
  return parseUsd(String(value));
}

export const CreateStreamBody = z
  .object({
    recipientAddress: z
      .string()
      .refine((value) => isAddress(value), 'must be a base58 Solana public key (32 bytes)')
      .openapi({ description: 'The recipient: a base58 Solana public key.', example: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' }),
    amountUsdc: z
      .number()
      .refine((value) => usdcUnits(value) !== null, `must be a number above 0, at most ${MAX_STREAM_USDC}, with at most 6 decimal places`)
      .openapi({ description: 'Total USDC to stream.', example: 1500.5 }),
    durationSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_STREAM_SECONDS)
      .openapi({ description: `Stream length in seconds (1 to ${MAX_STREAM_SECONDS}, ten years).`, example: 2_592_000 }),
    cliffSeconds: z
      .number()
      .int()
      .min(0)
      .optional()
      .openapi({ description: 'Seconds before anything can be claimed; less than durationSeconds.', example: 0 }),
    cancelAuthority: z.enum(['sender', 'recipient', 'both']).openapi({ description: 'Who may cancel the stream.' }),
  })
  .superRefine((body, ctx) => {
    if (body.cliffSeconds !== undefined && body.cliffSeconds >= body.durationSeconds) {
      ctx.addIssue({ code: 'custom', path: ['cliffSeconds'], message: 'must be less than durationSeconds' });
    }
  })
  .openapi('CreateStreamRequest');

/** Spec 2.2: a permanent contract; the current implementation answers with `stub: true`. */
export const StreamHandle = z
  .object({
    streamId: z.string(),
    provider: z.enum(['native']).openapi({ description: '`native`, or the third-party SDK that runs the stream.' }),
    startedAt: z.number().int().openapi({ description: 'Unix seconds.' }),
    estimatedEndAt: z.number().int().openapi({ description: 'Unix seconds.' }),
    claimedUsdc: z.number(),
    remainingUsdc: z.number(),
    stub: z.boolean().openapi({ description: 'true for the current mock: nothing moves on chain.' }),
    note: z.string(),
  })
  .openapi('StreamHandle');
