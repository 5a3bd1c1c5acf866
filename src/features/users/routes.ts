import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
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

/** `GET /api/session`: who the bearer is and which roles it has (the web app picks its pages from it). */
export function registerSessionRoute(app: OpenAPIHono<AppEnv>, deps: { requireUser: MiddlewareHandler<AppEnv> }): void {
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
}
