import { createHash, timingSafeEqual } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { HttpMetrics } from '../../http/metrics.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import type { Logger } from '../../log.js';
import { Health, MetricsText, OpenApiDocument, Readiness } from './schema.js';

/** Something of this instance's own that must work before it takes traffic (database, job runner). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export interface OpsRouteDeps {
  metrics: HttpMetrics;
  metricsAccess: Config['metricsAccess'];
  readiness: readonly ReadinessCheck[];
  openApiDocument: () => object;
}

const READINESS_TIMEOUT_MS = 2000;

const tags = ['Operations'];

const liveness = createRoute({
  method: 'get',
  path: '/healthz',
  tags,
  summary: 'Liveness: the process is up',
  responses: { 200: jsonContent(Health, 'Up.') },
});

const readiness = createRoute({
  method: 'get',
  path: '/readyz',
  tags,
  summary: "Readiness: this instance's database and job runner answer",
  responses: { 200: jsonContent(Readiness, 'Ready.'), 503: jsonContent(Readiness, 'Not ready.') },
});

const metrics = createRoute({
  method: 'get',
  path: '/metrics',
  tags,
  summary: 'Prometheus metrics',
  description: 'With `METRICS_TOKEN` set: `Authorization: Bearer <METRICS_TOKEN>` or 401. Without it: open in local mode, 404 in live mode.',
  security: [{ metricsToken: [] }],
  responses: {
    200: { description: 'Prometheus text format.', content: { 'text/plain': { schema: MetricsText } } },
    ...errorResponses(401, 404),
  },
});

const openApi = createRoute({
  method: 'get',
  path: '/api/openapi.json',
  tags,
  summary: 'This OpenAPI 3.0.3 document',
  responses: { 200: { description: 'The machine description.', content: { 'application/json': { schema: OpenApiDocument } } } },
});

export function opsRoutes(deps: OpsRouteDeps): FeatureApp {
  const app = featureApp();
  app.openapi(liveness, (c) => c.json({ status: 'ok' as const }, 200));
  app.openapi(readiness, async (c) => {
    const results = await Promise.all(deps.readiness.map((check) => runCheck(check, c.get('log'))));
    const ready = results.every(([, result]) => result.ok);
    return c.json({ status: ready ? ('ready' as const) : ('not_ready' as const), checks: Object.fromEntries(results) }, ready ? 200 : 503);
  });
  app.openapi(metrics, async (c) => {
    const access = deps.metricsAccess;
    if (access.kind === 'off') throw new AppError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}.`);
    if (access.kind === 'token' && !sameSecret(c.req.header('authorization') ?? '', `Bearer ${access.token}`)) {
      throw new AppError('UNAUTHORIZED', 'The metrics token is missing or wrong.', {}, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    return c.text(await deps.metrics.render(), 200, { 'Content-Type': deps.metrics.registry.contentType });
  });
  app.openapi(openApi, (c) => c.json(deps.openApiDocument(), 200));
  return app;
}

/** One readiness check, within its time limit: `[name, { ok }]`. */
async function runCheck({ name, check }: ReadinessCheck, log: Logger) {
  try {
    await withTimeout(check(), READINESS_TIMEOUT_MS);
    return [name, { ok: true }] as const;
  } catch (error) {
    // The error text may name hosts or carry credentials: the log gets it, the caller does not.
    log.warn({ err: error, check: name }, 'readiness check failed');
    return [name, { ok: false }] as const;
  }
}

/** Compares without leaking, through timing, how much of the token matched. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
