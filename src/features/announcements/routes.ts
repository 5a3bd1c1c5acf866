import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { requirePlatformAdmin } from '../../http/auth.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonBody, jsonContent, validationHook } from '../../http/validation.js';
import {
  ActiveAnnouncements,
  AdminAnnouncement,
  AdminAnnouncementList,
  AdminListQuery,
  AnnouncementIdParams,
  CreateAnnouncementBody,
  UpdateAnnouncementBody,
} from './schema.js';
import type { AnnouncementPatch, AnnouncementsService, NewAnnouncementInput } from './service.js';

export interface AnnouncementRouteDeps {
  announcements: AnnouncementsService;
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
}

const toPatch = (body: z.infer<typeof UpdateAnnouncementBody>): AnnouncementPatch => ({
  title: body.title,
  body: body.body,
  severity: body.severity,
  audience: body.audience,
  publishedAt: body.published_at,
  publishNow: body.publish_now,
  expiresAt: body.expires_at,
  linkUrl: body.link_url,
  linkLabel: body.link_label,
});
const toNew = (body: z.infer<typeof CreateAnnouncementBody>): NewAnnouncementInput => ({
  ...toPatch(body),
  title: body.title,
  body: body.body,
  severity: body.severity,
  audience: body.audience,
});

/** The default validation hook, except that an unknown key of a strict body is named as the offending field. */
function namingUnknownKeys<R>(result: ({ success: true } | { success: false; error: z.ZodError }) & { target: string }, c: Context): R | undefined {
  if (result.success) return undefined;
  const issues = result.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined
      ? { ...issue, path: [...issue.path, issue.keys[0]], message: 'is not a field of an announcement' }
      : issue,
  );
  return validationHook({ success: false, error: new z.ZodError(issues), target: result.target }, c) as R | undefined;
}

const ADMIN_ONLY = 'Platform admins (`ADMIN_USER_IDS`) only: 401 without a token, 403 `FORBIDDEN` for anyone else, before the request is validated.';

const security = [{ bearerAuth: [] }];

// Middleware (`requireUser`, then `requirePlatformAdmin` for the admin's routes, then `idempotency`
// on create) is added where the routes are mounted: it needs the app's dependencies.
const listAll = createRoute({
  method: 'get',
  path: '/api/admin/announcements',
  tags: ['Announcements'],
  summary: 'Every announcement (drafts, scheduled, active, expired), newest first, with its state',
  description: ADMIN_ONLY,
  security,
  request: { query: AdminListQuery },
  responses: { 200: jsonContent(AdminAnnouncementList, 'One page of announcements.'), ...errorResponses(400, 401, 403) },
});

