import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/context.js';
import { ErrorSchema } from '../http/validation.js';
import { formatUsd } from '../money.js';
import { PRICE_TABLE, type PaidRoute } from './prices.js';

const PROTOCOL: Record<string, string> = { A: 'mpp (Tempo, eip155:4217)', B: 'x402 (Base, eip155:8453)', C: 'x402 (Solana)' };

/** What a paid route's OpenAPI operation carries: its price, rails, and the 402. */
export function paidOperation(route: PaidRoute) {
  return {
    description: `Paid: ${formatUsd(route.price)} USD${route.unit === 'charge' ? '' : ` per ${route.unit}`}; rails ${route.rails
      .map((r) => `${r} = ${PROTOCOL[r]}`)
      .join(', ')}${route.card ? '; card fallback offered with rail A' : ''}.`,
    'x-payment': {
      price: formatUsd(route.price),
      currency: 'USD',
      unit: route.unit,
      rails: route.rails,
      card: route.card,
    },
    402: {
      description:
        'Payment required: `WWW-Authenticate: Payment ...` for rail A, `PAYMENT-REQUIRED` (x402 v2) for rails B and C, ' +
        'and `{x402Version, accepts}` in the body for x402 v1 clients. Also when a proof is invalid or already used.',
      content: { 'application/json': { schema: ErrorSchema } },
    },
  } as const;
}

/**
 * Registers every paid route of the price table that no feature has registered yet: the 402
 * contract holds for all of them now. A paid call to one of these answers 501, which (as a 5xx)
 * is never charged.
 */
export function registerPendingPaidRoutes(app: OpenAPIHono<AppEnv>, gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>): void {
  const honoPath = (path: string) => path.replaceAll(/\{(\w+)\}/g, ':$1');
  for (const paid of PRICE_TABLE) {
    if (app.routes.some((r) => r.method === paid.method && r.path === honoPath(paid.path))) continue;
    const operation = paidOperation(paid);
    const names = [...paid.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const params = z.object(Object.fromEntries(names.map((name) => [name, z.string().openapi({ param: { name, in: 'path' } })])));
    const definition = createRoute({
      method: paid.method === 'GET' ? 'get' : 'post',
      path: paid.path,
      ...(names.length > 0 ? { request: { params } } : {}),
      tags: ['Paid'],
      summary: paid.summary,
      description: `${operation.description} Not yet available: a paid call answers 501 and is not charged.`,
      middleware: [gate(paid)] as const,
      responses: {
        402: operation[402],
        501: { description: 'Not implemented yet (not charged).', content: { 'application/json': { schema: ErrorSchema } } },
      },
      'x-payment': operation['x-payment'],
    } as Parameters<typeof createRoute>[0]);
    app.openapi(definition, (c) =>
      c.json({ error: `${paid.method} ${paid.path} is not available yet; you were not charged.`, code: 'NOT_IMPLEMENTED' }, 501),
    );
  }
}
