import { createRoute, type RouteHandler, type z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { badRequest, notFound } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent, rateLimitedContent } from '../../http/validation.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import {
  AgentProfile,
  CursorRegistrationId,
  Directory,
  DirectoryQuery,
  ProfileParams,
  RegisterBody,
  RegisterHeaders,
  RegistrationResult,
} from './schema.js';
import type { AgentDirectoryService, AgentRegistrationRow, DirectoryPosition } from './service.js';

export interface AgentDirectoryRouteDeps {
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
  directory: AgentDirectoryService;
}

/** Public profile of a registration (docs/api.md, "Agent registration and directory"). */
export function presentProfile(row: AgentRegistrationRow): z.infer<typeof AgentProfile> {
  const reputationSubject = row.erc8004AgentId ?? row.solanaPublicKey;
  return {
    id: row.id,
    identifier: row.identifier,
    display_name: row.displayName,
    description: row.description,
    capabilities: Array.isArray(row.capabilities) ? (row.capabilities as string[]) : [],
    erc8004_agent_id: row.erc8004AgentId,
    solana_public_key: row.solanaPublicKey,
    owner_address: row.ownerAddress,
    registered_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    reputation_url: reputationSubject === null ? null : `/api/reputation/${encodeURIComponent(reputationSubject)}`,
  };
}

/** Cursor: the last row's created_at (microseconds, UTC) and id, base64url-encoded; opaque to clients. */
const encodeCursor = (position: DirectoryPosition) => Buffer.from(`${position.createdAt}|${position.id}`).toString('base64url');
const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
function decodeCursor(cursor: string): DirectoryPosition {
  const [createdAt, id, extra] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (extra !== undefined || !createdAt || !CURSOR_AT.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !CursorRegistrationId.safeParse(id).success) {
    throw badRequest('cursor', 'is not a cursor this route gave out');
  }
  return { createdAt, id: id! };
}

/**
 * Reads the raw body once, before the JSON validator: Hono caches the bytes, the validator parses
 * JSON from them, and the handler hashes the very same bytes for the identity proof.
 */
const readBodyOnce: MiddlewareHandler<AppEnv> = async (c, next) => {
  await c.req.arrayBuffer();
  await next();
};

const registerRoute = (gate: AgentDirectoryRouteDeps['gate']) =>
  createRoute(
    paidRoute(PAID.agentRegister, gate, {
      request: { headers: RegisterHeaders, body: jsonBody(RegisterBody) },
      middleware: [readBodyOnce],
      description:
        'Lists an agent in the public directory, or replaces its profile. Ownership is proven with the agent identity proof ' +
        '(`X-Agent-Identifier`, `X-Agent-Timestamp`, `X-Agent-Signature`; docs/api.md): an ERC-8004 agent by its current owner on the Tempo ' +
        'identity registry, a Solana identity by its key, an EVM address by itself. Whoever can sign for an identifier may replace its profile; ' +
        'nobody else can. Refusals after payment (400, 401) keep the fee.',
      responses: {
        201: jsonContent(RegistrationResult, 'Registered for the first time.'),
        200: jsonContent(RegistrationResult, 'Already registered: the profile was replaced by this one.'),
        400: jsonContent(ErrorSchema, 'Invalid body field, or `X-Agent-Identifier` in no accepted form; `field` names it.'),
        401: jsonContent(
          ErrorSchema,
          '`PROOF_MISSING` (a proof header is absent), `PROOF_STALE` (timestamp outside 300 s), `PROOF_INVALID` (the signature does not sign this ' +
            'request by the identity, or the ERC-8004 agent does not exist), `PROOF_REPLAYED` (signature already used); `field` names the header.',
        ),
        429: rateLimitedContent('too many refused identity proofs for this X-Agent-Identifier (a valid proof is still accepted)'),
        ...errorResponses(415),
      },
    }),
  );

const directoryRoute = createRoute({
  method: 'get',
  path: '/api/agents/directory',
  tags: ['Agents'],
  summary: 'The public directory of registered agents, newest first (free)',
  request: { query: DirectoryQuery },
  responses: { 200: jsonContent(Directory, 'One page.'), ...errorResponses(400) },
});

const profileRoute = createRoute({
  method: 'get',
  path: '/api/agents/profile/{id}',
  tags: ['Agents'],
  summary: "A registered agent's public profile, by registration id or identifier (free)",
  request: { params: ProfileParams },
  responses: { 200: jsonContent(AgentProfile, 'The profile.'), ...errorResponses(404) },
});

export function agentDirectoryRoutes(deps: AgentDirectoryRouteDeps): FeatureApp {
  const { directory } = deps;
  return featureApp()
    .openapi(registerRoute(deps.gate), onRegister(directory))
    .openapi(directoryRoute, async (c) => {
      const query = c.req.valid('query');
      const rows = await directory.directory({
        nameContains: query.q ? query.q : null,
        capability: query.capability ?? null,
        limit: query.limit,
        after: query.cursor ? decodeCursor(query.cursor) : null,
      });
      const last = rows.length === query.limit ? rows.at(-1) : undefined;
      return c.json({ agents: rows.map(presentProfile), next_cursor: last ? encodeCursor(last.position) : null }, 200);
    })
    .openapi(profileRoute, async (c) => {
      const row = await directory.profile(c.req.valid('param').id);
      if (!row) throw notFound('Agent');
      return c.json(presentProfile(row), 200);
    });
}

const onRegister =
  (directory: AgentDirectoryService): RouteHandler<ReturnType<typeof registerRoute>, AppEnv> =>
  async (c) => {
    const body = c.req.valid('json');
    const url = new URL(c.req.url);
    const { registration, created } = await directory.register({
      headers: c.req.raw.headers,
      method: c.req.method,
      pathWithQuery: `${url.pathname}${url.search}`,
      body: new Uint8Array(await c.req.arrayBuffer()),
      profile: {
        displayName: body.display_name,
        description: body.description || null,
        capabilities: body.capabilities ?? [],
        solanaPublicKey: body.solana_public_key ?? null,
      },
      feePaymentId: c.var.payment.id,
      redeemed: c.var.payment.redeemed,
    });
    return c.json({ created, agent: presentProfile(registration) }, created ? 201 : 200);
  };