const create = createRoute({
  method: 'post',
  path: '/api/admin/announcements',
  tags: ['Announcements'],
  summary: 'Create an announcement (a draft unless published_at or publish_now is given)',
  description:
    `${ADMIN_ONLY} Lengths count characters (Unicode code points) after trimming. \`expires_at\` must be after \`published_at\`; ` +
    '`link_label` is required with `link_url`. `created_by` is the caller. Written to the audit log. Honours `Idempotency-Key`.',
  security,
  request: { body: jsonBody(CreateAnnouncementBody) },
  responses: { 201: jsonContent(AdminAnnouncement, 'Created.'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
});

const update = createRoute({
  method: 'patch',
  path: '/api/admin/announcements/{id}',
  tags: ['Announcements'],
  summary: 'Edit an announcement (partial; the same rules as create, checked on the result)',
  description:
    `${ADMIN_ONLY} Editing does not re-deliver: users who dismissed it keep it dismissed. \`published_at: null\` turns it back into a draft; ` +
    '`link_url: null` removes the call to action and its label. A change is written to the audit log with the fields before and after.',
  security,
  request: { params: AnnouncementIdParams, body: jsonBody(UpdateAnnouncementBody) },
  responses: { 200: jsonContent(AdminAnnouncement, 'The announcement after the edit.'), ...errorResponses(400, 401, 403, 404, 413, 415) },
});

const remove = createRoute({
  method: 'delete',
  path: '/api/admin/announcements/{id}',
  tags: ['Announcements'],
  summary: 'Delete an announcement and every dismissal of it',
  description: `${ADMIN_ONLY} Written to the audit log.`,
  security,
  request: { params: AnnouncementIdParams },
  responses: { 204: { description: 'Deleted.' }, ...errorResponses(400, 401, 403, 404) },
});

const listActive = createRoute({
  method: 'get',
  path: '/api/announcements/active',
  tags: ['Announcements'],
  summary: "The caller's banners",
  description:
    'Any signed-in user. Announcements for `all` and for each of the caller\'s roles (`employers`: owns an employer; `employees`: has an active ' +
    'employee record; `admins`: platform admin), published, not expired, not dismissed by the caller. At most 5, ordered error, warning, ' +
    'success, info, then newest published first. Clients fetch it on page load and about every 60 s.',
  security,
  responses: { 200: jsonContent(ActiveAnnouncements, 'The banners to show.'), ...errorResponses(401) },
});

const dismiss = createRoute({
  method: 'post',
  path: '/api/announcements/{id}/dismiss',
  tags: ['Announcements'],
  summary: 'Dismiss a banner for good (idempotent)',
  description:
    'Any signed-in user in the announcement\'s audience, once it is published: 204 every time. A dismissal is permanent; editing the ' +
    'announcement does not show it again. 404 for an unknown id, a draft or scheduled one, or one for another audience.',
  security,
  request: { params: AnnouncementIdParams },
  responses: { 204: { description: 'Dismissed (now or before).' }, ...errorResponses(400, 401, 404) },
});

type Handler<R extends Parameters<typeof createRoute>[0]> = (announcements: AnnouncementsService) => RouteHandler<R, AppEnv>;

const handleListAll: Handler<typeof listAll> = (announcements) => async (c) => {
  c.header('Cache-Control', 'no-store');
  return c.json(await announcements.list(c.var.caller, c.req.valid('query')), 200);
};

const handleCreate: Handler<typeof create> = (announcements) => async (c) => {
  const created = await announcements.create(c.var.caller, toNew(c.req.valid('json')), c.var.requestId);
  return c.json(created, 201);
};

const handleUpdate: Handler<typeof update> = (announcements) => async (c) => {
  const { id } = c.req.valid('param');
  return c.json(await announcements.update(c.var.caller, id, toPatch(c.req.valid('json')), c.var.requestId), 200);
};

const handleRemove: Handler<typeof remove> = (announcements) => async (c) => {
  await announcements.remove(c.var.caller, c.req.valid('param').id, c.var.requestId);
  return c.body(null, 204);
};

const handleListActive: Handler<typeof listActive> = (announcements) => async (c) => {
  c.header('Cache-Control', 'no-store');
  return c.json({ announcements: await announcements.active(c.var.caller) }, 200);
};

const handleDismiss: Handler<typeof dismiss> = (announcements) => async (c) => {
  await announcements.dismiss(c.var.caller, c.req.valid('param').id);
  return c.body(null, 204);
};

/** System announcements (spec 2.12, 3.2, 4.8): the admin's CRUD and everyone's banners. */
export function announcementRoutes(deps: AnnouncementRouteDeps): FeatureApp {
  const app = featureApp();
  const { announcements } = deps;
  const signedIn = [deps.requireUser];
  const admin = [deps.requireUser, requirePlatformAdmin];
  app.openapi({ ...listAll, middleware: admin }, handleListAll(announcements));
  app.openapi({ ...create, middleware: [...admin, deps.idempotency] }, handleCreate(announcements), namingUnknownKeys);
  app.openapi({ ...update, middleware: admin }, handleUpdate(announcements), namingUnknownKeys);
  app.openapi({ ...remove, middleware: admin }, handleRemove(announcements));
  app.openapi({ ...listActive, middleware: signedIn }, handleListActive(announcements));
  app.openapi({ ...dismiss, middleware: signedIn }, handleDismiss(announcements));
  return app;
}
