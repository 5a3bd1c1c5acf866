import { createRoute } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { ZodError } from 'zod';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponse } from '../../http/errors.js';
import { badRequest } from '../../errors.js';
import { clientKey, rateLimited, type LimitName, type RateLimits } from '../../http/rate-limits.js';
import { errorResponses, jsonBody, jsonContent, rateLimitedContent } from '../../http/validation.js';
import { MCP_SCOPE } from './access-tokens.js';
import { consentPage, errorPage } from './consent-page.js';
import {
  AuthorizationServerMetadata,
  AuthorizeQuery,
  DecisionBody,
  DecisionResult,
  HtmlPage,
  OAuthErrorBody,
  OAuthRateLimited,
  ProtectedResourceMetadata,
  RegisterClientBody,
  RegisteredClient,
  RetryAfterHeader,
  TokenRequest,
  TokenResponse,
} from './schema.js';
import { GRANT_TYPES, OAuthError, type AuthorizationRequest, type OAuthService } from './service.js';
import type { ClientRow } from './store.js';

export interface OAuthRouteDeps {
  /** The authorization server (built once in buildApp; /api/mcp authenticates with the same instance). */
  oauth: OAuthService;
  /** Identity-provider bearer -> `c.var.caller`: who approves on the consent page. */
  requireUser: MiddlewareHandler<AppEnv>;
  /** Local mode: the consent page signs in through POST /api/dev/token. */
  devSignIn: boolean;
  /** Named on the consent page in live mode. */
  identityProviderIssuer: string;
  /** Registration, authorization and token floods: per client IP (and per client_id on the token endpoint). */
  rateLimits: RateLimits;
  trustProxy: boolean;
}

const tags = ['OAuth (MCP)'];
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const oauthErrorContent = (description: string) => jsonContent(OAuthErrorBody, description);
const html = (description: string) => ({ description, content: { 'text/html': { schema: HtmlPage } } });

/** RFC 6749 5.2 error response (400, or 401 for `invalid_client`). */
function oauthError(c: Context<AppEnv>, error: OAuthError) {
  if (error.securityEvent) c.var.log.warn({ event: error.securityEvent }, `oauth: ${error.message}`);
  return c.json(error.body(), error.status, NO_STORE);
}

/** RFC 7591 3.2.2 error response: always 400. */
const registrationError = (c: Context<AppEnv>, error: OAuthError) => c.json(error.body(), 400, NO_STORE);

/**
 * 429 in the OAuth error shape these routes answer in (RFC 6749 5.2 has no rate-limit code:
 * `temporarily_unavailable` is the one its clients read as "try later"), with our `code`, and
 * `Retry-After` in seconds. A browser on the authorization endpoint gets the HTML error page.
 */
function rateLimitedResponse(c: Context<AppEnv>, description: string, retryAfterSeconds: number): Response {
  const { body, headers } = rateLimitedBody(description, retryAfterSeconds);
  if (c.req.method === 'GET' && (c.req.header('accept') ?? '').includes('text/html')) {
    const page = errorPage(body.error, body.error_description);
    return c.html(page.html, 429, { ...page.headers, ...headers }) as Response;
  }
  return c.json(body, 429, headers);
}

function rateLimitedBody(description: string, retryAfterSeconds: number) {
  return {
    body: { error: 'temporarily_unavailable', error_description: `${description}; try again in ${retryAfterSeconds} s.`, code: 'RATE_LIMITED' as const },
    headers: { ...NO_STORE, 'Retry-After': String(retryAfterSeconds) },
  };
}

const oauthRateLimitedContent = (what: string) => ({
  description: `Too many ${what}: \`error\` \`temporarily_unavailable\`, \`code\` \`RATE_LIMITED\`; see \`Retry-After\`.`,
  content: { 'application/json': { schema: OAuthRateLimited } },
  headers: RetryAfterHeader,
});

/**
 * Route middleware: one hit per request against `name`, keyed by the client IP. The refusal is in
 * the OAuth error shape, or in our envelope for the consent page's own JSON route (`envelope`).
 */
