import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { ErrorSchema, errorResponses, jsonContent } from '../../http/validation.js';
import { EmployerIdParams } from '../employers/schema.js';
import { MAX_NONCE } from './keccak-wasm.js';
import type { VirtualMasterService, VirtualMasterStatus } from './master.js';

const nonceSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,19})$/, 'must be a decimal integer string')
  .refine((text) => !/^[0-9]+$/.test(text) || BigInt(text) <= MAX_NONCE, 'must be at most 2^64 - 1')
  .transform((text) => BigInt(text));

const RegisterBody = z
  .object({
    startNonce: nonceSchema.optional().openapi({
      type: 'string',
      example: '50000000',
      description: 'Where to start mining (decimal). Default: where the last request stopped (`next_start_nonce`), else 0.',
    }),
  })
  .openapi('VirtualMasterRegisterBody');

const VirtualMaster = z
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

const BudgetExhausted = ErrorSchema.extend({
  nextStartNonce: z.string().openapi({ description: 'Retry with this `startNonce` (decimal); the server also remembers it.' }),
}).openapi('VirtualMasterBudgetExhausted');

function present(status: VirtualMasterStatus) {
  return {
    employer_id: status.employerId,
    registered: status.registered,
    virtual_master_id: status.virtualMasterId,
    virtual_master_address: status.virtualMasterAddress,
    virtual_master_salt: status.virtualMasterSalt,
    virtual_master_tx_hash: status.virtualMasterTxHash,
    next_start_nonce: status.nextStartNonce.toString(),
    zero_bytes: status.zeroBytes,
    budget_per_request: status.budget,
    mining: status.mining,
  };
}

/** `GET, POST /api/employers/{id}/virtual-master` (spec 4.8, 2.13): registration status; register. */
export function virtualMasterRoutes(deps: { masters: VirtualMasterService; requireUser: MiddlewareHandler<AppEnv>; idempotency: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/employers/{id}/virtual-master',
      tags: ['Employers'],
      summary: "The employer's virtual-master registration status (owner)",
      security: [{ bearerAuth: [] }],
      middleware: deps.requireUser,
      request: { params: EmployerIdParams },
      responses: { 200: jsonContent(VirtualMaster, 'The cached registration, or where mining stands.'), ...errorResponses(400, 401, 404) },
    }),
    async (c) => c.json(present(await deps.masters.status(c.var.caller, c.req.valid('param').id)), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/employers/{id}/virtual-master',
      tags: ['Employers'],
      summary: "Register the employer's virtual master: mine a salt, broadcast registerVirtualMaster(salt), cache the result (owner)",
      description:
        'Mines a salt such that keccak256(masterAddress || salt) begins with `zero_bytes` zero bytes (salt = the nonce as a 32-byte ' +
        'big-endian number), spending at most `budget_per_request` iterations (spec 8.1: 50,000,000) across all cores. When the budget ' +
        'runs out the answer is 504 `MINING_BUDGET_EXHAUSTED` with `nextStartNonce`; the server remembers it, so a retry with or ' +
        'without it resumes exactly there. Found: the salt is registered on the Tempo registry from the employer\'s own master key ' +
        'and the master id, salt and transaction are cached. 409 `VIRTUAL_MASTER_REGISTERED` once registered; 409 ' +
        '`MINING_IN_PROGRESS` while another POST for the same employer is mining.',
      security: [{ bearerAuth: [] }],
      middleware: [deps.requireUser, deps.idempotency] as const,
      request: { params: EmployerIdParams, body: { required: false, content: { 'application/json': { schema: RegisterBody } } } },
      responses: {
        200: jsonContent(VirtualMaster, 'Registered: the cached registration.'),
        ...errorResponses(400, 401, 404, 409, 415, 422),
        504: jsonContent(BudgetExhausted, '`MINING_BUDGET_EXHAUSTED`: no salt within this request\'s budget; retry at `nextStartNonce`.'),
      },
    }),
    async (c) => {
      const body = (c.req.valid('json') as z.infer<typeof RegisterBody> | undefined) ?? {};
      const status = await deps.masters.register(c.var.caller, c.req.valid('param').id, { startNonce: body.startNonce }, c.var.requestId);
      return c.json(present(status), 200);
    },
  );
  return app;
}
