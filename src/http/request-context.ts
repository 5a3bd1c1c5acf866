import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Logger } from '../log.js';
import type { AppEnv } from './context.js';
import type { HttpMetrics } from './metrics.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Outermost middleware: a request id (the caller's X-Request-Id when sane, else a new one) on the
 * response and on every log line of the request, and one access-log line and metric per request.
 */
export function requestContext(log: Logger, metrics: HttpMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    const requestLog = log.child({ reqId: requestId });
    c.set('requestId', requestId);
    c.set('log', requestLog);
    try {
      await next();
    } finally {
      c.header('X-Request-Id', requestId);
      const route = matchedRoutes(c).findLast((r) => r.method !== 'ALL')?.path ?? 'unmatched';
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(c.req.method, route, c.res.status, seconds);
      requestLog.info(
        { method: c.req.method, path: c.req.path, route, status: c.res.status, ms: Math.round(seconds * 1000) },
        'request',
      );
    }
  };
}