function limitByClient(deps: OAuthRouteDeps, name: LimitName, what: string, shape: 'oauth' | 'envelope' = 'oauth'): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const verdict = await deps.rateLimits.consume(name, `ip:${clientKey(c, deps.trustProxy)}`);
    if (verdict.ok) return next();
    const message = `Too many ${what} from this address`;
    return shape === 'oauth' ? rateLimitedResponse(c, message, verdict.retryAfterSeconds) : errorResponse(c, rateLimited(message, verdict.retryAfterSeconds));
  };
}

const firstIssue = (error: ZodError) => {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  return { field, message: `${field}: ${issue?.message ?? 'is invalid'}` };
};

/**
 * Route middleware (it runs before the body validators): the OAuth routes answer a body that is
 * not of their media type, or does not parse, in the OAuth error shape instead of our envelope.
 */
function bodyGuard(kind: 'json' | 'form', errorCode: string): MiddlewareHandler<AppEnv> {
  const mediaType = kind === 'json' ? /^application\/json\s*(;|$)/i : /^application\/x-www-form-urlencoded\s*(;|$)/i;
  const expected = kind === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
  return async (c, next) => {
    if (!mediaType.test(c.req.header('content-type') ?? '')) {
      return oauthError(c, new OAuthError(errorCode, `The request body must be ${expected}.`));
    }
    const text = await c.req.text(); // cached: the validator reads the same body afterwards
    if (kind === 'json') {
      try {
        JSON.parse(text);
      } catch {
        return oauthError(c, new OAuthError(errorCode, 'The request body is not valid JSON.'));
      }
    } else {
      // RFC 6749 3.1, 3.2: a parameter must not be sent twice.
      const names = [...new URLSearchParams(text).keys()];
      const repeated = names.find((name, index) => names.indexOf(name) !== index);
      if (repeated) return oauthError(c, new OAuthError(errorCode, `${repeated} is sent more than once.`));
    }
    await next();
  };
}

function presentClient(client: ClientRow) {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(client.clientName !== null && { client_name: client.clientName }),
    redirect_uris: client.redirectUris,
    scope: MCP_SCOPE as typeof MCP_SCOPE,
    token_endpoint_auth_method: 'none' as const,
    grant_types: [...GRANT_TYPES],
    response_types: ['code' as const],
  };
}

// ---- route definitions (the rate limits' descriptions and middleware are added where they are wired) ----

// The MCP SDK client asks for the path-suffixed document first (RFC 9728 3.1), then the root one.
const protectedResourceMetadata = ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp'].map((path) =>
  createRoute({
    method: 'get',
    path,
    tags,
    summary: 'Protected resource metadata of the MCP endpoint (RFC 9728)',
    responses: { 200: jsonContent(ProtectedResourceMetadata, 'Where to get an access token for /api/mcp.') },
  }),
);

const authorizationServerMetadata = createRoute({
  method: 'get',
  path: '/.well-known/oauth-authorization-server',
  tags,
  summary: 'Authorization server metadata (RFC 8414)',
  responses: { 200: jsonContent(AuthorizationServerMetadata, 'Endpoints, PKCE method, grant types.') },
});

const registerClient = createRoute({
  method: 'post',
  path: '/api/oauth/register',
  tags,
  summary: 'Register a public client (RFC 7591 dynamic registration; no authentication)',
  request: { body: jsonBody(RegisterClientBody) },
  responses: {
    201: jsonContent(RegisteredClient, 'Registered. No secret: clients are public and use PKCE.'),
    400: oauthErrorContent('`invalid_redirect_uri` or `invalid_client_metadata`.'),
    ...errorResponses(413),
    429: oauthRateLimitedContent('registrations from this address'),
  },
});

const authorize = createRoute({
  method: 'get',
  path: '/api/oauth/authorize',
  tags,
  summary: 'Authorization endpoint: the consent page, or a redirect with an error',
  request: { query: AuthorizeQuery },
  responses: {
    200: html('The consent page.'),
    302: { description: 'Back to the redirect URI with `error`, `error_description`, `state` and `iss`.', headers: { Location: { schema: { type: 'string' } } } },
    400: {
      description: 'Unknown client or redirect URI: shown to the user, not sent to the client.',
      content: { 'application/json': { schema: OAuthErrorBody }, 'text/html': { schema: HtmlPage } },
    },
    429: { ...oauthRateLimitedContent('authorization requests from this address'), content: { 'application/json': { schema: OAuthRateLimited }, 'text/html': { schema: HtmlPage } } },
  },
});

