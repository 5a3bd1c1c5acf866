import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { Db } from '../db/client.js';
import { crashPoint } from '../faults.js';
import type { AppEnv } from '../http/context.js';
import { formatUsd } from '../money.js';
import { paymentContext } from './attribution.js';
import { readPaymentProof, type PaymentProof } from './carriers.js';
import type { SessionCall } from './mpp/session.js';
import { routeName, type PaidRoute, type Rail, type RouteEffect } from './prices.js';
import type { PaymentRefunds } from './refunds.js';
import {
  claimProof,
  findClaim,
  holdingLease,
  markOutcomeUnknown,
  markServed,
  recordSettlement,
  releaseClaim,
  takeOverSettled,
  voidClaim,
  type ClaimRow,
  type PaymentRail,
  type Settlement,
  type SettledHook,
} from './store.js';
import type { PaymentTrace } from './trace.js';
import type { DiscoveryExtensions } from './x402/discovery.js';

/** A proof a rail has checked: ready to claim and to settle. */
export interface VerifiedPayment {
  rail: PaymentRail;
  network: string;
  /** Unique per payment (tx hash, authorization nonce, signature): claimed before the handler. */
  proofKey: string;
  payer: string | null;
  asset: string | null;
  /**
   * Money already moved when the proof was verified (a pushed transaction, a card charge): it is
   * settled before the handler on every route, and refunded if the handler fails.
   */
  prepaid?: boolean;
  /** What finds this payment again after a crash (kept with the claim; the adapter's `lookup` reads it). */
  trace: PaymentTrace;
  /** Moves the money (or confirms it moved). */
  settle(): Promise<SettlementOutcome>;
}

export type SettlementOutcome =
  | ({ state: 'settled' } & Settlement)
  /** The chain refused it: nothing moved and nothing will. */
  | { state: 'refused'; reason: string }
  /** We cannot tell whether it moved (timeout, lost connection): never answer 402 then. */
  | { state: 'unknown'; reason: string; reference: string | null };

/** What the chain or the processor says of a payment the service lost track of (the reconciler asks). */
export type PaymentLookup =
  /** The money moved. */
  | { state: 'landed'; reference: string | null }
  /** It did not, and never can (expired, refused). */
  | { state: 'absent'; reason: string }
  /** Not yet, but it still could. */
  | { state: 'pending' };

/**
 * A refusal names the proof's key when it is known: a proof already spent fails verification (its
 * nonce is used on chain), and the payer should hear that it was already used.
 */
export type Verification = { ok: true; payment: VerifiedPayment } | { ok: false; reason: string; proofKey?: string };

/** One protocol family's part of the gate: its 402 offer and its proofs. */
export interface PaymentRailAdapter {
  /** Which rails of a route this adapter serves. */
  rails: readonly Rail[];
  /** What goes into a 402 for this route: headers and, for x402 v1 clients, body `accepts`. `discovery`: the route's x402 discovery metadata. */
  offer(route: PaidRoute, request: Request, discovery?: DiscoveryExtensions): Promise<{ headers: [string, string][]; accepts?: readonly unknown[] }>;
  /** Checks a proof this adapter understands, without moving money. */
  verify(route: PaidRoute, proof: PaymentProof, request: Request): Promise<Verification>;
  /** Whether this adapter reads this kind of proof. */
  accepts(proof: PaymentProof): boolean;
  /** Whether a payment this adapter verified (its trace, and the reference if one was recorded) moved money. */
  lookup(trace: PaymentTrace, reference: string | null): Promise<PaymentLookup>;
  /** Payments through a session (MPP payment channels), charged per call or per tick. */
  session?: {
    accepts(proof: PaymentProof): proof is Extract<PaymentProof, { kind: 'mpp' }>;
    serve(call: SessionCall): Promise<Response | void>;
  };
}

export interface PaymentGateDeps {
  db: Db;
  adapters: PaymentRailAdapter[];
  refunds: PaymentRefunds;
  /** How long a claim outlives a request that stopped renewing it (a crash) before it counts as abandoned. */
  leaseSeconds: number;
  onSettled?: SettledHook | undefined;
}

