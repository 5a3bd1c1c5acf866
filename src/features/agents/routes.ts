import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponse } from '../../http/errors.js';
import { AppError } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent, rateLimitedContent } from '../../http/validation.js';
import { formatUsd, parseUsd } from '../../money.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import { AGENT_KEY_HEADER } from '../employers/index.js';
import type { AgentPayService } from './pay.js';
import {
  AgentPayBody,
  AgentPayHeaders,
  AgentPayResult,
  Authorization,
  AuthorizationList,
  AuthorizationParams,
  CreateAuthorizationBody,
  EmployerIdParams,
  IssuedAuthorization,
  ListAuthorizationsQuery,
  PauseAllBody,
  PauseAllResult,
  ResumeAllResult,
  UpdateAuthorizationBody,
} from './schema.js';
import type { AgentsService, AuthorizationPatch } from './service.js';
import type { AuthorizationRow } from './store.js';

export interface AgentRouteDeps {
  agents: AgentsService;
  agentPay: AgentPayService;
  requireUser: MiddlewareHandler<AppEnv>;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
}

const security = [{ bearerAuth: [] }];
const tags = ['Agents'];
const usd = (value: string) => parseUsd(value)!;
const usdOrNull = (value: string | null) => (value === null ? null : usd(value));

/**
 * Spec 5.4: pausing and resuming are for the human owner. A request that carries any agent
 * credential (the employer's agent key, agent identity headers, an agent key as bearer) is
 * refused with 403 before anything else, even next to a valid owner token.
 */
const humanOwnerOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const bearer = c.req.header('authorization')?.replace(/^Bearer\s+/i, '') ?? '';
  const agentHeaders = [AGENT_KEY_HEADER, 'X-Agent-Identifier', 'X-Agent-Signature'].filter((name) => c.req.header(name) !== undefined);
  if (agentHeaders.length > 0 || bearer.startsWith('sk_agent_')) {
    return errorResponse(c, new AppError('HUMAN_OWNER_ONLY', 'Only the human employer owner may pause or resume agents; agent credentials cannot.'));
  }
  return next();
};

// The owner's routes (their middleware, requireUser, is added where they are mounted).
const ownerRoute = <M extends 'get' | 'post' | 'patch' | 'delete', P extends string>(method: M, path: P, summary: string) => ({
  method,
  path,
  tags,
  summary,
  security,
});
const base = '/api/employers/{employer_id}/agents/authorizations';

const createAuthorization = createRoute({
  ...ownerRoute('post', base, 'Authorize an agent to pay from the treasury (employer owner)'),
  request: { params: EmployerIdParams, body: jsonBody(CreateAuthorizationBody) },
  responses: {
    201: jsonContent(IssuedAuthorization, 'Created; an HMAC agent\'s secret is in `hmac_secret`, shown this once.'),
    ...errorResponses(400, 401, 404, 413, 415),
    409: jsonContent(ErrorSchema, '`AGENT_IDENTIFIER_TAKEN`: an active authorization already has this identifier.'),
  },
});

const listAuthorizations = createRoute({
  ...ownerRoute('get', base, "The employer's agent authorizations, oldest first (employer owner)"),
  request: { params: EmployerIdParams, query: ListAuthorizationsQuery },
  responses: { 200: jsonContent(AuthorizationList, 'Active ones (and revoked ones when asked).'), ...errorResponses(400, 401, 404) },
});

const getAuthorization = createRoute({
  ...ownerRoute('get', `${base}/{authorization_id}`, 'One agent authorization (employer owner)'),
  request: { params: AuthorizationParams },
  responses: { 200: jsonContent(Authorization, 'The authorization.'), ...errorResponses(400, 401, 404) },
});

const updateAuthorization = createRoute({
  ...ownerRoute('patch', `${base}/{authorization_id}`, "Change an agent's limits or label (employer owner)"),
  request: { params: AuthorizationParams, body: jsonBody(UpdateAuthorizationBody) },
  responses: {
    200: jsonContent(Authorization, 'Updated.'),
    ...errorResponses(400, 401, 404, 413, 415),
    409: jsonContent(ErrorSchema, '`AUTHORIZATION_REVOKED`.'),
  },
});

