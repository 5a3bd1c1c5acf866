import { stripe } from 'mppx/server';
import type { CardRail } from '../mpp/rail.js';

/** Live card fallback: mppx's stripe method with the account's secret key; refunds through Stripe's API. */
export function stripeCardRail(options: { secretKey: string; networkId: string }): CardRail {
  return {
    method: stripe.charge({ secretKey: options.secretKey, networkId: options.networkId, paymentMethodTypes: ['card'] }) as never,
    networkId: options.networkId,
    async refund(paymentIntentId) {
      const response = await fetch('https://api.stripe.com/v1/refunds', {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${options.secretKey}:`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Idempotency-Key': `refund_${paymentIntentId}`,
        },
        body: new URLSearchParams({ payment_intent: paymentIntentId }),
      });
      if (!response.ok) throw new Error(`Stripe refund of ${paymentIntentId} failed with ${response.status}`);
    },
  };
}
