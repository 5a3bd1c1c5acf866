import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Address } from 'viem';
import type { AppEnv } from '../../http/context.js';
import { errorResponses, evmAddressSchema, jsonContent } from '../../http/validation.js';
import { findPaidRoute, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import type { TreasuryService } from './service.js';

const YieldRatesQuery = z.object({
  token: evmAddressSchema.optional().openapi({ param: { name: 'token', in: 'query' }, description: 'Token address; default the base stable token.' }),
});
const YieldRates = z
  .object({
    apy_bps: z.number(),
    apy_percent: z.number(),
    sources: z.array(z.string()),
    allocation: z.array(z.number()).openapi({ description: 'Basis points per source.' }),
    timestamp: z.number().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('YieldRates');

export interface TreasuryRouteDeps {
  treasury: TreasuryService;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
}

export function registerTreasuryRoutes(app: OpenAPIHono<AppEnv>, deps: TreasuryRouteDeps): void {
  app.openapi(
    createRoute(
      paidRoute(findPaidRoute('GET', '/api/mpp/treasury/yield-rates')!, deps.gate, {
        request: { query: YieldRatesQuery },
        responses: {
          200: jsonContent(YieldRates, 'The yield sources and the blended APY of the default allocation.'),
          ...errorResponses(400, 404),
        },
      }),
    ),
    async (c) => {
      const { token } = c.req.valid('query');
      return c.json(await deps.treasury.yieldRates(token as Address | undefined), 200);
    },
  );
}