const revokeAuthorization = createRoute({
  ...ownerRoute('delete', `${base}/{authorization_id}`, 'Revoke an agent authorization (employer owner; idempotent)'),
  request: { params: AuthorizationParams },
  responses: { 200: jsonContent(Authorization, 'Revoked (`revoked_at` set).'), ...errorResponses(400, 401, 404) },
});

const restoreCap = createRoute({
  ...ownerRoute('post', `${base}/{authorization_id}/restore-cap`, 'Restore a per-transaction cap halved by the anomaly gate (employer owner)'),
  request: { params: AuthorizationParams },
  responses: {
    200: jsonContent(Authorization, 'The original cap is back; `cap_halved_at` is null.'),
    ...errorResponses(400, 401, 404),
    409: jsonContent(ErrorSchema, '`CAP_NOT_HALVED` or `AUTHORIZATION_REVOKED`.'),
  },
});

const rotateSecret = createRoute({
  ...ownerRoute('post', `${base}/{authorization_id}/rotate-secret`, "Issue a new HMAC secret for an agent (employer owner; shown once)"),
  request: { params: AuthorizationParams },
  responses: {
    200: jsonContent(IssuedAuthorization, 'The new secret is in `hmac_secret`; the old one no longer verifies.'),
    ...errorResponses(400, 401, 404),
    409: jsonContent(ErrorSchema, '`NOT_AN_HMAC_AUTHORIZATION` or `AUTHORIZATION_REVOKED`.'),
  },
});

// Pause and resume: humanOwnerOnly, then requireUser, added where they are mounted.
const pauseRoute = <M extends 'post' | 'delete'>(method: M, summary: string) => ({
  method,
  path: '/api/employers/{employer_id}/agents/pause-all',
  tags,
  summary,
  security,
});

const pauseAll = createRoute({
  ...pauseRoute('post', 'Pause every agent authorization of the employer (the human owner only)'),
  request: { params: EmployerIdParams, body: jsonBody(PauseAllBody) },
  responses: {
    200: jsonContent(PauseAllResult, 'Paused; gate 1 refuses their payments until resumed.'),
    ...errorResponses(400, 401, 404, 413, 415),
    403: jsonContent(ErrorSchema, '`HUMAN_OWNER_ONLY`: the request carried an agent credential.'),
  },
});

const resumeAll = createRoute({
  ...pauseRoute('delete', 'Resume every paused agent authorization of the employer (the human owner only)'),
  request: { params: EmployerIdParams },
  responses: {
    200: jsonContent(ResumeAllResult, 'Resumed.'),
    ...errorResponses(400, 401, 404),
    403: jsonContent(ErrorSchema, '`HUMAN_OWNER_ONLY`: the request carried an agent credential.'),
  },
});

/** POST /api/mpp/agent/pay; the gate (its first middleware) is the one runtime part. */
const agentPayRoute = (gate: AgentRouteDeps['gate']) =>
  createRoute(
    paidRoute(PAID.agentPay, gate, {
      request: { headers: AgentPayHeaders, body: jsonBody(AgentPayBody) },
      description:
        'Pays from the employer treasury on Tempo for an authorized agent: identity proof, then the spend gates of spec 8.2 in order (pause, per-tx cap, rolling 24 h cap, velocity, allowlist), the treasury balance, the transfer, and the anomaly gate. Every answer below 500 keeps the fee. The same request with the same payment proof, after its answer was lost, answers the payment that fee bought (never a second one).',
      responses: {
        200: jsonContent(AgentPayResult, 'Paid (or, with a repeated Idempotency-Key, the first payment; header `Idempotent-Replayed: true`).'),
        ...errorResponses(400, 413, 415),
        401: jsonContent(ErrorSchema, '`AGENT_IDENTIFIER_MISSING`, or the identity proof refused: `PROOF_MISSING`, `PROOF_STALE`, `PROOF_INVALID`, `PROOF_REPLAYED`.'),
        429: rateLimitedContent('too many refused identity proofs for this X-Agent-Identifier (a valid proof is still accepted)'),
        403: jsonContent(
          ErrorSchema,
          '`AGENT_NOT_AUTHORIZED`, `AGENT_PAUSED` (gate 1), `PER_TX_CAP_EXCEEDED` (2), `PER_DAY_CAP_EXCEEDED` (3), `VELOCITY_EXCEEDED` (4), `RECIPIENT_NOT_ALLOWED` (5); `gate` names it. The fee is kept.',
        ),
        409: jsonContent(ErrorSchema, '`IDEMPOTENCY_KEY_IN_USE`: the first call with this key has not finished.'),
        422: jsonContent(ErrorSchema, '`INSUFFICIENT_TREASURY_BALANCE`, `TREASURY_NOT_DELEGATED`, or `IDEMPOTENCY_KEY_REUSED`.'),
        502: jsonContent(ErrorSchema, '`TRANSFER_FAILED` (nothing paid) or `TRANSFER_OUTCOME_UNKNOWN` (settles within minutes); the fee is not charged.'),
      },
    }),
  );

