import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import type { DevIdentityProvider } from '../../providers/identity/dev-idp.js';

const TokenRequest = z
  .object({
    sub: z.string().trim().min(1).max(255).openapi({ example: 'demo-owner', description: 'The user id.' }),
    email: z.string().trim().max(254).pipe(z.email()).optional().openapi({ example: 'owner@demo.local' }),
  })
  .openapi('DevTokenRequest');
const TokenResponse = z.object({ token: z.string() }).openapi('DevTokenResponse');
const Jwks = z.object({ keys: z.array(z.object({}).loose()) }).openapi('Jwks');

/** Local mode only (ARCHITECTURE.md, "Local-mode contract"): never registered in live mode. */
export function registerDevRoutes(app: OpenAPIHono<AppEnv>, idp: DevIdentityProvider): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/dev/token',
      tags: ['Local development'],
      summary: 'Mint an identity token for any user (local mode only)',
      request: { body: jsonBody(TokenRequest) },
      responses: { 200: jsonContent(TokenResponse, 'A JWT valid for one hour.'), ...errorResponses(400, 415) },
    }),
    async (c) => {
      const { sub, email } = c.req.valid('json');
      return c.json({ token: await idp.issue({ sub, email }) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/dev/jwks.json',
      tags: ['Local development'],
      summary: "The development identity provider's public keys",
      responses: { 200: jsonContent(Jwks, 'JWKS.') },
    }),
    (c) => c.json(idp.jwks(), 200),
  );
}
