import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { requirePaidCaller } from '../../http/paid-caller.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import type { PaidCallers } from '../employers/index.js';
import { EmployerIdParams, PaidIdentityHeaders } from '../employers/index.js';
import {
  AddBlocklistBody,
  AddBlocklistResponse,
  BlocklistEntryParams,
  BlocklistResponse,
  CheckBody,
  CheckResponse,
  ComplianceList,
  ComplianceListParams,
  ComplianceListQuery,
  ComplianceOverview,
} from './schema.js';
import { ComplianceService } from './service.js';
import type { BlocklistRow } from './store.js';

export interface ComplianceRouteDeps {
  compliance: ComplianceService;
  paidCallers: PaidCallers;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
}

const security = [{ bearerAuth: [] }];
const IDENTITY =
  'Identity beyond the payment: `X-Identity-Token` (the employer owner\'s identity-provider JWT) or `X-Agent-Key` (the employer\'s agent key). ' +
  'A caller that does not act for the employer gets 404, exactly as for a missing employer (the fee is kept).';

function presentEntry(entry: BlocklistRow) {
  return {
    id: entry.id,
    employer_id: entry.employerId!,
    wallet_address: entry.walletAddress,
    reason: entry.reason,
    source: entry.source,
    created_at: entry.createdAt.toISOString(),
  };
}

// The owner routes' middleware (bearer identity, idempotency) and the paid routes' gate are added
// when the routes are built: they need the app's dependencies.

/** POST /api/mpp/compliance/check (PAID.complianceCheck), less its gate. */
const checkRoute = {
  description:
    'Screens the wallet against the sanctions list, the employer\'s blocklist (when `employerId` is given) and a TIP-403 policy; ' +
    `every check is written to the compliance ledger, BLOCKED ones too. ${IDENTITY} Only needed with \`employerId\`.`,
  request: { headers: PaidIdentityHeaders, body: jsonBody(CheckBody) },
  responses: {
    200: jsonContent(CheckResponse, 'The result (spec 2.6), with the reasons when BLOCKED.'),
    ...errorResponses(400, 401, 404, 413, 415),
    422: jsonContent(ErrorSchema, 'POLICY_NOT_FOUND: the TIP-403 policy does not exist (`field` is `policyId`). The fee is kept.'),
  },
};

/** GET /api/mpp/marketplace/compliance-list/{employerId} (PAID.complianceList), less its gate and paid-caller middleware. */
const clearedListRoute = {
  description:
    'Wallets whose latest check in the employer\'s ledger is CLEAR and that are on neither the sanctions list nor its blocklist now, ' +
    `most recently checked first. ${IDENTITY}`,
  request: { headers: PaidIdentityHeaders, params: ComplianceListParams, query: ComplianceListQuery },
  responses: {
    200: jsonContent(ComplianceList, 'The compliance list envelope (spec 2.7).'),
    ...errorResponses(400, 401, 404),
  },
};

const overview = createRoute({
  method: 'get',
  path: '/api/employers/{id}/compliance',
  tags: ['Compliance'],
  summary: 'Compliance summary, employees with their latest check, and the audit log',
  security,
  request: { params: EmployerIdParams },
  responses: {
    200: jsonContent(ComplianceOverview, 'The employer\'s compliance overview.'),
    ...errorResponses(400, 401, 404),
  },
});

const listBlocklist = createRoute({
  method: 'get',
  path: '/api/employers/{id}/blocklist',
  tags: ['Compliance'],
  summary: "The employer's own wallet blocklist",
  security,
  request: { params: EmployerIdParams },
  responses: {
    200: jsonContent(BlocklistResponse, 'Entries, newest first.'),
    ...errorResponses(400, 401, 404),
  },
});

const addToBlocklist = createRoute({
  method: 'post',
  path: '/api/employers/{id}/blocklist',
  tags: ['Compliance'],
  summary: 'Block a wallet for this employer (or return the entry that already blocks it)',
  security,
  request: { params: EmployerIdParams, body: jsonBody(AddBlocklistBody) },
  responses: {
    201: jsonContent(AddBlocklistResponse, 'Added.'),
    200: jsonContent(AddBlocklistResponse, 'The wallet was already blocked; the existing entry.'),
    ...errorResponses(400, 401, 404, 413, 415, 422),
  },
});

const removeFromBlocklist = createRoute({
  method: 'delete',
  path: '/api/employers/{id}/blocklist/{entryId}',
  tags: ['Compliance'],
  summary: "Remove an entry from the employer's blocklist",
  description: 'Idempotent by nature: once removed, the entry is gone (a repeat answers 404). `Idempotency-Key` is not stored here.',
  security,
  request: { params: BlocklistEntryParams },
  responses: {
    204: { description: 'Removed.' },
    ...errorResponses(400, 401, 404),
  },
});

/** Compliance (spec 4.3 and 4.8): the paid check and cleared list, and the owner's dashboard routes. */
export function complianceRoutes(deps: ComplianceRouteDeps): FeatureApp {
  const app = featureApp();
  const { compliance } = deps;
  const owner = [deps.requireUser];
  const ownerWrite = [deps.requireUser, deps.idempotency];

  app.openapi(createRoute(paidRoute(PAID.complianceCheck, deps.gate, checkRoute)), async (c) => {
    const body = c.req.valid('json');
    // Not requirePaidCaller: identity matters only with employerId, and a stale header must not refuse a check without it.
    if (body.employerId !== undefined) {
      ComplianceService.requireActsFor(await deps.paidCallers.resolve(c.req.raw.headers), body.employerId);
      c.var.payment.attribute(body.employerId);
    }
    return c.json(await compliance.check(body), 200);
  });

  app.openapi(
    createRoute(paidRoute(PAID.complianceList, deps.gate, { middleware: [requirePaidCaller(deps.paidCallers)], ...clearedListRoute })),
    async (c) => {
      const { employerId } = c.req.valid('param');
      const { limit } = c.req.valid('query');
      ComplianceService.requireActsFor(c.var.paidCaller, employerId);
      c.var.payment.attribute(employerId);
      return c.json(await compliance.clearedList(employerId, limit), 200);
    },
  );

  app.openapi({ ...overview, middleware: owner }, async (c) => {
    const { id } = c.req.valid('param');
    return c.json(await compliance.overview(c.var.caller, id), 200);
  });

  app.openapi({ ...listBlocklist, middleware: owner }, async (c) => {
    const { id } = c.req.valid('param');
    const entries = await compliance.listBlocklist(c.var.caller, id);
    return c.json({ employer_id: id, entries: entries.map(presentEntry) }, 200);
  });

  app.openapi({ ...addToBlocklist, middleware: ownerWrite }, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const entry = { walletAddress: body.wallet_address, reason: body.reason };
    const { entry: row, created } = await compliance.addToBlocklist(c.var.caller, id, entry, c.var.requestId);
    return c.json({ ...presentEntry(row), created }, created ? 201 : 200);
  });

  app.openapi({ ...removeFromBlocklist, middleware: owner }, async (c) => {
    const { id, entryId } = c.req.valid('param');
    await compliance.removeFromBlocklist(c.var.caller, id, entryId, c.var.requestId);
    return c.body(null, 204);
  });
  return app;
}
