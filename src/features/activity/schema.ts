import { z } from '@hono/zod-openapi';
import { ACTIVITY_TYPES } from './store.js';

export const ActivityQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).openapi({ param: { name: 'limit', in: 'query' }, description: 'Cards per page (default 50, at most 200).' }),
  before: z
    .string()
    .max(300)
    .optional()
    .openapi({ param: { name: 'before', in: 'query' }, description: '`next_cursor` of the previous page: the cards older than it.' }),
  employeeId: z.uuid().optional().openapi({
    param: { name: 'employeeId', in: 'query' },
    description: 'Only this one of your employee records; default: all of them (every employer you work for).',
  }),
});
export const ActivityCard = z
  .object({
    type: z.enum(ACTIVITY_TYPES).openapi({ description: '`virtual_inflow`: a transfer to your virtual deposit address, indexed from the chain.' }),
    id: z.string().openapi({ description: 'The source record id; for `virtual_inflow`, `<tx_hash>:<log_index>`.' }),
    amount: z.string().openapi({ description: 'USD decimal.', example: '250.000000' }),
    amount_base_units: z.string().openapi({ description: 'Integer base units (6 decimals).', example: '250000000' }),
    occurred_at: z.string().openapi({ format: 'date-time' }),
    details: z.record(z.string(), z.unknown()).openapi({
      description:
        'Per type; all carry `direction` (`in` or `out`) and `employee_id`. payroll_payment: employer_id, run_id, status, chain, wallet_address, tx_hash, block_number, memo, reason. ' +
        'advance: status, tx_hash. offramp: employer_id, status, destination_type, bridge_transfer_id, failure_reason. ' +
        'virtual_inflow: employer_id, tx_hash, log_index, token_address, virtual_address, sender_address, block_number.',
    }),
  })
  .openapi('ActivityCard');
export const ActivityPage = z
  .object({
    activity: z.array(ActivityCard),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as `before` for older cards; null on the last page.' }),
  })
  .openapi('ActivityPage');