/** Headers that decide what a paid request does besides its method, URL and body (a redemption must repeat them). */
const BOUND_HEADERS = ['x-agent-identifier', 'x-agent-timestamp', 'x-agent-signature', 'x-identity-token', 'x-agent-key', 'idempotency-key'];
/** How long a failed call's response waits for its refund before leaving it to the reconciler. */
const INLINE_REFUND_MS = 15_000;

/**
 * The outermost middleware of a paid route: without a valid, unused proof the caller gets the 402
 * (before any validation). With one, the proof is claimed, then (docs/decisions.md, "Charge before acting"):
 * - `acts` routes (and prepaid proofs) settle first: a fee that does not settle answers 402 and
 *   nothing happens; the handler runs after, and a 5xx gets the fee refunded;
 * - `reads` routes run the handler first and settle after an answer below 500; a settlement that
 *   fails withholds the answer; a 5xx releases the proof unspent.
 * A settled payment whose answer was lost is served once when the same proof and request come back.
 */
export function paymentGate(deps: PaymentGateDeps): (route: PaidRoute, discovery?: DiscoveryExtensions) => MiddlewareHandler<AppEnv> {
  return (route, discovery) => async (c, next) => {
    const proof = readPaymentProof(c.req.raw);
    const adapters = deps.adapters.filter((a) => a.rails.some((rail) => route.rails.includes(rail)));
    const call: GateCall = { deps, c, next, route, adapters, discovery };
    if (proof.kind === 'none') return refuse(call, 'PAYMENT_REQUIRED', `This route costs ${priceText(route)}.`);
    if (proof.kind === 'malformed') return refuse(call, 'PAYMENT_INVALID', `The payment proof is malformed: ${proof.reason}.`);
    const adapter = adapters.find((a) => a.accepts(proof));
    if (!adapter) return refuse(call, 'PAYMENT_RAIL_NOT_ACCEPTED', `This route accepts rail ${route.rails.join(', ')} only.`);

    if (adapter.session?.accepts(proof)) {
      if (route.unit === 'charge') return refuse(call, 'PAYMENT_INVALID', 'This route takes single charges, not MPP session credentials.');
      // A channel's signed cumulative amount bounds what it can ever be charged, and a call is
      // charged against it before its handler: no proof claim, nothing acts unpaid.
      return adapter.session.serve({
        c,
        route,
        proof,
        next,
        refuse: (code, reason) => refuse(call, code, `The session payment was refused: ${reason}.`),
      });
    }
    return servePaidCall(call, adapter, proof);
  };
}

/** One paid request as the gate handles it: the gate's dependencies, the request, and the route's adapters. */
interface GateCall {
  deps: PaymentGateDeps;
  c: Context<AppEnv>;
  next: Next;
  route: PaidRoute;
  adapters: PaymentRailAdapter[];
  discovery: DiscoveryExtensions | undefined;
}

/** What a claim binds a proof to: the proof itself and the request it paid for. */
interface Bound {
  proofHash: string;
  requestHash: string;
}

/** Work done while holding the claim's lease (renewed so a live request is never taken for a crash). */
function leased<T>(deps: PaymentGateDeps, paymentId: string, work: () => Promise<T>): Promise<T> {
  return holdingLease(deps.db, paymentId, deps.leaseSeconds, work);
}

/** The 402 for this call's route, with every adapter's offer. */
function refuse(call: GateCall, code: string, message: string, extraHeaders: Record<string, string> = {}): Promise<Response> {
  return paymentRequired(call, code, message, extraHeaders);
}

