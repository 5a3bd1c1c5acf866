import { z } from '@hono/zod-openapi';

export const Health = z.object({ status: z.literal('ok') }).openapi('Health');

export const Readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z
      .record(z.string(), z.object({ ok: z.boolean() }))
      .openapi({ description: 'Per check (`database`, `jobs` where this instance runs jobs): whether it answered within 2 s. Never why not: that goes to the log.' }),
  })
  .openapi('Readiness');

/** The Prometheus text format. */
export const MetricsText = z.string();

/** The OpenAPI document, described only as an object. */
export const OpenApiDocument = z.object({}).loose();
