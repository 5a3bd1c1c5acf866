import { z } from '@hono/zod-openapi';
import { ErrorSchema } from '../../http/validation.js';
import { MAX_NONCE } from './keccak-wasm.js';

export const DepositAddressQuery = z.object({
  employeeId: z.uuid().optional().openapi({
    param: { name: 'employeeId', in: 'query' },
    description: 'Which of your employee records; required only when you work for more than one employer.',
  }),
});
export const DepositAddress = z
  .object({
    employee_id: z.uuid(),
    employer_id: z.uuid(),
    available: z.boolean().openapi({ description: 'False until the employer registers its virtual master.' }),
    address: z.string().nullable().openapi({ description: 'masterId || 0xFD x 10 || userTag (spec 2.13).' }),
    virtual_master_id: z.string().nullable(),
    user_tag: z.string().openapi({ description: 'First 6 bytes of keccak256(employerId || employeeId), UUIDs as 16 bytes each.' }),
    network: z.string(),
    warning: z.string(),
  })
  .openapi('DepositAddress');

const nonceSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,19})$/, 'must be a decimal integer string')
  .refine((text) => !/^[0-9]+$/.test(text) || BigInt(text) <= MAX_NONCE, 'must be at most 2^64 - 1')
  .transform((text) => BigInt(text));

export const RegisterBody = z
  .object({
    startNonce: nonceSchema.optional().openapi({
      type: 'string',
      example: '50000000',
      description: 'Where to start mining (decimal). Default: where the last request stopped (`next_start_nonce`), else 0.',
    }),
  })
  .openapi('VirtualMasterRegisterBody');

export const VirtualMaster = z
  .object({
    employer_id: z.uuid(),
    registered: z.boolean(),
    virtual_master_id: z.string().nullable().openapi({ description: 'The registry-assigned 4-byte master id, `0x` + 8 lowercase hex; null until registered.' }),
    virtual_master_address: z.string().openapi({ description: "The employer's own master address (derived from the service key), where deposits to its virtual addresses land." }),
    virtual_master_salt: z.string().nullable().openapi({ description: 'The registered 32-byte salt; null until registered.' }),
    virtual_master_tx_hash: z.string().nullable().openapi({ description: 'The `registerVirtualMaster` transaction; null until registered.' }),
    next_start_nonce: z.string().openapi({ description: 'Where the next POST without `startNonce` resumes mining (decimal).' }),
    zero_bytes: z.number().int().openapi({ description: 'Leading zero bytes of keccak256(master, salt) the registry demands (4 on Tempo).' }),
    budget_per_request: z.number().int().openapi({ description: 'Salt-mining iterations one POST may spend (at most 50,000,000).' }),
    mining: z.boolean().openapi({ description: 'A POST for this employer is mining right now (on the instance that answered).' }),
  })
  .openapi('VirtualMaster');

export const BudgetExhausted = ErrorSchema.extend({
  nextStartNonce: z.string().openapi({ description: 'Retry with this `startNonce` (decimal); the server also remembers it.' }),
}).openapi('VirtualMasterBudgetExhausted');
