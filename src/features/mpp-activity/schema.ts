import { z } from '@hono/zod-openapi';
import { MPP_SESSION_STATUSES } from '../../payments/tables.js';

export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-indexed page.' }),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
export const Receipt = z
  .object({
    id: z.uuid(),
    route: z.string().openapi({ example: 'POST /api/mpp/agent/pay' }),
    rail: z.enum(['A', 'B', 'C', 'card']),
    payer: z.string().nullable(),
    amount_usd: z.string().openapi({ example: '0.050000' }),
    reference: z.string().nullable().openapi({ description: 'Transaction hash, signature or card payment id.' }),
    status: z.string(),
    receipt: z.record(z.string(), z.unknown()).openapi({ description: 'The receipt the payer was given.' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('MppReceipt');
export const ReceiptsResponse = z
  .object({
    employer_id: z.uuid(),
    totals: z.array(z.object({ rail: z.string(), count: z.number().int(), amount_usd: z.string() })).openapi({ description: 'Settled receipts per rail, all time.' }),
    receipts: z.array(Receipt),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('MppReceipts');
export const Session = z
  .object({
    channel_id: z.string().openapi({ description: 'The payment channel id (lower case).', example: '0x6d0f...' }),
    payer: z.string(),
    route: z.string().openapi({ example: 'GET /api/mpp/agent/stream' }),
    status: z.enum(MPP_SESSION_STATUSES),
    deposit_usd: z.string().openapi({ example: '10.000000' }),
    accepted_usd: z.string().openapi({ description: 'Highest cumulative voucher amount accepted.', example: '1.250000' }),
    spent_usd: z.string().openapi({ description: 'What the service has charged against the channel.', example: '1.200000' }),
    settled_usd: z.string().openapi({ description: 'What has been settled on chain.', example: '0.000000' }),
    opened_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
    closed_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('MppSession');
export const SessionsResponse = z
  .object({
    employer_id: z.uuid(),
    sessions: z.array(Session),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('MppSessions');
