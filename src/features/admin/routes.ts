import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { requirePlatformAdmin } from '../../http/auth.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { AdminQuery, AdminResponse } from './schema.js';
import type { AdminService } from './service.js';

export interface AdminRouteDeps {
  admin: AdminService;
  requireUser: MiddlewareHandler<AppEnv>;
}

/** Its middleware (`requireUser`, then `requirePlatformAdmin`) is added where the route is mounted. */
const read = createRoute({
  method: 'get',
  path: '/api/admin',
  tags: ['Admin'],
  summary: 'Internal operations data (platform admins only)',
  description:
    'Platform admins (`ADMIN_USER_IDS`) only: 401 without a token, 403 for anyone else (before the query is validated). ' +
    '`scope=overview` gives counts (employers, employees, payroll runs per status, fee payments per rail and status, outbox emails ' +
    'per status, reputation writes per status). The other scopes give pages (`page`, `limit` 1-100), newest first: `employers`, ' +
    '`payroll_runs`, `escrows` (metadata only, never the deliverable content), `payments`, `jobs` (pg-boss jobs with counts per ' +
    'queue and state), `failed_jobs` (with the last error and the input), `email_outbox` (alias `emails`), `reputation_writes` ' +
    '(failed ones first), `reputation_failures` (failed only), `audit_log` (alias `audit`) and `announcements` (with their state). ' +
    '`health` asks each outside system (chains, facilitator, bridge, AI, SMTP) whether it answers: `ok` with the latency, or a `reason` ' +
    '(`timeout`, `unreachable`, `error`), never the error text. ' +
    '`employer_id` filters `payroll_runs`, `escrows` and `audit_log`; with any other scope it is a 400.',
  security: [{ bearerAuth: [] }],
  request: { query: AdminQuery },
  responses: {
    200: jsonContent(AdminResponse, 'The scope asked for.'),
    ...errorResponses(400, 401, 403),
  },
});

const handleRead =
  (admin: AdminService): RouteHandler<typeof read, AppEnv> =>
  async (c) => {
    const query = c.req.valid('query');
    c.header('Cache-Control', 'no-store');
    return c.json(await admin.read({ scope: query.scope, page: query.page, limit: query.limit, employerId: query.employer_id }), 200);
  };

export function adminRoutes(deps: AdminRouteDeps): FeatureApp {
  const app = featureApp();
  app.openapi({ ...read, middleware: [deps.requireUser, requirePlatformAdmin] }, handleRead(deps.admin));
  return app;
}
