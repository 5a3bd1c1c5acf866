import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Caller } from './context.js';

/** Who is behind a paid call: a signed-in user, an employer's agent key, or nobody said. */
export type PaidCaller =
  | { kind: 'user'; caller: Caller }
  | { kind: 'agent_key'; employerId: string }
  | { kind: 'anonymous' };

/** Reads the identity headers of a paid request (the employers feature's `PaidCallers`). */
export interface PaidCallerResolver {
  resolve(headers: Headers): Promise<PaidCaller>;
}

/**
 * Resolves who is behind a paid call (`X-Identity-Token` or `X-Agent-Key`) into `c.var.paidCaller`.
 * It runs after the gate: a wrong header answers 401 once the fee is paid, and the fee is kept.
 */
export function requirePaidCaller(paidCallers: PaidCallerResolver): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('paidCaller', await paidCallers.resolve(c.req.raw.headers));
    await next();
  };
}
