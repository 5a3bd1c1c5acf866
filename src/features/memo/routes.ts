import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Hex } from 'viem';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import { decodeMemo } from './codec.js';
import { DecodeBody, Decoded } from './schema.js';

/** POST /api/mpp/memo/decode (PAID.memoDecode), less its gate: `paidRoute` adds that when the routes are built. */
const decodeMemoRoute = {
  request: { body: jsonBody(DecodeBody) },
  responses: { 200: jsonContent(Decoded, 'The memo and its payroll fields (layout in docs/api.md).'), ...errorResponses(400, 415) },
};

export function memoRoutes(deps: { gate: (route: PaidRoute) => MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi(createRoute(paidRoute(PAID.memoDecode, deps.gate, decodeMemoRoute)), (c) => {
    const { memo } = c.req.valid('json');
    return c.json({ memo, fields: decodeMemo(memo as Hex) }, 200);
  });
  return app;
}
