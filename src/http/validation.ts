import type { Context } from 'hono';
import { z } from '@hono/zod-openapi';
import type { ZodError } from 'zod';
import { USD_DECIMAL_PATTERN } from '../money.js';
import { AppError } from '../errors.js';
import { errorResponse } from './errors.js';

/** A 400 that names the first offending field and lists every problem. */
export function validationError(error: ZodError, target: string): AppError {
  const issues = error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : target,
    message: issue.message,
  }));
  const first = issues[0] ?? { field: target, message: 'is invalid' };
  return new AppError('VALIDATION_ERROR', `${first.field}: ${first.message}`, { field: first.field, issues });
}

/** zod-openapi's hook, run after each request part (json, query, param) is validated. */
export function validationHook(
  result: ({ success: true } | { success: false; error: ZodError }) & { target: string },
  c: Context,
): Response | undefined {
  if (!result.success) return errorResponse(c, validationError(result.error, result.target));
  return undefined;
}

// Shared field schemas; each carries its OpenAPI description.
export const uuidSchema = z.uuid();
export const evmAddressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .openapi({ example: '0x5FbDB2315678afecb367f032d93F642f64180aa3' });
export const usdAmountSchema = z
  .string()
  .regex(USD_DECIMAL_PATTERN, 'must be a decimal string with at most 6 decimal places, e.g. "1250.50"')
  .openapi({ example: '1250.50' });
export const emailSchema = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email('must be an email address'))
  .transform((email) => email.toLowerCase());

/** Request body part of a route: JSON, required (so non-JSON requests are validated too). */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { 'application/json': { schema } } } as const;
}

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } } as const;
}

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: 'A human-readable sentence.' }),
    code: z.string().openapi({ description: 'A stable machine code, e.g. VALIDATION_ERROR.' }),
    field: z.string().optional().openapi({ description: 'The offending field, on 400s.' }),
  })
  .loose()
  .openapi('Error');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input; `field` names the offending field.',
  401: 'Missing or invalid bearer token.',
  403: 'Not allowed.',
  404: 'Not found, or not yours.',
  409: 'Conflicts with the current state.',
  413: 'Request body too large.',
  415: 'Request body must be application/json.',
  422: 'Same Idempotency-Key with a different request.',
};

/** OpenAPI entry of a 429 from an abuse limit (src/http/rate-limits.ts): `RATE_LIMITED` and `Retry-After`. */
export function rateLimitedContent(description: string) {
  return {
    ...jsonContent(ErrorSchema, `\`RATE_LIMITED\`: ${description}; see \`Retry-After\`.`),
    headers: z.object({ 'Retry-After': z.string().openapi({ description: 'Seconds.' }) }),
  };
}

/** OpenAPI entries for the error statuses a route can answer. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [status, jsonContent(ErrorSchema, ERROR_DESCRIPTIONS[status] ?? 'Error.')]),
  );
}
