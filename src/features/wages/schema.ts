import { z } from '@hono/zod-openapi';
import { evmAddressSchema } from '../../http/validation.js';

export const BalanceStreamQuery = z
  .object({
    employeeId: z.uuid().optional().openapi({ param: { name: 'employeeId', in: 'query' }, description: 'The employee (canonical).' }),
    address: evmAddressSchema.optional().openapi({ param: { name: 'address', in: 'query' }, description: "The employee's wallet (legacy fallback)." }),
  })
  .refine((q) => q.employeeId !== undefined || q.address !== undefined, { message: 'send employeeId (or the legacy address)', path: ['employeeId'] });

export const BalanceTickSchema = z
  .object({
    tick: z.number().int().openapi({ description: '1 for the first event, then +1 per second.' }),
    employeeId: z.string().nullable(),
    address: z.string().nullable(),
    balance: z.string().openapi({ description: 'Wallet balance plus what has accrued, base units.' }),
    balanceUsd: z.string(),
    accrued_raw: z.string().openapi({ description: 'Accrued since the last claim, base units.' }),
    accrued_usd: z.string(),
    salary_per_second_usd: z.string().openapi({ description: 'The vesting rate: annual salary / 31,536,000 seconds.', example: '0.003170' }),
    timestamp: z.number().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('SalaryBalanceTick');

export const AdvanceBody = z.object({
  employeeAddress: evmAddressSchema.openapi({ description: "The employee's wallet, whose accrued salary is claimed." }),
});
export const AdvanceResponse = z
  .object({
    success: z.boolean(),
    employee_address: z.string(),
    tx_hash: z.string(),
    claimed_at: z.string().openapi({ format: 'date-time' }),
    amount: z.string().openapi({ description: 'Claimed, base units.' }),
    amount_usd: z.string(),
  })
  .openapi('AdvanceResult');

export const SalaryStreamSchema = z
  .object({
    employee_id: z.uuid(),
    wallet_address: z.string(),
    active: z.boolean(),
    rate_per_second: z.string().openapi({ description: 'Base units a second: annual salary / 31,536,000.' }),
    salary_per_second_usd: z.string(),
    accruing_since: z.string().openapi({ description: 'Unix seconds (the chain clock) from which the unclaimed amount accrues.' }),
    wallet_balance: z.string().openapi({ description: 'The wallet balance when read, base units.' }),
    as_of: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('SalaryStream');

export const SalaryStreamParams = z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }) });
