import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Hex } from 'viem';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import { decodeMemo, MEMO_PATTERN, MEMO_TYPES } from './codec.js';

export const MemoFieldsSchema = z
  .object({
    version: z.number().int(),
    type: z.enum(Object.keys(MEMO_TYPES) as [keyof typeof MEMO_TYPES]),
    employer_tag: z.string().openapi({ description: 'First 4 bytes of SHA-256 of the employer id.' }),
    employee_tag: z.string().openapi({ description: 'First 4 bytes of SHA-256 of the employee id.' }),
    pay_period_start: z.string().nullable().openapi({ format: 'date' }),
    pay_period_end: z.string().nullable().openapi({ format: 'date' }),
    cost_centre_tag: z.string().nullable(),
    record_hash: z.string().openapi({ description: '12 bytes binding the memo to one payroll item (run, employee, amount).' }),
  })
  .openapi('MemoFields');

export const MemoSchema = z.string().regex(MEMO_PATTERN, 'must be 0x followed by 64 hex characters (32 bytes)');

export const DecodeBody = z.object({ memo: MemoSchema }).openapi('MemoDecodeRequest');
const Decoded = z
  .object({
    memo: z.string(),
    fields: MemoFieldsSchema.nullable().openapi({ description: 'null when the 32 bytes are not one of our memos.' }),
  })
  .openapi('MemoDecodeResult');

export function memoRoutes(deps: { gate: (route: PaidRoute) => MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  app.openapi(
    createRoute(
      paidRoute(PAID.memoDecode, deps.gate, {
        request: { body: jsonBody(DecodeBody) },
        responses: { 200: jsonContent(Decoded, 'The memo and its payroll fields (layout in docs/api.md).'), ...errorResponses(400, 415) },
      }),
    ),
    (c) => {
      const { memo } = c.req.valid('json');
      return c.json({ memo, fields: decodeMemo(memo as Hex) }, 200);
    },
  );
  return app;
}