const decide = createRoute({
  method: 'post',
  path: '/api/oauth/authorize/decision',
  tags,
  summary: "The signed-in user's consent decision (used by the consent page)",
  description:
    'Takes the authorization request parameters and `approve`, checks them again, and answers where the browser goes ' +
    'next: the redirect URI with a single-use `code` (10 minutes), or with `error=access_denied`. Requests that cannot ' +
    'go back to the client (unknown client or redirect URI) get a 400. Counted with `GET /api/oauth/authorize` per client IP.',
  security: [{ bearerAuth: [] }],
  request: { body: jsonBody(DecisionBody) },
  responses: {
    200: jsonContent(DecisionResult, 'Where to send the browser.'),
    ...errorResponses(400, 401, 413, 415),
    429: rateLimitedContent('too many authorization requests from this address'),
  },
});

const token = createRoute({
  method: 'post',
  path: '/api/oauth/token',
  tags,
  summary: 'Token endpoint: authorization code (with PKCE) or refresh token -> access and refresh tokens',
  request: { body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: TokenRequest } } } },
  responses: {
    200: jsonContent(TokenResponse, 'Tokens (`Cache-Control: no-store`).'),
    400: oauthErrorContent('`invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_target` or `unsupported_grant_type`.'),
    401: oauthErrorContent('`invalid_client`: the client_id is not registered.'),
    ...errorResponses(413),
    429: oauthRateLimitedContent('token requests from this address or for this client_id'),
  },
});

/**
 * The OAuth 2.1 authorization server in front of /api/mcp (spec 4.7, 5.5): discovery documents,
 * dynamic client registration, the authorization endpoint with its consent page, the consent
 * decision, and the token endpoint.
 */
export function oauthRoutes(deps: OAuthRouteDeps): FeatureApp {
  const app = featureApp();
  app.route('/', discoveryRoutes(deps));
  app.route('/', registrationRoutes(deps));
  app.route('/', authorizationRoutes(deps));
  app.route('/', tokenRoutes(deps));
  return app;
}

function discoveryRoutes({ oauth }: OAuthRouteDeps): FeatureApp {
  const app = featureApp();
  for (const route of protectedResourceMetadata) app.openapi(route, (c) => c.json(oauth.protectedResourceMetadata(), 200));
  app.openapi(authorizationServerMetadata, (c) => c.json(oauth.authorizationServerMetadata(), 200));
  return app;
}

