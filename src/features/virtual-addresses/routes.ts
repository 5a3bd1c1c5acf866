import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Hex } from 'viem';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest, notFound } from '../../errors.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import type { EmployersService } from '../employers/service.js';
import { userTag, virtualAddress } from './address.js';

export const TIP20_ONLY_WARNING =
  'Only TIP-20 stablecoin transfers on the Tempo chain are routed from this address to your account. Any other asset, or a transfer on another chain, is lost.';

const DepositAddressQuery = z.object({
  employeeId: z.uuid().optional().openapi({
    param: { name: 'employeeId', in: 'query' },
    description: 'Which of your employee records; required only when you work for more than one employer.',
  }),
});
const DepositAddress = z
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

/** `GET /api/portal/deposit-address` (spec 4.8, 2.13): the signed-in employee's derived deposit address. */
export function depositAddressRoute(deps: { employers: EmployersService; requireUser: MiddlewareHandler<AppEnv>; network: string }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/portal/deposit-address',
      tags: ['Portal'],
      summary: "The employee's virtual deposit address, or `available: false` before the employer registers",
      security: [{ bearerAuth: [] }],
      middleware: deps.requireUser,
      request: { query: DepositAddressQuery },
      responses: { 200: jsonContent(DepositAddress, 'The address and the TIP-20-only warning.'), ...errorResponses(400, 401, 404) },
    }),
    async (c) => {
      const { employeeIds } = c.var.caller;
      const { employeeId = employeeIds.length === 1 ? employeeIds[0] : undefined } = c.req.valid('query');
      if (employeeIds.length === 0) throw notFound('Employee');
      if (!employeeId) throw badRequest('employeeId', 'is required: you are an employee of more than one employer');
      const employee = employeeIds.includes(employeeId) ? await deps.employers.findEmployee(employeeId) : undefined;
      if (!employee) throw notFound('Employee');
      const employer = (await deps.employers.findEmployer(employee.employerId))!;
      const tag = userTag(employer.id, employee.id);
      const masterId = employer.virtualMasterId as Hex | null;
      return c.json(
        {
          employee_id: employee.id,
          employer_id: employer.id,
          available: masterId !== null,
          address: masterId ? virtualAddress(masterId, tag) : null,
          virtual_master_id: masterId,
          user_tag: tag,
          network: deps.network,
          warning: TIP20_ONLY_WARNING,
        },
        200,
      );
    },
  );
  return app;
}
