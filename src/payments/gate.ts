import type { Context, MiddlewareHandler } from 'hono';
import type { Db } from '../db/client.js';
import type { AppEnv } from '../http/context.js';
import { formatUsd } from '../money.js';
import { readPaymentProof, type PaymentProof } from './carriers.js';
import type { SessionCall } from './mpp/session.js';
import type { PaidRoute, Rail } from './prices.js';
import { claimProof, findClaim, markOutcomeUnknown, recordSettlement, releaseClaim, voidClaim, type PaymentRail } from './store.js';

/** A proof a rail has checked: ready to claim, and to settle once the handler has answered. */
export interface VerifiedPayment {
  rail: PaymentRail;
  network: string;
  /** Unique per payment (tx hash, authorization nonce, signature): claimed before the handler. */
  proofKey: string;
  payer: string | null;
  asset: string | null;
  /** Moves the money (or confirms it moved). */
  settle(): Promise<SettlementOutcome>;
  /** Undoes what verification already moved (a card charge) when the handler failed. */
  abandon?(): Promise<void>;
}

export type SettlementOutcome =
  | { state: 'settled'; reference: string | null; payer: string | null; headers: Record<string, string>; receipt: Record<string, unknown> }
  /** The chain refused it: nothing moved and nothing will. */
  | { state: 'refused'; reason: string }
  /** We cannot tell whether it moved (timeout, lost connection): never answer 402 then. */
  | { state: 'unknown'; reason: string; reference: string | null };

/**
 * A refusal names the proof's key when it is known: a proof already spent fails verification (its
 * nonce is used on chain), and the payer should hear that it was already used.
 */
export type Verification = { ok: true; payment: VerifiedPayment } | { ok: false; reason: string; proofKey?: string };

/** One protocol family's part of the gate: its 402 offer and its proofs. */
export interface PaymentRailAdapter {
  /** Which rails of a route this adapter serves. */
  rails: readonly Rail[];
  /** What goes into a 402 for this route: headers and, for x402 v1 clients, body `accepts`. */
  offer(route: PaidRoute, request: Request): Promise<{ headers: [string, string][]; accepts?: readonly unknown[] }>;
  /** Checks a proof this adapter understands, without moving money. */
  verify(route: PaidRoute, proof: PaymentProof, request: Request): Promise<Verification>;
  /** Whether this adapter reads this kind of proof. */
  accepts(proof: PaymentProof): boolean;
  /** Payments through a session (MPP payment channels), charged per call or per tick. */
  session?: {
    accepts(proof: PaymentProof): proof is Extract<PaymentProof, { kind: 'mpp' }>;
    serve(call: SessionCall): Promise<Response | void>;
  };
}

export interface PaymentGateDeps {
  db: Db;
  adapters: PaymentRailAdapter[];
}

/**
 * The outermost middleware of a paid route: without a valid, unused proof the caller gets the 402
 * (before any validation); with one, the proof is claimed, the handler runs, and the payment is
 * settled only when the handler answered below 500 (spec 4.1.7: a 403 keeps the fee).
 */
