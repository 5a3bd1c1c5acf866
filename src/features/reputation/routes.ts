import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { ReputationParams, ReputationSummarySchema } from './schema.js';
import type { ReputationService } from './service.js';

/** GET /api/reputation/{address} (spec 4.5): free, no auth. */
export function registerReputationRoutes(app: OpenAPIHono<AppEnv>, deps: { reputation: ReputationService }): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/reputation/{address}',
      tags: ['Reputation'],
      summary: 'Reputation summary of a Solana key or an ERC-8004 agent id, from the artifacts written on chain (free, no auth)',
      request: { params: ReputationParams },
      responses: {
        200: jsonContent(ReputationSummarySchema, 'The summary; an address never seen has zero totals.'),
        ...errorResponses(400),
      },
    }),
    async (c) => c.json(await deps.reputation.summary(c.req.valid('param').address), 200),
  );
}
