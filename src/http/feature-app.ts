import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';
import { validationHook } from './validation.js';

/** A feature's routes: a hono sub-app that `buildApp` mounts with `app.route('/', …)`. */
export type FeatureApp = OpenAPIHono<AppEnv>;

/** Every app, the root and each feature's, answers an invalid request the same way (400 naming the field). */
export const featureApp = (): FeatureApp => new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
