import type { MiddlewareHandler } from 'hono';
import type { PaidCallers } from '../features/employers/paid-caller.js';
import type { AppEnv } from './context.js';

/**
 * Resolves who is behind a paid call (`X-Identity-Token` or `X-Agent-Key`) into `c.var.paidCaller`.
 * It runs after the gate: a wrong header answers 401 once the fee is paid, and the fee is kept.
 */
export function requirePaidCaller(paidCallers: Pick<PaidCallers, 'resolve'>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('paidCaller', await paidCallers.resolve(c.req.raw.headers));
    await next();
  };
}
