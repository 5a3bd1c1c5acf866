import { createRoute } from '@hono/zod-openapi';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { ReputationParams, ReputationSummarySchema } from './schema.js';
import type { ReputationService } from './service.js';

const summaryRoute = createRoute({
  method: 'get',
  path: '/api/reputation/{address}',
  tags: ['Reputation'],
  summary: 'Reputation summary of a Solana key or an ERC-8004 agent id, from the artifacts written on chain (free, no auth)',
  request: { params: ReputationParams },
  responses: {
    200: jsonContent(ReputationSummarySchema, 'The summary; an address never seen has zero totals.'),
    ...errorResponses(400),
  },
});

/** GET /api/reputation/{address} (spec 4.5): free, no auth. */
export function reputationRoutes(deps: { reputation: ReputationService }): FeatureApp {
  return featureApp().openapi(summaryRoute, async (c) => c.json(await deps.reputation.summary(c.req.valid('param').address), 200));
}
