import type { MiddlewareHandler } from 'hono';

/**
 * Reads what is left of a request body the answer did not need (a 402 or 401 given before the
 * body is parsed) before the answer goes out. Otherwise @hono/node-server drains it afterwards with
 * a 500 ms limit and then destroys the keep-alive socket, which a client reusing the connection
 * (the paid retry right after a 402) meets as "other side closed". The body is within
 * MAX_BODY_BYTES here (bodyLimit answered 413 before otherwise).
 */
export function drainUnreadBody(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const request = c.req.raw;
    if (request.body && !request.bodyUsed && c.res.status !== 413) await request.arrayBuffer().catch(() => {});
  };
}