function registrationRoutes(deps: OAuthRouteDeps): FeatureApp {
  const app = featureApp();
  const route = {
    ...registerClient,
    description: `Client registrations per client IP: ${limitText(deps, 'oauthRegister')}.`,
    middleware: [limitByClient(deps, 'oauthRegister', 'client registrations'), bodyGuard('json', 'invalid_client_metadata')],
  };
  app.openapi(
    route,
    async (c) => {
      const body = c.req.valid('json');
      try {
        const client = await deps.oauth.registerClient({ clientName: body.client_name, redirectUris: body.redirect_uris });
        return c.json(presentClient(client), 201, NO_STORE);
      } catch (error) {
        if (error instanceof OAuthError) return registrationError(c, error);
        throw error;
      }
    },
    (result, c) => {
      if (result.success) return undefined;
      const { field, message } = firstIssue(result.error);
      return registrationError(c, new OAuthError(field.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${message}.`));
    },
  );
  return app;
}

function authorizationRoutes(deps: OAuthRouteDeps): FeatureApp {
  const app = featureApp();
  const { oauth } = deps;
  const authorizeRoute = {
    ...authorize,
    description:
      'A valid request gets the consent page (HTML). An unknown client or an unregistered redirect URI gets a 400 ' +
      '(HTML when the client accepts it, else JSON) and never a redirect. Other problems redirect to the redirect URI ' +
      `with \`error\`, \`error_description\`, \`state\` and \`iss\`. Authorization requests and decisions ` +
      `together, per client IP: ${limitText(deps, 'oauthAuthorize')}.`,
    middleware: limitByClient(deps, 'oauthAuthorize', 'authorization requests'),
  };
  app.openapi(
    authorizeRoute,
    async (c) => {
      const check = await oauth.checkAuthorization(c.req.valid('query'));
      if (!check.ok && !check.redirect) return untrustedRequest(c, check.error, check.description);
      if (!check.ok) return c.redirect(check.redirectTo, 302);
      const page = consentPageFor(check.request, deps);
      return c.html(page.html, 200, page.headers);
    },
    (result, c) => {
      if (result.success) return undefined;
      return untrustedRequest(c, 'invalid_request', `${firstIssue(result.error).message} (is a parameter repeated?).`);
    },
  );
  const decideMiddleware = [limitByClient(deps, 'oauthAuthorize', 'authorization requests', 'envelope'), deps.requireUser];
  app.openapi({ ...decide, middleware: decideMiddleware }, async (c) => {
    const { approve, ...params } = c.req.valid('json');
    const decision = await oauth.decide(c.var.caller.userId, params, approve);
    if (!decision.ok) {
      throw badRequest(decision.field, decision.description, decision.field === 'client_id' ? 'INVALID_CLIENT' : 'INVALID_REDIRECT_URI');
    }
    return c.json({ redirect_to: decision.redirectTo }, 200, NO_STORE);
  });
  return app;
}

function tokenRoutes(deps: OAuthRouteDeps): FeatureApp {
  const app = featureApp();
  const route = {
    ...token,
    description:
      'Form-encoded. The refresh token rotates on every use; presenting a used one revokes every token of its grant, ' +
      'and so does a second use of an authorization code. Errors follow RFC 6749 5.2. ' +
      `Token requests per client IP, and per client_id: ${limitText(deps, 'oauthToken')} each.`,
    middleware: [limitByClient(deps, 'oauthToken', 'token requests'), bodyGuard('form', 'invalid_request')],
  };
  app.openapi(
    route,
    async (c) => {
      const form = c.req.valid('form');
      const perClient = form.client_id ? await deps.rateLimits.consume('oauthToken', `client:${form.client_id}`) : { ok: true as const };
      if (!perClient.ok) {
        const { body, headers } = rateLimitedBody('Too many token requests for this client_id', perClient.retryAfterSeconds);
        return c.json(body, 429, headers);
      }
      try {
        return c.json(await deps.oauth.token(form), 200, NO_STORE);
      } catch (error) {
        if (error instanceof OAuthError) return oauthError(c, error);
        throw error;
      }
    },
    (result, c) => {
      if (result.success) return undefined;
      return oauthError(c, new OAuthError('invalid_request', `${firstIssue(result.error).message}.`));
    },
  );
  return app;
}

/** The consent page of a checked authorization request: the request's parameters go back in the form. */
function consentPageFor(request: AuthorizationRequest, deps: OAuthRouteDeps) {
  return consentPage({
    clientId: request.client.clientId,
    clientName: request.client.clientName,
    redirectUri: request.redirectUri,
    scope: request.scope,
    params: {
      response_type: 'code',
      client_id: request.client.clientId,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      scope: request.scope,
      state: request.state,
      resource: request.resource,
    },
    denyUrl: deps.oauth.denialUrl(request),
    devSignIn: deps.devSignIn,
    identityProviderIssuer: deps.identityProviderIssuer,
  });
}

function limitText(deps: OAuthRouteDeps, name: LimitName): string {
  const { points, durationSeconds } = deps.rateLimits.rules[name];
  return points === 0 ? 'without limit' : `${points} per ${durationSeconds / 60} minutes`;
}

/** RFC 6749 4.1.2.1: tell the user (HTML for a browser, JSON otherwise); never redirect. */
function untrustedRequest(c: Context<AppEnv>, error: string, description: string) {
  if ((c.req.header('accept') ?? '').includes('text/html')) {
    const page = errorPage(error, description);
    return c.html(page.html, 400, page.headers);
  }
  return c.json({ error, error_description: description }, 400, NO_STORE);
}
