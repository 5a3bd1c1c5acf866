import { z } from '@hono/zod-openapi';
import { emailSchema, evmAddressSchema, usdAmountSchema } from '../../http/validation.js';

export const EmployerIdParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Employer id.' }),
});

export const CreateEmployerBody = z
  .object({
    name: z.string().trim().min(1).max(200).openapi({ example: 'Acme Robotics' }),
    admin_wallet: evmAddressSchema.optional().openapi({ description: 'EVM address that administers the treasury.' }),
  })
  .openapi('CreateEmployerRequest');

export const Employer = z
  .object({
    id: z.uuid(),
    name: z.string(),
    admin_wallet: z.string().nullable(),
    employer_account_id: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    created: z.boolean().openapi({ description: 'false when the caller already owned this employer.' }),
  })
  .openapi('Employer');

export const CreateEmployeeBody = z
  .object({
    email: emailSchema.openapi({ example: 'ada@example.com' }),
    full_name: z.string().trim().min(1).max(200).openapi({ example: 'Ada Lovelace' }),
    wallet_address: evmAddressSchema.optional(),
    solana_wallet_address: z
      .string()
      .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 Solana address')
      .optional(),
    annual_salary_usd: usdAmountSchema.optional().openapi({ description: 'Annual salary in USD; default 0.' }),
    department: z.string().trim().max(100).optional(),
    cost_centre: z.string().trim().max(100).optional(),
  })
  .openapi('CreateEmployeeRequest');

export const Employee = z
  .object({
    id: z.uuid(),
    employer_id: z.uuid(),
    email: z.string(),
    full_name: z.string(),
    wallet_address: z.string().nullable(),
    solana_wallet_address: z.string().nullable(),
    annual_salary_usd: z.string().openapi({ description: 'Decimal string, 6 places.' }),
    department: z.string().nullable(),
    cost_centre: z.string().nullable(),
    status: z.enum(['active', 'removed']),
    payroll_paused: z.boolean(),
    manual_review_status: z.enum(['none', 'pending', 'approved', 'rejected']),
    kyc_status: z.string(),
    linked_user: z.boolean().openapi({ description: 'Whether the employee has signed in.' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Employee');

export const CreateEmployeeResponse = Employee.extend({
  created: z.boolean().openapi({ description: 'false when an employee with this email already existed.' }),
}).openapi('CreateEmployeeResponse');

export const TeamQuery = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-indexed page.' }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const TeamResponse = z
  .object({
    employer_id: z.uuid(),
    employees: z.array(Employee),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('Team');

export const AgentKeyResponse = z
  .object({
    employer_id: z.uuid(),
    agent_key: z.string().openapi({ description: 'Shown this once; send it as `X-Agent-Key` on paid routes. Only its hash is stored.' }),
    prefix: z.string().openapi({ description: 'The first characters, to recognise the key later.' }),
    rotated: z.boolean().openapi({ description: 'true when an earlier key was replaced (it no longer works).' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AgentKey');
