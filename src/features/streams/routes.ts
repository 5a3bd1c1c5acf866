import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponse } from '../../http/errors.js';
import { AppError } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import { CreateStreamBody, StreamHandle } from './schema.js';
import { openStubStream } from './service.js';
import type { ServiceClock } from '../../clock/clock.js';

export interface StreamRouteDeps {
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
  /** The Solana wallet streams are sent from; null when the server has none configured (503). */
  solanaAgentWallet: string | null;
  /** The service's clock (database.clock), which a stream's start and end are counted on. */
  clock: Pick<ServiceClock, 'now'>;
}

/** POST /api/x402/streams (PAID.streamOpen), less its gate: `paidRoute` adds that when the routes are built. */
const openStreamRoute = {
  request: { body: jsonBody(CreateStreamBody) },
  description:
    'Answers the stream handle of spec 2.2 with `stub: true`: the current implementation is a mock and moves nothing on chain. ' +
    '503 `SOLANA_AGENT_WALLET_NOT_CONFIGURED` (before any payment is asked for) when the server has no Solana agent wallet.',
  responses: {
    200: jsonContent(StreamHandle, 'The stream handle (a mock: `stub` is true).'),
    ...errorResponses(400, 415),
    503: jsonContent(ErrorSchema, 'The Solana agent wallet is not configured on this server (`SOLANA_AGENT_WALLET_NOT_CONFIGURED`).'),
  },
};

/** 503 when the server has no Solana agent wallet; runs before the gate, so a server that cannot serve the route does not ask to be paid. */
function requireWallet(solanaAgentWallet: string | null): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (solanaAgentWallet === null) {
      return errorResponse(
        c,
        new AppError('SOLANA_AGENT_WALLET_NOT_CONFIGURED', 'Streams need the Solana agent wallet, which is not configured on this server.'),
      );
    }
    await next();
  };
}

export function streamRoutes(deps: StreamRouteDeps): FeatureApp {
  const app = featureApp();
  const paid = paidRoute(PAID.streamOpen, deps.gate, openStreamRoute);
  app.openapi(createRoute({ ...paid, middleware: [requireWallet(deps.solanaAgentWallet), ...paid.middleware] }), (c) =>
    c.json(openStubStream(c.req.valid('json'), deps.clock.now()), 200),
  );
  return app;
}
