import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Context } from 'hono';
import type { Config } from '../../config.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponse } from '../../http/errors.js';
import { AppError } from '../../errors.js';
import { ErrorSchema } from '../../http/validation.js';
import { routeOffers, type RouteOffers } from '../../payments/offers.js';
import type { PaidRoute } from '../../payments/prices.js';
import { MCP_SCOPE } from '../oauth/index.js';
import type { OAuthService } from '../oauth/index.js';
import {
  createMcpServer,
  FORWARDED_HEADERS,
  MPP_META_KEY,
  PAYMENT_AUTHORIZATION_HEADER,
  PAYMENTAUTH_CREDENTIAL_META_KEY,
  PAYMENTAUTH_RECEIPT_META_KEY,
  PAYMENTAUTH_REQUIRED_META_KEY,
  X402_META_KEY,
} from './server.js';
import { JsonRpcMessage, JsonRpcResponse } from './schema.js';
import { buildCatalog } from './tools.js';

export const MCP_PATH = '/api/mcp';

export interface McpRouteDeps {
  config: Pick<Config, 'publicBaseUrl' | 'serviceSlug' | 'http'>;
  /** A bearer's claims, or null when it is not a live access token for this endpoint. */
  oauth: Pick<OAuthService, 'authenticate'>;
  /** The whole app's fetch: each tool is answered by its REST route, which lives in another feature's sub-app. */
  appFetch: (request: Request, env: unknown) => Response | Promise<Response>;
  /**
   * What each paid route's 402 offers (`Payments.offers`): the tools' `_meta` is derived from it. Absent
   * (an app without the payment gate, whose paid routes do not exist): the price table with no card.
   */
  offers?: ((route: PaidRoute) => RouteOffers) | undefined;
}

const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });
const forwarded = [...FORWARDED_HEADERS, PAYMENT_AUTHORIZATION_HEADER];

/** The document's description of POST /api/mcp (its summary counts the tools, known when the catalog is built). */
const mcpPost = (toolCount: number) =>
  ({
    method: 'post',
    path: MCP_PATH,
    tags: ['MCP'],
    summary: `MCP over streamable HTTP: ${toolCount} tools, one per REST route (stateless, JSON responses)`,
    description:
      'JSON-RPC 2.0 (`initialize`, `tools/list`, `tools/call`); send `Accept: application/json, text/event-stream`. Each tool call runs its REST route ' +
      'in process with these headers of this request passed on: ' +
      `${forwarded.map((h) => `\`${h}\``).join(', ')} (\`${PAYMENT_AUTHORIZATION_HEADER}\` becomes \`Authorization\`; the bearer never does). ` +
      `Per call, \`_meta["${PAYMENTAUTH_CREDENTIAL_META_KEY}"]\` (an MPP credential object, mppx's MCP convention), \`_meta["${MPP_META_KEY}"]\` ` +
      `(an MPP \`Payment ...\` credential) or \`_meta["${X402_META_KEY}"]\` (an x402 PaymentPayload, object or base64) ` +
      'carries the payment instead. A paid call without payment answers a tool result with `isError: true` and the 402 challenge as JSON text ' +
      `(\`wwwAuthenticate\`, \`paymentRequired\`, \`price\`, \`rails\`), its MPP challenges also in \`_meta["${PAYMENTAUTH_REQUIRED_META_KEY}"]\`; ` +
      `a call paid through \`_meta["${PAYMENTAUTH_CREDENTIAL_META_KEY}"]\` and refused answers the JSON-RPC error -32042 / -32043 with the challenges in \`data\`. ` +
      `MPP receipts come back in \`_meta["${PAYMENTAUTH_RECEIPT_META_KEY}"]\` too. docs/api.md, "MCP", has the argument mapping and the identity-proof rule.`,
    security: [{ mcpOAuth: [MCP_SCOPE] }],
    request: { body: { required: true, content: { 'application/json': { schema: JsonRpcMessage } } } },
    responses: {
      200: { description: 'The JSON-RPC response(s).', content: { 'application/json': { schema: JsonRpcResponse } } },
      202: { description: 'Accepted (notifications and responses only).' },
      400: error('Not JSON, or not a JSON-RPC message.'),
      401: {
        ...error('No bearer, or a token refused (`WWW-Authenticate: Bearer resource_metadata="..."`, with `error="invalid_token"` when one was sent).'),
        headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'RFC 6750 challenge naming the RFC 9728 protected resource metadata.' } },
      },
      403: error('The Origin header names an origin not allowed (MCP_ALLOWED_ORIGINS).'),
      406: error('Accept must list application/json and text/event-stream.'),
      415: error('Content-Type must be application/json.'),
    },
  }) satisfies RouteConfig;

/** GET and DELETE /api/mcp: documented 405s (the app's method-not-allowed middleware answers them). */
const mcpNotAllowed = (['get', 'delete'] as const).map((method) => ({
  method,
  path: MCP_PATH,
  tags: ['MCP'],
  summary: method === 'get' ? 'No server-sent event stream (stateless server)' : 'No sessions to end (stateless server)',
  responses: { 405: { ...error('Not allowed: `Allow: POST`.'), headers: { Allow: { schema: { type: 'string', example: 'POST' } } } } },
}) satisfies RouteConfig);

