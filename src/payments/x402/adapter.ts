import { encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRailAdapter, SettlementOutcome } from '../gate.js';
import type { PaidRoute } from '../prices.js';
import type { X402Offer, X402Rail, X402Rails } from './rails.js';

/**
 * Rails B and C in the gate: the 402 carries `PAYMENT-REQUIRED` (v2) and the v1 body `accepts`; a
 * `PAYMENT-SIGNATURE` or `X-PAYMENT` payload is paired with the route's own requirements (never
 * the client's copy), verified by the facilitator, and settled after the handler.
 */
export function x402Rail(rails: X402Rails, publicBaseUrl: string): PaymentRailAdapter {
  const offerFor = (route: PaidRoute, request: Request): X402Offer => {
    const url = new URL(request.url);
    return {
      amountUnits: route.price,
      resourceUrl: `${publicBaseUrl}${url.pathname}${url.search}`,
      description: route.summary,
      mimeType: route.unit === 'tick' ? 'text/event-stream' : 'application/json',
      rails: route.rails.filter((rail): rail is X402Rail => rail === 'B' || rail === 'C'),
    };
  };

  return {
    rails: ['B', 'C'],
    accepts: (proof) => proof.kind === 'x402',

    async offer(route, request) {
      const required = await rails.paymentRequired(offerFor(route, request));
      return { headers: [['PAYMENT-REQUIRED', required.header]], accepts: required.accepts };
    },

    async verify(route, proof, request) {
      if (proof.kind !== 'x402') return { ok: false, reason: 'not an x402 payment' };
      const matched = rails.match(proof.payload, await rails.requirements(offerFor(route, request)));
      if (!matched.ok) return { ok: false, reason: matched.reason };
      const { payload, requirement } = matched;
      const proofKey = rails.proofKey(payload);
      const verdict = await rails.verify(payload, requirement);
      if (!verdict.isValid) {
        return { ok: false, proofKey, reason: [verdict.invalidReason, verdict.invalidMessage].filter(Boolean).join(': ') || 'the payment is invalid' };
      }
      // v1 clients read X-PAYMENT-RESPONSE; v2 clients PAYMENT-RESPONSE.
      const responseHeader = matched.version === 1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE';
      const rail: X402Rail = requirement.network === rails.networks.B ? 'B' : 'C';
      return {
        ok: true,
        payment: {
          rail,
          network: requirement.network,
          proofKey,
          payer: verdict.payer ?? null,
          asset: requirement.asset,
          async settle(): Promise<SettlementOutcome> {
            const settlement = await rails.settle(payload, requirement);
            const { response } = settlement;
            if (settlement.outcome === 'settled') {
              return {
                state: 'settled',
                reference: response.transaction || null,
                payer: response.payer ?? verdict.payer ?? null,
                headers: { [responseHeader]: encodePaymentResponseHeader(response) },
                receipt: { ...response },
              };
            }
            const reason = [response.errorReason, response.errorMessage].filter(Boolean).join(': ');
            if (settlement.outcome === 'refused') return { state: 'refused', reason };
            return { state: 'unknown', reason, reference: response.transaction || null };
          },
        },
      };
    },
  };
}
