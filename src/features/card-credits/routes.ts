import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponses, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import type { CardCreditRow } from '../../payments/card/credit.js';
import { PaidIdentityHeaders } from '../employers/index.js';
import { PageQuery } from '../mpp-activity/index.js';
import { BilledCreditParams, CardCredit, CardCredits, CreditIdParams, HeldCardCredits } from './schema.js';
import type { CardCreditAccess } from './service.js';

const refundAnswers = {
  200: jsonContent(CardCredit, 'Refunded: the remainder went back to the card.'),
  202: jsonContent(CardCredit, 'Refunding: the card processor has not confirmed yet; the service finishes it.'),
};

const heldCredits = createRoute({
  method: 'get',
  path: '/api/card-credits',
  tags: ['Paid'],
  summary: "The caller's card credits, newest first (by the identity headers their paid calls sent)",
  request: { headers: PaidIdentityHeaders, query: PageQuery },
  responses: { 200: jsonContent(HeldCardCredits, 'The card credits.'), ...errorResponses(400, 401) },
});

const heldCredit = createRoute({
  method: 'get',
  path: '/api/card-credits/{id}',
  tags: ['Paid'],
  summary: 'A card credit, to the caller that holds it (the identity headers its paid calls sent)',
  request: { headers: PaidIdentityHeaders, params: CreditIdParams },
  responses: { 200: jsonContent(CardCredit, 'The card credit.'), ...errorResponses(400, 401, 404) },
});

const refundHeld = createRoute({
  method: 'post',
  path: '/api/card-credits/{id}/refund',
  tags: ['Paid'],
  summary: "Sends what is left of the caller's card credit back to its card",
  request: { headers: PaidIdentityHeaders, params: CreditIdParams },
  responses: { ...refundAnswers, ...errorResponses(400, 401, 404, 409) },
});

const billedCredits = createRoute({
  method: 'get',
  path: '/api/employers/{id}/card-credits',
  tags: ['Employers'],
  summary: 'Card credits billed to the employer (bought and drawn by calls made for it), newest first',
  security: [{ bearerAuth: [] }],
  request: { params: BilledCreditParams.pick({ id: true }), query: PageQuery },
  responses: { 200: jsonContent(CardCredits, 'The card credits.'), ...errorResponses(400, 401, 404) },
});

const refundBilled = createRoute({
  method: 'post',
  path: '/api/employers/{id}/card-credits/{creditId}/refund',
  tags: ['Employers'],
  summary: 'Sends what is left of a card credit billed to the employer back to its card',
  security: [{ bearerAuth: [] }],
  request: { params: BilledCreditParams },
  responses: { ...refundAnswers, ...errorResponses(400, 401, 404, 409) },
});

export function cardCreditRoutes(deps: { access: CardCreditAccess; requireUser: MiddlewareHandler<AppEnv> }): FeatureApp {
  const app = featureApp();
  const { access } = deps;
  const middleware = [deps.requireUser];
  app.openapi(heldCredits, async (c) => {
    const query = c.req.valid('query');
    const { rows, total } = await access.allHeldBy(c.req.raw.headers, query);
    return c.json({ credits: rows.map(presentCredit), page: query.page, limit: query.limit, total }, 200);
  });
  app.openapi(heldCredit, async (c) => c.json(presentCredit(await access.heldBy(c.req.raw.headers, c.req.valid('param').id)), 200));
  app.openapi(refundHeld, async (c) => {
    const credit = await access.refund(await access.heldBy(c.req.raw.headers, c.req.valid('param').id));
    return credit.status === 'refunded' ? c.json(presentCredit(credit), 200) : c.json(presentCredit(credit), 202);
  });
  app.openapi({ ...billedCredits, middleware }, async (c) => {
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const { rows, total } = await access.billedTo(c.var.caller, id, query);
    return c.json({ employer_id: id, credits: rows.map(presentCredit), page: query.page, limit: query.limit, total }, 200);
  });
  app.openapi({ ...refundBilled, middleware }, async (c) => {
    const { id, creditId } = c.req.valid('param');
    const credit = await access.refund(await access.billed(c.var.caller, id, creditId));
    return credit.status === 'refunded' ? c.json(presentCredit(credit), 200) : c.json(presentCredit(credit), 202);
  });
  return app;
}

function presentCredit(row: CardCreditRow) {
  return {
    id: row.id,
    route: row.route,
    status: row.status,
    funded_usd: formatUsd(row.funded),
    drawn_usd: formatUsd(row.funded - row.remaining - row.refunded),
    remaining_usd: formatUsd(row.remaining),
    refunded_usd: formatUsd(row.refunded),
    payment_intent: row.paymentIntent,
    created_at: row.createdAt.toISOString(),
    refunded_at: row.refundedAt?.toISOString() ?? null,
  };
}
