import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/context.js';
import { ErrorSchema } from '../http/validation.js';
import { formatUsd } from '../money.js';
import { cardAmount, presentCardOffer, routeOffers } from './offers.js';
import type { PaidRoute } from './prices.js';
import { routeDiscovery, type DiscoveryExtensions } from './x402/discovery.js';

const PROTOCOL: Record<string, string> = { A: 'mpp (Tempo, eip155:4217)', B: 'x402 (Base, eip155:8453)', C: 'x402 (Solana)' };

/** A route's gate: `discovery` is what its x402 402s carry for discovery services (rails B and C). */
export type RouteGate = (route: PaidRoute, discovery?: DiscoveryExtensions) => MiddlewareHandler<AppEnv>;

/**
 * The `createRoute` config of a paid route: its price and rails in the description and in
 * `x-payment`, the 402 response, and the gate as its first middleware (so the 402 comes before any
 * validation). `extra` adds the route's own request, responses and middleware (run after the gate).
 * A route with an x402 rail gets its discovery metadata from this same config, once.
 */
export function paidRoute<
  const Extra extends { request?: RouteConfig['request']; responses: RouteConfig['responses']; description?: string; middleware?: MiddlewareHandler<AppEnv>[] },
>(
  paid: PaidRoute,
  gate: RouteGate,
  extra: Extra,
) {
  const price = `${formatUsd(paid.price)} USD${paid.unit === 'charge' ? '' : ` per ${paid.unit}`}`;
  const rails = paid.rails.map((r) => `${r} = ${PROTOCOL[r]}`).join(', ');
  // The document is static: a card is offered where a card processor is configured (and the price reaches its minimum).
  const card = routeOffers(paid, { card: true }).card;
  const spec = {
    method: paid.method === 'GET' ? ('get' as const) : ('post' as const),
    path: paid.path,
    tags: ['Paid'],
    summary: paid.summary,
    'x-payment': {
      price: formatUsd(paid.price),
      currency: 'USD',
      unit: paid.unit,
      rails: paid.rails,
      card: presentCardOffer(card),
      effect: paid.effect,
      ...(paid.actingActions && { acting_actions: paid.actingActions }),
    },
    ...extra,
    description: `Paid: ${price}; rails ${rails}${card ? `; card fallback offered with rail A where a card processor is configured${card.credit ? ` (a ${cardAmount(card)} USD card credit, the processor's minimum, that later calls draw on with the Payment-Credit header)` : ''}` : ''}. ${effectText(paid)}${extra.description ? ` ${extra.description}` : ''}`,
    responses: {
      ...extra.responses,
      402: {
        description:
          'Payment required: `WWW-Authenticate: Payment ...` for rail A, `PAYMENT-REQUIRED` (x402 v2) for rails B and C, ' +
          'and `{x402Version, accepts}` in the body for x402 v1 clients. Also when a proof is invalid or already used.',
        content: { 'application/json': { schema: ErrorSchema } },
      },
    },
  };
  const discovery = paid.rails.some((rail) => rail !== 'A') ? routeDiscovery(spec) : undefined;
  return { ...spec, middleware: [gate(paid, discovery), ...(extra.middleware ?? [])] };
}

/** How the fee of a route is collected, in its OpenAPI description (docs/decisions.md, "Charge before acting"). */
export function effectText(paid: PaidRoute): string {
  const acts = 'the fee is settled before the handler runs (a fee that does not settle answers 402 and nothing happens; a 5xx refunds it)';
  const reads = 'the fee is settled after the handler answers below 500 (a 5xx is not charged)';
  if (paid.actingActions) return `Acts for action ${paid.actingActions.join(', ')}: ${acts}; reads otherwise: ${reads}.`;
  return paid.effect === 'acts' ? `Acts: ${acts}.` : `Reads: ${reads}.`;
}

/**
 * A session-billed GET route's vouchers, top-ups and closes: mppx session clients POST them to the
 * route's own URL. The gate answers them (204 with a receipt); nothing else gets through.
 */
export function registerSessionManagement(app: OpenAPIHono<AppEnv>, paid: PaidRoute, gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>): void {
  app.post(paid.path.replaceAll(/\{(\w+)\}/g, ':$1'), gate(paid), (c) =>
    c.json({ error: 'Send session credentials (voucher, top-up, close) here; content is served by GET.', code: 'METHOD_NOT_ALLOWED' }, 405),
  );
}