/** A single-charge proof: verified, claimed, then settled before or after the handler by the route's effect. */
async function servePaidCall(call: GateCall, adapter: PaymentRailAdapter, proof: Exclude<PaymentProof, { kind: 'none' | 'malformed' }>) {
  const { deps, c, route } = call;
  const { db, leaseSeconds } = deps;
  const bound: Bound = { proofHash: proofHashOf(proof), requestHash: await requestHashOf(c) };

  const verification = await adapter.verify(route, proof, c.req.raw);
  if (!verification.ok) {
    const earlier = (await findClaim(db, { proofHash: bound.proofHash })) ?? (verification.proofKey ? await findClaim(db, { proofKey: verification.proofKey }) : null);
    if (earlier) return answerEarlier(call, bound, earlier);
    return refuse(call, 'PAYMENT_INVALID', verification.reason);
  }
  const { payment } = verification;
  const paymentId = await claimProof(
    db,
    {
      proofKey: payment.proofKey,
      rail: payment.rail,
      network: payment.network,
      route: routeName(route),
      payer: payment.payer,
      amount: route.price,
      asset: payment.asset,
      requestId: c.var.requestId,
      trace: payment.trace,
      ...bound,
    },
    leaseSeconds,
  );
  if (!paymentId) return answerEarlier(call, bound, await findClaim(db, { proofKey: payment.proofKey }));

  if (payment.prepaid || (await effectOf(route, c)) === 'acts') {
    const outcome = await leased(deps, paymentId, () => settleSafely(payment));
    if (outcome.state !== 'settled') return unsettled(call, paymentId, outcome, null);
    crashPoint('payment.after-settle');
    await recordSettlement(db, paymentId, outcome);
    crashPoint('payment.before-handler');
    return serveSettled(call, paymentId, outcome.headers, false);
  }
  return serveThenSettle(call, paymentId, payment);
}

/** A proof someone presented before: its lost answer served once, or a refusal. */
async function answerEarlier(call: GateCall, bound: Bound, earlier: ClaimRow | null) {
  const { deps, c } = call;
  if (earlier?.status === 'unknown') return outcomeUnknown(c, earlier.id);
  if (earlier?.status === 'settled' && earlier.proofHash === bound.proofHash && earlier.requestHash === bound.requestHash) {
    const taken = await takeOverSettled(deps.db, earlier.id, deps.leaseSeconds);
    if (taken) return serveSettled(call, taken.id, taken.settlement?.headers ?? {}, true);
    return refuse(call, 'PAYMENT_ALREADY_USED', 'This payment proof is paying for a call still being answered.', {
      'Retry-After': String(deps.leaseSeconds),
    });
  }
  return refuse(call, 'PAYMENT_ALREADY_USED', 'This payment proof has already been used.');
}

/** An `acts` call (or a redemption) after its fee settled: run the handler; a 5xx refunds the fee. */
async function serveSettled(call: GateCall, paymentId: string, receiptHeaders: Record<string, string>, redeemed: boolean) {
  const { deps, c, next } = call;
  const fee = paymentContext(paymentId, redeemed);
  c.set('payment', fee.payment);
  const failure = await leased(deps, paymentId, () => runHandler(next));
  if (failure !== null || c.res.status >= 500) {
    await refundFailedCall(call, paymentId, failure === null ? c.res.status : 500);
    if (failure !== null) throw failure.error;
    return;
  }
  crashPoint('payment.before-served');
  const kept = await markServed(deps.db, paymentId, { httpStatus: c.res.status, employerId: fee.attributedTo() }, deps.onSettled);
  // Never expected while this request holds the lease: worth a look if it ever happens.
  if (!kept) c.var.log.error({ paymentId }, 'a served payment was no longer settled');
  for (const [name, value] of Object.entries(receiptHeaders)) c.res.headers.set(name, value);
}

/** A `reads` call: the handler answers first, then the fee settles (or the answer is withheld). */
async function serveThenSettle(call: GateCall, paymentId: string, payment: VerifiedPayment) {
  const { deps, c, next } = call;
  const fee = paymentContext(paymentId, false);
  c.set('payment', fee.payment);
  const failure = await leased(deps, paymentId, () => runHandler(next));
  if (failure !== null || c.res.status >= 500) {
    // Nothing moved: the proof goes back unspent, and may be presented again.
    await releaseClaim(deps.db, paymentId);
    if (failure !== null) throw failure.error;
    return;
  }
  const status = c.res.status;
  const outcome = await leased(deps, paymentId, () => settleSafely(payment));
  if (outcome.state !== 'settled') {
    c.res = await unsettled(call, paymentId, outcome, status);
    return;
  }
  await markServed(deps.db, paymentId, { httpStatus: status, employerId: fee.attributedTo(), settlement: outcome }, deps.onSettled);
  for (const [name, value] of Object.entries(outcome.headers)) c.res.headers.set(name, value);
}

