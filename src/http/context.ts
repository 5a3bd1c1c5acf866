import type { PaidCaller } from './paid-caller.js';
import type { Logger } from '../log.js';

/** Who is calling an internal route, resolved from the identity-provider JWT (spec 5.3). */
export interface Caller {
  userId: string;
  email: string | null;
  isPlatformAdmin: boolean;
  /** The employer this user owns, if any (one per owner). */
  ownedEmployerId: string | null;
  /** Employee records linked to this user, across employers. */
  employeeIds: string[];
}

/** The fee payment behind a paid request (set by the payment gate before the handler runs). */
export interface PaymentContext {
  /** The `payments` row of a single charge, or the channel id of a session payment. */
  id: string;
  /**
   * True when this call serves a payment settled earlier whose answer was lost (a crash, a timeout)
   * and whose proof came back: a handler that acts finds what it did under `id` before acting again.
   */
  redeemed: boolean;
  /**
   * Puts this payment on behalf of an employer the handler has checked (e.g. an agent authorised
   * for it): the receipt then shows in that employer's history.
   */
  attribute(employerId: string): void;
}

/** What a service that acts needs of the fee behind its call: the payment id, and whether it is redeemed. */
export type FeePayment = Pick<PaymentContext, 'id' | 'redeemed'>;

export interface AppEnv {
  Variables: {
    requestId: string;
    log: Logger;
    caller: Caller;
    /** Who is behind a paid call (set by `requirePaidCaller`). */
    paidCaller: PaidCaller;
    payment: PaymentContext;
  };
}