/** The server's instructions to MCP clients: how tools, payment and identity headers work. */
const instructionsFor = (serviceSlug: string) =>
  `Tools named ${serviceSlug}_* run this service's REST routes. Free tools need only the bearer. Paid tools answer isError with a 402 challenge ` +
  `(wwwAuthenticate for MPP rail A, also as mppx's _meta["${PAYMENTAUTH_REQUIRED_META_KEY}"]; paymentRequired/accepts for x402 rails B and C): ` +
  `retry the call with _meta["${PAYMENTAUTH_CREDENTIAL_META_KEY}"] = credential object, _meta["${MPP_META_KEY}"] = "Payment ..." ` +
  `or _meta["${X402_META_KEY}"] = PaymentPayload (or the ${PAYMENT_AUTHORIZATION_HEADER} / X-PAYMENT HTTP headers). ` +
  'Identity headers (X-Agent-Identifier, X-Agent-Timestamp, X-Agent-Signature, X-Identity-Token, X-Agent-Key) go on the HTTP request; ' +
  'an agent signs POST <route path> with the body JSON.stringify(arguments).';

/** 401 with the RFC 6750 challenge naming the protected resource metadata (and `invalid_token` when a token was refused). */
function unauthorized(c: Context<AppEnv>, resourceMetadata: string, error?: string) {
  const challenge = [
    'Bearer',
    [...(error ? [`error="invalid_token"`, `error_description="${error}"`] : []), `resource_metadata="${resourceMetadata}"`, `scope="${MCP_SCOPE}"`].join(', '),
  ].join(' ');
  return errorResponse(
    c,
    new AppError('UNAUTHENTICATED', error ? `Refused: ${error}.` : 'An OAuth access token for this endpoint is required.', {}, {
      'WWW-Authenticate': challenge,
      'Cache-Control': 'no-store',
    }),
  );
}

/**
 * POST /api/mcp (spec 4.6, 5.5): MCP over streamable HTTP, stateless (a server per request, JSON
 * responses), behind an OAuth access token for this endpoint. GET and DELETE (SSE streams and
 * sessions) are not offered: the app's method-not-allowed middleware answers them 405, Allow: POST.
 */
export function mcpRoutes(deps: McpRouteDeps): FeatureApp {
  const app = featureApp();
  const { publicBaseUrl, serviceSlug } = deps.config;
  const catalog = buildCatalog(serviceSlug, deps.offers ?? ((route) => routeOffers(route, { card: false })));
  const origin = new URL(publicBaseUrl).origin;
  const allowed = deps.config.http.mcpAllowedOrigins;
  const resourceMetadata = `${publicBaseUrl}/.well-known/oauth-protected-resource`;
  const instructions = instructionsFor(serviceSlug);

  app.post(MCP_PATH, async (c) => {
    // DNS rebinding: a browser always sends Origin; a page from another origin is refused.
    const requestOrigin = c.req.header('Origin');
    if (requestOrigin !== undefined && allowed !== '*' && !allowed.includes(requestOrigin)) {
      return errorResponse(c, new AppError('ORIGIN_NOT_ALLOWED', `Origin ${requestOrigin} may not call ${MCP_PATH}.`));
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('Authorization') ?? '')?.[1];
    if (!bearer) return unauthorized(c, resourceMetadata);
    const claims = await deps.oauth.authenticate(bearer);
    if (!claims) return unauthorized(c, resourceMetadata, 'the access token is invalid, expired, revoked or not for this endpoint');
    // The OAuth user is on every log line of this request (tool calls included); it grants nothing
    // in a tool: only the forwarded payment and identity headers do.
    const log = c.var.log.child({ oauthSub: claims.userId, oauthClient: claims.clientId });
    c.set('log', log);

    const server = createMcpServer({
      catalog,
      fetch: (request) => deps.appFetch(request, c.env),
      origin,
      requestId: c.var.requestId,
      log,
      instructions,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, {
        authInfo: { token: bearer, clientId: claims.clientId, scopes: claims.scopes, extra: { userId: claims.userId } },
      });
    } finally {
      await server.close();
    }
  });

  registerMcpDocs(app, publicBaseUrl, catalog.length);
  return app;
}

function registerMcpDocs(app: OpenAPIHono<AppEnv>, publicBaseUrl: string, toolCount: number): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'mcpOAuth', {
    type: 'oauth2',
    description: `OAuth 2.1 (PKCE S256, public clients): an ES256 access token for ${publicBaseUrl}${MCP_PATH}, scope ${MCP_SCOPE}, 1 hour.`,
    flows: {
      authorizationCode: {
        authorizationUrl: `${publicBaseUrl}/api/oauth/authorize`,
        tokenUrl: `${publicBaseUrl}/api/oauth/token`,
        refreshUrl: `${publicBaseUrl}/api/oauth/token`,
        scopes: { [MCP_SCOPE]: 'Call the MCP tools.' },
      },
    },
  });
  app.openAPIRegistry.registerPath(mcpPost(toolCount));
  for (const route of mcpNotAllowed) app.openAPIRegistry.registerPath(route);
}