export function agentRoutes(deps: AgentRouteDeps): FeatureApp {
  const { agents } = deps;
  const owner = { middleware: deps.requireUser };
  const humanOwner = { middleware: [humanOwnerOnly, deps.requireUser] };
  return featureApp()
    .openapi({ ...createAuthorization, ...owner }, onCreateAuthorization(agents))
    .openapi({ ...listAuthorizations, ...owner }, async (c) => {
      const rows = await agents.list(c.var.caller, c.req.valid('param').employer_id, c.req.valid('query').include_revoked);
      return c.json({ authorizations: rows.map(presentAuthorization) }, 200);
    })
    .openapi({ ...getAuthorization, ...owner }, async (c) => {
      const { employer_id, authorization_id } = c.req.valid('param');
      return c.json(presentAuthorization(await agents.get(c.var.caller, employer_id, authorization_id)), 200);
    })
    .openapi({ ...updateAuthorization, ...owner }, onUpdateAuthorization(agents))
    .openapi({ ...revokeAuthorization, ...owner }, async (c) => {
      const { employer_id, authorization_id } = c.req.valid('param');
      return c.json(presentAuthorization(await agents.revoke(c.var.caller, employer_id, authorization_id, c.var.requestId)), 200);
    })
    .openapi({ ...restoreCap, ...owner }, async (c) => {
      const { employer_id, authorization_id } = c.req.valid('param');
      return c.json(presentAuthorization(await agents.restoreCap(c.var.caller, employer_id, authorization_id, c.var.requestId)), 200);
    })
    .openapi({ ...rotateSecret, ...owner }, async (c) => {
      const { employer_id, authorization_id } = c.req.valid('param');
      const issued = await agents.rotateSecret(c.var.caller, employer_id, authorization_id, c.var.requestId);
      c.header('Cache-Control', 'no-store');
      return c.json({ ...presentAuthorization(issued.authorization), hmac_secret: issued.hmacSecret }, 200);
    })
    .openapi({ ...pauseAll, ...humanOwner }, onPauseAll(agents))
    .openapi({ ...resumeAll, ...humanOwner }, onResumeAll(agents))
    .openapi(agentPayRoute(deps.gate), onAgentPay(deps.agentPay));
}

const onCreateAuthorization =
  (agents: AgentsService): RouteHandler<typeof createAuthorization, AppEnv> =>
  async (c) => {
    const body = c.req.valid('json');
    const issued = await agents.create(
      c.var.caller,
      c.req.valid('param').employer_id,
      {
        label: body.label,
        agentIdentifier: body.agent_identifier,
        identityScheme: body.identity_scheme,
        perTxCap: usd(body.per_tx_cap_usd),
        perDayCap: usd(body.per_day_cap_usd),
        velocityPerMinute: body.velocity_per_minute,
        allowedRecipients: body.allowed_recipients,
        elevatedPerTxCap: usdOrNull(body.elevated_per_tx_cap_usd),
        elevatedPerDayCap: usdOrNull(body.elevated_per_day_cap_usd),
      },
      c.var.requestId,
    );
    c.header('Cache-Control', 'no-store');
    return c.json({ ...presentAuthorization(issued.authorization), hmac_secret: issued.hmacSecret }, 201);
  };

