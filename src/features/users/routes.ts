import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';

const Session = z
  .object({
    user_id: z.string(),
    email: z.string().nullable(),
    is_platform_admin: z.boolean(),
    owned_employer_id: z.uuid().nullable().openapi({ description: 'The employer this user owns, if any.' }),
    employee_ids: z.array(z.uuid()).openapi({ description: 'Employee records linked to this user, across employers.' }),
  })
  .openapi('Session');

const SignInOptions = z
  .object({
    dev_sign_in: z.boolean().openapi({ description: "Local mode: sign in as any user through POST /api/dev/token." }),
    login_url: z.string().nullable().openapi({ description: "The identity provider's hosted login (IDP_LOGIN_URL), or null." }),
  })
  .openapi('SignInOptions');

/** `GET /api/auth/options` (public): how the web app's sign-in page may sign someone in. */
export function signInOptionsRoute(options: { devSignIn: boolean; loginUrl: string | undefined }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/auth/options',
      tags: ['Users'],
      summary: 'How to sign in to the web app',
      responses: { 200: jsonContent(SignInOptions, 'The sign-in options.') },
    }),
    (c) => c.json({ dev_sign_in: options.devSignIn, login_url: options.loginUrl ?? null }, 200),
  );
  return app;
}

/** `GET /api/session`: who the bearer is and which roles it has (the web app picks its pages from it). */
export function sessionRoute(deps: { requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  const route = createRoute({
    method: 'get',
    path: '/api/session',
    tags: ['Users'],
    summary: "The signed-in user's roles",
    security: [{ bearerAuth: [] }],
    middleware: [deps.requireUser] as const,
    responses: { 200: jsonContent(Session, 'The caller.'), ...errorResponses(401) },
  });
  app.openapi(route, (c) => {
    const caller = c.var.caller;
    c.header('Cache-Control', 'no-store');
    return c.json(
      {
        user_id: caller.userId,
        email: caller.email,
        is_platform_admin: caller.isPlatformAdmin,
        owned_employer_id: caller.ownedEmployerId,
        employee_ids: caller.employeeIds,
      },
      200,
    );
  });
  return app;
}
