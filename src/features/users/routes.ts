import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { Session, SignInOptions } from './schema.js';

const signInOptions = createRoute({
  method: 'get',
  path: '/api/auth/options',
  tags: ['Users'],
  summary: 'How to sign in to the web app',
  responses: { 200: jsonContent(SignInOptions, 'The sign-in options.') },
});

/** Its middleware (`requireUser`) is added where the route is mounted. */
const session = createRoute({
  method: 'get',
  path: '/api/session',
  tags: ['Users'],
  summary: "The signed-in user's roles",
  security: [{ bearerAuth: [] }],
  responses: { 200: jsonContent(Session, 'The caller.'), ...errorResponses(401) },
});

/** `GET /api/auth/options` (public): how the web app's sign-in page may sign someone in. */
export function signInOptionsRoute(options: { devSignIn: boolean; loginUrl: string | undefined }): FeatureApp {
  const app = featureApp();
  app.openapi(signInOptions, (c) => c.json({ dev_sign_in: options.devSignIn, login_url: options.loginUrl ?? null }, 200));
  return app;
}

/** `GET /api/session`: who the bearer is and which roles it has (the web app picks its pages from it). */
export function sessionRoute(deps: { requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi({ ...session, middleware: [deps.requireUser] as const }, showSession);
  return app;
}

const showSession: RouteHandler<typeof session, AppEnv> = (c) => {
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
};