export function paymentGate(deps: PaymentGateDeps): (route: PaidRoute) => MiddlewareHandler<AppEnv> {
  return (route) => async (c, next) => {
    const proof = readPaymentProof(c.req.raw);
    const adapters = deps.adapters.filter((a) => a.rails.some((rail) => route.rails.includes(rail)));
    if (proof.kind === 'none') return paymentRequired(c, route, adapters, 'PAYMENT_REQUIRED', `This route costs ${priceText(route)}.`);
    if (proof.kind === 'malformed') return paymentRequired(c, route, adapters, 'PAYMENT_INVALID', `The payment proof is malformed: ${proof.reason}.`);
    const adapter = adapters.find((a) => a.accepts(proof));
    if (!adapter) {
      return paymentRequired(c, route, adapters, 'PAYMENT_RAIL_NOT_ACCEPTED', `This route accepts rail ${route.rails.join(', ')} only.`);
    }

    if (adapter.session?.accepts(proof)) {
      if (route.unit === 'charge') {
        return paymentRequired(c, route, adapters, 'PAYMENT_INVALID', 'This route takes single charges, not MPP session credentials.');
      }
      // A channel's signed cumulative amount bounds what it can ever be charged: no proof claim.
      return adapter.session.serve({
        c,
        route,
        proof,
        next,
        refuse: (code, reason) => paymentRequired(c, route, adapters, code, `The session payment was refused: ${reason}.`),
      });
    }

    const verification = await adapter.verify(route, proof, c.req.raw);
    if (!verification.ok) {
      const earlier = verification.proofKey ? await findClaim(deps.db, verification.proofKey) : null;
      if (earlier) return alreadyClaimed(c, route, adapters, earlier);
      return paymentRequired(c, route, adapters, 'PAYMENT_INVALID', verification.reason);
    }
    const { payment } = verification;
    const paymentId = await claimProof(deps.db, {
      proofKey: payment.proofKey,
      rail: payment.rail,
      network: payment.network,
      route: `${route.method} ${route.path}`,
      payer: payment.payer,
      amount: route.price,
      asset: payment.asset,
      requestId: c.var.requestId,
    });
    if (!paymentId) return alreadyClaimed(c, route, adapters, await findClaim(deps.db, payment.proofKey));

    const context = { id: paymentId, employerId: null as string | null };
    c.set('payment', context);
    try {
      await next();
    } catch (error) {
      await releaseClaim(deps.db, paymentId);
      await payment.abandon?.();
      throw error;
    }
    const status = c.res.status;
    if (status >= 500) {
      // Not charged: the proof goes back unspent, and may be presented again.
      await releaseClaim(deps.db, paymentId);
      await payment.abandon?.();
      return;
    }

    const outcome = await payment.settle().catch((error: unknown): SettlementOutcome => ({
      state: 'unknown',
      reason: error instanceof Error ? error.message : String(error),
      reference: null,
    }));
    if (outcome.state === 'settled') {
      await recordSettlement(deps.db, paymentId, {
        reference: outcome.reference,
        payer: outcome.payer ?? payment.payer,
        httpStatus: status,
        receipt: outcome.receipt,
        employerId: context.employerId,
      });
      for (const [name, value] of Object.entries(outcome.headers)) c.res.headers.set(name, value);
      return;
    }
    if (outcome.state === 'refused') {
      await voidClaim(deps.db, paymentId, status);
      c.res = await paymentRequired(c, route, adapters, 'PAYMENT_SETTLEMENT_FAILED', `The payment could not be settled: ${outcome.reason}.`);
      return;
    }
    await markOutcomeUnknown(deps.db, paymentId, status, outcome.reference);
    c.var.log.error({ paymentId, reason: outcome.reason }, 'payment settlement outcome unknown');
    c.res = outcomeUnknown(c, paymentId);
  };
}

/** A proof someone already presented: used (402), or of unknown outcome (502: it may have paid). */
function alreadyClaimed(c: Context<AppEnv>, route: PaidRoute, adapters: PaymentRailAdapter[], earlier: { id: string; status: string } | null) {
  if (earlier?.status === 'unknown') return outcomeUnknown(c, earlier.id);
  return paymentRequired(c, route, adapters, 'PAYMENT_ALREADY_USED', 'This payment proof has already been used.');
}

function outcomeUnknown(c: Context<AppEnv>, paymentId: string): Response {
  return c.json(
    {
      error: 'The payment was submitted but its outcome is not known yet; do not pay again.',
      code: 'PAYMENT_OUTCOME_UNKNOWN',
      payment_id: paymentId,
    },
    502,
    { 'Cache-Control': 'no-store' },
  );
}

function priceText(route: PaidRoute): string {
  const per = route.unit === 'tick' ? ' per tick' : route.unit === 'session' ? ' per session' : '';
  return `${formatUsd(route.price)} USD${per} (rails ${route.rails.join(', ')})`;
}

/** The 402: every adapter's offer in headers, and one JSON body for every kind of client. */
async function paymentRequired(
  c: Context<AppEnv>,
  route: PaidRoute,
  adapters: PaymentRailAdapter[],
  code: string,
  message: string,
): Promise<Response> {
  const offers = await Promise.all(adapters.map((a) => a.offer(route, c.req.raw)));
  const headers: Record<string, string[]> = { 'Cache-Control': ['no-store'], 'Content-Type': ['application/json'] };
  for (const offer of offers) for (const [name, value] of offer.headers) (headers[name] ??= []).push(value);
  const accepts = offers.flatMap((o) => o.accepts ?? []);
  const body = {
    error: message,
    code,
    price: formatUsd(route.price),
    currency: 'USD',
    unit: route.unit,
    rails: route.rails,
    ...(accepts.length > 0 ? { x402Version: 1, accepts } : {}),
  };
  // Through the context, so the headers middleware already set join without a second Response.
  return c.body(JSON.stringify(body), 402, headers);
}
