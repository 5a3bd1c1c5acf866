import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { isConnectionTimeout } from '../db/client.js';
import { AppError, badRequest, type ErrorCode } from '../errors.js';
import type { AppEnv } from './context.js';

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
      return errorResponse(c, new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type: must be application/json', { field: 'Content-Type' }));
    }
    if (error.status === 413) {
      return errorResponse(c, new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.'));
    }
    if (error.status < 500) {
      // The framework's own 4xx keeps its status (BAD_REQUEST's catalog status is only its usual one).
      return c.json({ error: error.message || 'Bad request.', code: 'BAD_REQUEST' satisfies ErrorCode }, error.status);
    }
  }
  if (isConnectionTimeout(error)) {
    // Overload, not a fault: the caller may retry at once (the pool usually frees within a second).
    c.var.log.warn({ err: error }, 'no database connection in time');
    return errorResponse(c, new AppError('DATABASE_BUSY', 'The service is busy: no database connection came free in time. Try again.', {}, { 'Retry-After': '1' }));
  }
  c.var.log.error({ err: error }, 'unhandled error');
  return errorResponse(c, new AppError('INTERNAL_ERROR', 'Something went wrong on our side.'));
}