const onUpdateAuthorization =
  (agents: AgentsService): RouteHandler<typeof updateAuthorization, AppEnv> =>
  async (c) => {
    const { employer_id, authorization_id } = c.req.valid('param');
    const body = c.req.valid('json');
    const patch: AuthorizationPatch = {
      ...(body.label !== undefined && { label: body.label }),
      ...(body.per_tx_cap_usd !== undefined && { perTxCap: usd(body.per_tx_cap_usd) }),
      ...(body.per_day_cap_usd !== undefined && { perDayCap: usd(body.per_day_cap_usd) }),
      ...(body.velocity_per_minute !== undefined && { velocityPerMinute: body.velocity_per_minute }),
      ...(body.allowed_recipients !== undefined && { allowedRecipients: body.allowed_recipients }),
      ...(body.elevated_per_tx_cap_usd !== undefined && { elevatedPerTxCap: usdOrNull(body.elevated_per_tx_cap_usd) }),
      ...(body.elevated_per_day_cap_usd !== undefined && { elevatedPerDayCap: usdOrNull(body.elevated_per_day_cap_usd) }),
    };
    return c.json(presentAuthorization(await agents.update(c.var.caller, employer_id, authorization_id, patch, c.var.requestId)), 200);
  };

const onPauseAll =
  (agents: AgentsService): RouteHandler<typeof pauseAll, AppEnv> =>
  async (c) => {
    const result = await agents.pauseAll(c.var.caller, c.req.valid('param').employer_id, c.req.valid('json').reason, c.var.requestId);
    return c.json(
      {
        success: true,
        paused_count: result.paused.length,
        paused_at: result.pausedAt.toISOString(),
        pause_reason: result.reason,
        paused_authorizations: result.paused,
      },
      200,
    );
  };

const onResumeAll =
  (agents: AgentsService): RouteHandler<typeof resumeAll, AppEnv> =>
  async (c) => {
    const result = await agents.resumeAll(c.var.caller, c.req.valid('param').employer_id, c.var.requestId);
    return c.json(
      { success: true, resumed_count: result.resumed.length, resumed_at: result.resumedAt.toISOString(), resumed_authorizations: result.resumed },
      200,
    );
  };

const onAgentPay =
  (agentPay: AgentPayService): RouteHandler<ReturnType<typeof agentPayRoute>, AppEnv> =>
  async (c) => {
    const identifier = c.req.header('X-Agent-Identifier');
    if (!identifier) {
      throw new AppError('AGENT_IDENTIFIER_MISSING', 'X-Agent-Identifier is required.', { field: 'X-Agent-Identifier' });
    }
    const body = c.req.valid('json');
    const url = new URL(c.req.url);
    const result = await agentPay.pay({
      identifier,
      employerId: body.employer_id,
      recipient: body.recipient_wallet,
      amount: usd(body.amount),
      reference: body.reference ?? null,
      idempotencyKey: c.req.header('Idempotency-Key') ?? null,
      proof: {
        method: c.req.method,
        pathWithQuery: url.pathname + url.search,
        headers: c.req.raw.headers,
        body: new Uint8Array(await c.req.arrayBuffer()),
        feePaymentId: c.var.payment.id,
      },
      feePaymentId: c.var.payment.id,
      redeemed: c.var.payment.redeemed,
    });
    // The receipt shows in this employer's history: the agent is authorised for it.
    c.var.payment.attribute(body.employer_id);
    if (result.replayed) c.header('Idempotent-Replayed', 'true');
    const { call } = result;
    return c.json(
      {
        success: true as const,
        tx_hash: call.txHash!,
        recipient: call.recipientWallet,
        amount: formatUsd(call.amount),
        explorer_url: result.explorerUrl,
        employer_id: call.employerId,
        employer_account_id: result.employerAccountId,
        reference: call.reference,
        memo: call.memo!,
        timestamp: (call.settledAt ?? call.createdAt).toISOString(),
      },
      200,
    );
  };

export function presentAuthorization(row: AuthorizationRow) {
  const money = (value: bigint | null) => (value === null ? null : formatUsd(value));
  const time = (value: Date | null) => value?.toISOString() ?? null;
  return {
    id: row.id,
    employer_id: row.employerId,
    label: row.label,
    agent_identifier: row.agentIdentifier,
    identity_scheme: row.identityScheme,
    per_tx_cap_usd: formatUsd(row.perTxCap),
    per_day_cap_usd: formatUsd(row.perDayCap),
    velocity_per_minute: row.velocityPerMinute,
    allowed_recipients: row.allowedRecipients,
    elevated_per_tx_cap_usd: money(row.elevatedPerTxCap),
    elevated_per_day_cap_usd: money(row.elevatedPerDayCap),
    paused_at: time(row.pausedAt),
    pause_reason: row.pauseReason,
    per_tx_cap_original_usd: money(row.perTxCapOriginal),
    cap_halved_at: time(row.capHalvedAt),
    revoked_at: time(row.revokedAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
