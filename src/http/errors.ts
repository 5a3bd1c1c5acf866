import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from './context.js';

/**
 * The error envelope of every non-2xx JSON response (ARCHITECTURE.md):
 * `{"error": "<human sentence>", "code": "<MACHINE_CODE>", ...details}`.
 */
export interface ErrorBody {
  error: string;
  code: string;
  [detail: string]: unknown;
}

export class AppError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  body(): ErrorBody {
    return { error: this.message, code: this.code, ...this.details };
  }
}

/** 404 that says the same whether the thing is missing or belongs to someone else. */
export const notFound = (what: string) => new AppError(404, 'NOT_FOUND', `${what} not found.`);

export const badRequest = (field: string, message: string, code = 'VALIDATION_ERROR') =>
  new AppError(400, code, `${field}: ${message}`, { field });

export function errorResponse(c: Context, error: AppError): Response {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(error.body(), error.status);
}

/** Turns anything thrown into the envelope; a 5xx never leaks internals to the caller. */
export function handleError(error: Error, c: Context<AppEnv>): Response {
  if (error instanceof AppError) return errorResponse(c, error);
  if (error instanceof HTTPException) {
    if (error.status === 400 && /json/i.test(error.message)) {
      return errorResponse(c, badRequest('body', 'is not valid JSON', 'INVALID_JSON'));
    }
    if (error.status === 415) {
      return errorResponse(
        c,
        new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type: must be application/json', { field: 'Content-Type' }),
      );
    }
    if (error.status === 413) {
      return errorResponse(c, new AppError(413, 'PAYLOAD_TOO_LARGE', 'The request body is too large.'));
    }
    if (error.status < 500) {
      return errorResponse(c, new AppError(error.status, 'BAD_REQUEST', error.message || 'Bad request.'));
    }
  }
  c.var.log.error({ err: error }, 'unhandled error');
  return errorResponse(c, new AppError(500, 'INTERNAL_ERROR', 'Something went wrong on our side.'));
}
