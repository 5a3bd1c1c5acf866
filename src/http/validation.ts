import type { Context } from 'hono';
import { z } from '@hono/zod-openapi';
import type { ZodError } from 'zod';
import { canonicalEvmAddress, EVM_ADDRESS_PATTERN, EVM_ADDRESS_RULE } from '../chains/evm/address.js';
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

const TYPE_NAMES: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  bigint: 'a whole number',
};
const FORMAT_NAMES: Record<string, string> = { email: 'an email address', uuid: 'a valid id', url: 'a URL', datetime: 'a date and time (ISO 8601)', date: 'a date (YYYY-MM-DD)' };
const UNITS: Record<string, [string, string]> = { string: ['character', 'characters'], array: ['item', 'items'], set: ['item', 'items'] };

function sizeMessage(bound: 'at most' | 'at least', origin: string, limit: unknown, inclusive = true): string {
  const units = UNITS[origin];
  if (units) return `must ${origin === 'string' ? 'be' : 'have'} ${bound} ${String(limit)} ${Number(limit) === 1 ? units[0] : units[1]}`;
  if (!inclusive) return `must be ${bound === 'at most' ? 'less' : 'more'} than ${String(limit)}`;
  return `must be ${bound} ${String(limit)}`;
}

/**
 * Plain words for zod's own messages (a message a schema gives wins over these): the web app puts
 * the field's label first ("Full name must be at most 200 characters"), so a form and the server
 * say the same thing.
 */
function plainMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_big':
      return sizeMessage('at most', issue.origin, issue.maximum, issue.inclusive);
    case 'too_small':
      if (issue.origin === 'string' && issue.minimum === 1) return 'is required';
      return sizeMessage('at least', issue.origin, issue.minimum, issue.inclusive);
    case 'invalid_format':
      return FORMAT_NAMES[issue.format] ? `must be ${FORMAT_NAMES[issue.format]}` : undefined;
    case 'invalid_value':
      return `must be one of: ${issue.values.map(String).join(', ')}`;
    default:
      return undefined;
  }
}
z.config({ customError: plainMessage });

// Shared field schemas; each carries its OpenAPI description.
export const uuidSchema = z.uuid();
/** An EVM address under the API's one rule (`canonicalEvmAddress`), parsed to its EIP-55 spelling. */
export const evmAddressSchema = z
  .string()
  .regex(EVM_ADDRESS_PATTERN, EVM_ADDRESS_RULE)
  .transform((value, ctx) => {
    const address = canonicalEvmAddress(value);
    if (address === null) ctx.addIssue({ code: 'custom', message: EVM_ADDRESS_RULE });
    return address ?? z.NEVER;
  })
  .openapi({ example: '0x5FbDB2315678afecb367f032d93F642f64180aa3' });
export const usdAmountSchema = z
  .string()
  .regex(USD_DECIMAL_PATTERN, {
    error: (issue) =>
      String(issue.input).trim().startsWith('-')
        ? 'must be a positive amount, e.g. 1250.50'
        : 'must be an amount in dollars with at most 6 decimal places, e.g. 1250.50',
  })
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
