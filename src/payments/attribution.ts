import type { PaymentContext } from '../http/context.js';

/**
 * The `c.var.payment` of a paid call, and the employer its handler attributed it to: read once the
 * handler has run, for the payment's row.
 */
export function paymentContext(id: string, redeemed: boolean): { payment: PaymentContext; attributedTo: () => string | null } {
  let employerId: string | null = null;
  const attribute = (checked: string) => {
    employerId = checked;
  };
  return { payment: { id, redeemed, attribute }, attributedTo: () => employerId };
}
