import { createRoute, type z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Hex } from 'viem';
import type { AppEnv, Caller } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest, notFound } from '../../errors.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { EmployerIdParams } from '../employers/index.js';
import type { EmployersService } from '../employers/index.js';
import { userTag, virtualAddress } from './address.js';
import type { VirtualMasterService, VirtualMasterStatus } from './master.js';
import { BudgetExhausted, DepositAddress, DepositAddressQuery, RegisterBody, VirtualMaster } from './schema.js';

export const TIP20_ONLY_WARNING =
  'Only TIP-20 stablecoin transfers on the Tempo chain are routed from this address to your account. Any other asset, or a transfer on another chain, is lost.';

const depositAddress = createRoute({
  method: 'get',
  path: '/api/portal/deposit-address',
  tags: ['Portal'],
  summary: "The employee's virtual deposit address, or `available: false` before the employer registers",
  security: [{ bearerAuth: [] }],
  request: { query: DepositAddressQuery },
  responses: { 200: jsonContent(DepositAddress, 'The address and the TIP-20-only warning.'), ...errorResponses(400, 401, 404) },
});

const masterStatus = createRoute({
  method: 'get',
  path: '/api/employers/{id}/virtual-master',
  tags: ['Employers'],
  summary: "The employer's virtual-master registration status (owner)",
  security: [{ bearerAuth: [] }],
  request: { params: EmployerIdParams },
  responses: { 200: jsonContent(VirtualMaster, 'The cached registration, or where mining stands.'), ...errorResponses(400, 401, 404) },
});

const registerMaster = createRoute({
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
  request: { params: EmployerIdParams, body: { required: false, content: { 'application/json': { schema: RegisterBody } } } },
  responses: {
    200: jsonContent(VirtualMaster, 'Registered: the cached registration.'),
    ...errorResponses(400, 401, 404, 409, 415, 422),
    504: jsonContent(BudgetExhausted, '`MINING_BUDGET_EXHAUSTED`: no salt within this request\'s budget; retry at `nextStartNonce`.'),
  },
});

export interface DepositAddressRouteDeps {
  employers: EmployersService;
  requireUser: MiddlewareHandler<AppEnv>;
  /** CAIP-2 id of the Tempo chain the address is on. */
  network: string;
}

/** `GET /api/portal/deposit-address` (spec 4.8, 2.13): the signed-in employee's derived deposit address. */
export function depositAddressRoute(deps: DepositAddressRouteDeps): FeatureApp {
  const app = featureApp();
  app.openapi({ ...depositAddress, middleware: deps.requireUser }, async (c) =>
    c.json(await employeeDepositAddress(c.var.caller, c.req.valid('query').employeeId, deps), 200),
  );
  return app;
}

/** The caller's deposit address for `employeeId` (optional when the caller works for one employer only). */
async function employeeDepositAddress(caller: Caller, requested: string | undefined, deps: DepositAddressRouteDeps) {
  const { employeeIds } = caller;
  const employeeId = requested ?? (employeeIds.length === 1 ? employeeIds[0] : undefined);
  if (employeeIds.length === 0) throw notFound('Employee');
  if (!employeeId) throw badRequest('employeeId', 'is required: you are an employee of more than one employer');
  const employee = employeeIds.includes(employeeId) ? await deps.employers.findEmployee(employeeId) : undefined;
  if (!employee) throw notFound('Employee');
  const employer = (await deps.employers.findEmployer(employee.employerId))!;
  const tag = userTag(employer.id, employee.id);
  const masterId = employer.virtualMasterId as Hex | null;
  return {
    employee_id: employee.id,
    employer_id: employer.id,
    available: masterId !== null,
    address: masterId ? virtualAddress(masterId, tag) : null,
    virtual_master_id: masterId,
    user_tag: tag,
    network: deps.network,
    warning: TIP20_ONLY_WARNING,
  };
}

/** `GET, POST /api/employers/{id}/virtual-master` (spec 4.8, 2.13): registration status; register. */
export function virtualMasterRoutes(deps: { masters: VirtualMasterService; requireUser: MiddlewareHandler<AppEnv>; idempotency: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi({ ...masterStatus, middleware: deps.requireUser }, async (c) => c.json(present(await deps.masters.status(c.var.caller, c.req.valid('param').id)), 200));
  app.openapi({ ...registerMaster, middleware: [deps.requireUser, deps.idempotency] as const }, async (c) => {
    const body = (c.req.valid('json') as z.infer<typeof RegisterBody> | undefined) ?? {};
    const status = await deps.masters.register(c.var.caller, c.req.valid('param').id, { startNonce: body.startNonce }, c.var.requestId);
    return c.json(present(status), 200);
  });
  return app;
}

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