/** A settled fee whose call failed goes back to the payer: now if it can, else by the reconciler. */
async function refundFailedCall(call: GateCall, paymentId: string, httpStatus: number) {
  const { deps, c } = call;
  let timer: NodeJS.Timeout | undefined;
  const refunded = await Promise.race([
    deps.refunds.start(paymentId, 'request', httpStatus, `the call answered ${httpStatus}`),
    new Promise<'later'>((resolve) => (timer = setTimeout(resolve, INLINE_REFUND_MS, 'later'))),
  ])
    .catch((error: unknown) => {
      c.var.log.error({ err: error, paymentId }, 'fee refund failed; the reconciler retries it');
      return 'later' as const;
    })
    .finally(() => clearTimeout(timer));
  if (refunded === null) return; // resolved by someone else
  if (c.res.status >= 500) c.res.headers.set('Payment-Refund', refunded === 'later' || refunded.state !== 'refunded' ? 'pending' : refunded.reference);
}

/** A settlement that did not happen: voided (402, nothing moved) or unknown (502, never 402). */
async function unsettled(
  call: GateCall,
  paymentId: string,
  outcome: Exclude<SettlementOutcome, { state: 'settled' }>,
  httpStatus: number | null,
): Promise<Response> {
  const { deps, c } = call;
  if (outcome.state === 'refused') {
    await voidClaim(deps.db, paymentId, httpStatus);
    return refuse(call, 'PAYMENT_SETTLEMENT_FAILED', `The payment could not be settled: ${outcome.reason}.`);
  }
  await markOutcomeUnknown(deps.db, paymentId, httpStatus, outcome.reference);
  c.var.log.error({ paymentId, reason: outcome.reason }, 'payment settlement outcome unknown');
  return outcomeUnknown(c, paymentId);
}

/** Runs the handler; a throw is returned, not raised (the gate answers for the fee first). */
async function runHandler(next: Next): Promise<{ error: unknown } | null> {
  try {
    await next();
    return null;
  } catch (error) {
    return { error };
  }
}

/** A settlement that throws has an unknown outcome: it may have reached the chain. */
function settleSafely(payment: VerifiedPayment): Promise<SettlementOutcome> {
  return payment.settle().catch(
    (error: unknown): SettlementOutcome => ({ state: 'unknown', reason: error instanceof Error ? error.message : String(error), reference: null }),
  );
}

/** Whether this call acts: the route's effect, or for a route with acting actions, its body's `action`. */
async function effectOf(route: PaidRoute, c: Context<AppEnv>): Promise<RouteEffect> {
  if (!route.actingActions) return route.effect;
  const body = (await c.req.json().catch(() => null)) as { action?: unknown } | null;
  return typeof body?.action === 'string' && route.actingActions.includes(body.action) ? 'acts' : route.effect;
}

const sha256 = (...parts: (string | Uint8Array)[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\n');
  return hash.digest('hex');
};

function proofHashOf(proof: Exclude<PaymentProof, { kind: 'none' | 'malformed' }>): string {
  if (proof.kind === 'credit') return sha256('credit', proof.creditId, proof.nonce);
  return sha256(proof.kind === 'mpp' ? proof.authorization : JSON.stringify(proof.payload));
}

/** The request a proof paid for: method, path and query, body, and the headers that change what it does. */
async function requestHashOf(c: Context<AppEnv>): Promise<string> {
  const url = new URL(c.req.url);
  const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? new Uint8Array() : new Uint8Array(await c.req.arrayBuffer());
  return sha256(c.req.method, url.pathname + url.search, ...BOUND_HEADERS.map((name) => `${name}:${c.req.header(name) ?? ''}`), body);
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
async function paymentRequired({ c, route, adapters, discovery }: GateCall, code: string, message: string, extraHeaders: Record<string, string> = {}): Promise<Response> {
  const offers = await Promise.all(adapters.map((a) => a.offer(route, c.req.raw, discovery)));
  const headers: Record<string, string[]> = { 'Cache-Control': ['no-store'], 'Content-Type': ['application/json'] };
  for (const [name, value] of Object.entries(extraHeaders)) headers[name] = [value];
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
