import { z } from '@hono/zod-openapi';

/**
 * OAuth 2.1 for the MCP endpoint (spec 4.7, 5.5). Request schemas only check shapes (strings where
 * strings are expected); the rules (redirect URIs, PKCE, scope, resource) live in service.ts so
 * that every refusal comes out in the OAuth error shape, not our usual envelope.
 */

/** RFC 6749 5.2 / RFC 7591 3.2.2 error body. */
export const OAuthErrorBody = z
  .object({
    error: z.string().openapi({ description: 'An OAuth error code, e.g. `invalid_request`, `invalid_grant`.', example: 'invalid_request' }),
    error_description: z.string().openapi({ description: 'A human-readable sentence.' }),
  })
  .openapi('OAuthError');

export const OAuthRateLimited = OAuthErrorBody.extend({
  code: z.literal('RATE_LIMITED').openapi({ description: "The project's machine code for a refusal by an abuse limit." }),
}).openapi('OAuthRateLimited');

export const ProtectedResourceMetadata = z
  .object({
    resource: z.string().openapi({ description: 'The MCP endpoint URL.' }),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
  })
  .openapi('OAuthProtectedResourceMetadata');

export const AuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    registration_endpoint: z.string(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean().openapi({ description: 'RFC 9207: redirects carry `iss`.' }),
  })
  .openapi('OAuthAuthorizationServerMetadata');

export const RegisterClientBody = z
  .object({
    client_name: z.string().max(200).nullable().optional().openapi({ description: 'Shown on the consent page (self-asserted); at most 200 characters.' }),
    redirect_uris: z
      .array(z.string())
      .min(1)
      .max(10)
      .openapi({
        description: '1-10 URIs, each `https`, or `http` on a loopback host (127.0.0.1, [::1], localhost); no fragment. Matched exactly.',
        example: ['http://127.0.0.1:33418/callback'],
      }),
  })
  // RFC 7591: other client metadata (grant_types, scope, token_endpoint_auth_method, ...) may be sent;
  // the server answers with the values it actually registered.
  .loose()
  .openapi('OAuthClientRegistration');

export const RegisteredClient = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.number().int().openapi({ description: 'Unix seconds.' }),
    client_name: z.string().optional().openapi({ description: 'Present when one was registered.' }),
    redirect_uris: z.array(z.string()),
    scope: z.literal('mcp:tools'),
    token_endpoint_auth_method: z.literal('none'),
    grant_types: z.array(z.enum(['authorization_code', 'refresh_token'])),
    response_types: z.array(z.literal('code')),
  })
  .openapi('OAuthRegisteredClient');

const authorizationFields = {
  response_type: z.string().optional().openapi({ example: 'code', description: 'Must be `code`.' }),
  client_id: z.string().optional().openapi({ description: 'From registration.' }),
  redirect_uri: z.string().optional().openapi({ description: 'Exactly one of the registered redirect URIs.' }),
  code_challenge: z.string().optional().openapi({ description: 'base64url(SHA-256(code_verifier)): 43 base64url characters.' }),
  code_challenge_method: z.string().optional().openapi({ example: 'S256', description: 'Must be `S256`.' }),
  scope: z.string().optional().openapi({ example: 'mcp:tools', description: 'Default and only value: `mcp:tools`.' }),
  state: z.string().optional().openapi({ description: 'Returned unchanged on the redirect.' }),
  resource: z.string().optional().openapi({ description: 'RFC 8707; when present, the MCP endpoint URL.' }),
};

export const AuthorizeQuery = z.object(authorizationFields);
export type AuthorizationParams = z.infer<typeof AuthorizeQuery>;

export const DecisionBody = z
  .object({
    ...authorizationFields,
    approve: z.boolean().openapi({ description: 'true grants access; false answers `access_denied`.' }),
  })
  .openapi('OAuthConsentDecision');

export const DecisionResult = z
  .object({
    redirect_to: z.string().openapi({ description: 'Where the browser goes next: the redirect URI with `code` (or `error`), `state` and `iss`.' }),
  })
  .openapi('OAuthConsentResult');

export const TokenRequest = z
  .object({
    grant_type: z.string().openapi({ description: '`authorization_code` or `refresh_token`.' }),
    client_id: z.string().optional().openapi({ description: 'Required.' }),
    code: z.string().optional().openapi({ description: 'authorization_code: the code from the redirect.' }),
    code_verifier: z.string().optional().openapi({ description: 'authorization_code: 43-128 characters of [A-Za-z0-9-._~].' }),
    redirect_uri: z.string().optional().openapi({ description: 'authorization_code: the redirect URI of the authorization request.' }),
    refresh_token: z.string().optional().openapi({ description: 'refresh_token: the current refresh token.' }),
    resource: z.string().optional().openapi({ description: 'RFC 8707; when present, the MCP endpoint URL.' }),
    scope: z.string().optional().openapi({ description: 'refresh_token: optional, at most the granted scope.' }),
  })
  .openapi('OAuthTokenRequest');
export type TokenParams = z.infer<typeof TokenRequest>;

export const TokenResponse = z
  .object({
    access_token: z.string().openapi({ description: 'ES256 JWT for `Authorization: Bearer` on /api/mcp; audience the MCP URL.' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ example: 3600 }),
    refresh_token: z.string().openapi({ description: 'Opaque; valid 30 days; rotates on every use.' }),
    scope: z.string().openapi({ example: 'mcp:tools' }),
  })
  .openapi('OAuthTokenResponse');

/** An HTML page (the consent page, or an error shown to the user). */
export const HtmlPage = z.string();

/** The `Retry-After` header of a 429. */
export const RetryAfterHeader = z.object({ 'Retry-After': z.string().openapi({ description: 'Seconds.' }) });
