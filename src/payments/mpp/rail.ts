import { Challenge, Credential, Errors, Receipt, type Method } from 'mppx';
import { Mppx } from 'mppx/server';
import type { Address, Hex, PublicClient } from 'viem';
import { z } from 'zod';
import { formatUsd } from '../../money.js';
import type { Db } from '../../db/client.js';
import type { PaymentProof } from '../carriers.js';
import type { PaymentLookup, PaymentRailAdapter, SettlementOutcome, Verification } from '../gate.js';
import { cardAmount, routeOffers } from '../offers.js';
import { routeName, type PaidRoute } from '../prices.js';
import type { PaymentTrace } from '../trace.js';
import { CREDIT_HEADER, type CardCredits, type RefundCard } from '../card/credit.js';
import { isChallengeBoundMemo, reasonOf, transferWithMemoEvent } from './embedded-tempo-charge.js';
import { isSessionProof, serveSessionCall, sessionRequest, type SessionRail } from './session.js';

/**
 * Rail A (MPP on Tempo) and the card fallback, through mppx: mppx issues the challenges and checks
 * every credential (HMAC binding to this server, the route's amount and recipient, expiry). A Tempo
 * payment is validated without moving money and broadcast when the gate settles it; a pushed
 * payment and the card have moved the money by the time they are verified (prepaid).
 */

/**
 * The Tempo charge method: its `validate` checks a payment without moving money (run before the
 * handler), its `broadcast` moves it (run after the handler answered below 500).
 */
export interface TempoChargeRail {
  method: Method.AnyServer;
  network: string;
  currency: Address;
  /** Reads the chain (to find a payment again after a crash). */
  client: PublicClient;
  /** How far back to look for a lost payment's transfer; undefined: from genesis (the embedded chain). */
  lookbackBlocks?: bigint;
  /** Who pays, once validation passed. */
  payerOf(credential: Credential.Credential, validation: Method.Validation): Promise<Address>;
}

/** The card processor behind mppx's stripe method: it charges at verification, so it can refund. */
export interface CardRail {
  method: Method.AnyServer;
  /** Stripe's network id for the challenge (`methodDetails.networkId`). */
  networkId: string;
  /** Gives a charge back, all of it or `part`; idempotent per charge (per part: its key). */
  refund: RefundCard;
}

export interface MppRailOptions {
  secretKey: string;
  realm: string;
  /** The service's Tempo wallet: every rail A payment goes there. */
  recipient: Address;
  tempo: TempoChargeRail;
  /** Absent: no card offer (live mode without a Stripe key). */
  card?: { rail: CardRail; credits: CardCredits } | undefined;
  /** MPP sessions, for the routes billed per tick or per session. */
  session: SessionRail;
  db: Db;
}

/** How long a challenge may be answered (mppx's own default). */
const CHALLENGE_TTL_MS = 5 * 60_000;
/** After its challenge expired, how long a broadcast already under way may still take to land. */
const LANDING_GRACE_MS = 60_000;

export function mppRail(options: MppRailOptions): PaymentRailAdapter {
  const { tempo, card, session } = options;
  const mppx = createMppx(options);
  type ChallengeFn = (options: Record<string, unknown>) => Promise<Challenge.Challenge>;
  const issue = mppx.challenge as unknown as Record<string, { charge: ChallengeFn; session: ChallengeFn }>;
  const sessionHandler = sessionHandlers(mppx, options.recipient);
  const uniqueExpiry = expiryClock();

  return {
    rails: ['A'],
    accepts: (proof) => proof.kind === 'mpp' || proof.kind === 'credit',

    async offer(route) {
      const expires = uniqueExpiry();
      const challenges: Challenge.Challenge[] = [];
      const { mppIntents } = routeOffers(route, { card: card !== undefined });
      if (mppIntents.includes('session')) {
        challenges.push(await issue.tempo!.session({ ...sessionRequest(route, options.recipient), expires }));
      }
      if (mppIntents.includes('charge')) {
        challenges.push(await issue.tempo!.charge({ ...tempoRequest(options, route), description: route.summary, expires, scope: scopeOf(route) }));
      }
      const cardOffer = cardRequest(card?.rail, route);
      if (cardOffer) challenges.push(await issue.stripe!.charge({ ...cardOffer, expires, scope: scopeOf(route) }));
      return { headers: [['WWW-Authenticate', challenges.map((c) => Challenge.serialize(c)).join(', ')]] };
    },

    lookup: (trace) => (trace.kind === 'card-credit' ? lookupDraw(card?.credits, trace) : lookupPayment(tempo, trace)),

    session: {
      accepts: isSessionProof,
      serve: (call) => serveSessionCall({ db: options.db, store: session.store, handler: sessionHandler(call.route) }, call),
    },

    async verify(route, proof: PaymentProof, request): Promise<Verification> {
      if (proof.kind === 'credit') {
        // The credit itself says which route it pays for.
        if (!card) return { ok: false, reason: 'this route offers no card credit' };
        return card.credits.verifyDraw(route, proof.creditId, request, `card-credit:${proof.creditId}:${proof.nonce}`);
      }
      if (proof.kind !== 'mpp') return { ok: false, reason: 'not an MPP credential' };
      if (route.unit === 'tick') return { ok: false, reason: 'this route is billed per tick: pay it through an MPP session (intent "session")' };
      let credential: Credential.Credential;
      try {
        credential = Credential.deserialize(Credential.extractPaymentScheme(proof.authorization) ?? '');
      } catch {
        return { ok: false, reason: 'the Payment credential cannot be decoded' };
      }
      if (credential.challenge.method === 'stripe') return verifyCard(mppx, card, route, credential, request);
      return verifyTempo(mppx, options, route, credential);
    },
  };
}

function createMppx(options: MppRailOptions) {
  const { tempo, card, session } = options;
  return Mppx.create({
    methods: [tempo.method, session.method, ...(card ? [card.rail.method] : [])],
    secretKey: options.secretKey,
    realm: options.realm,
  });
}

type MppxServer = ReturnType<typeof createMppx>;
type SessionHandler = Parameters<typeof serveSessionCall>[0]['handler'];

/** Each route's mppx session handler, made on its first session call and kept. */
function sessionHandlers(mppx: MppxServer, recipient: Address): (route: PaidRoute) => SessionHandler {
  const handlers = new Map<PaidRoute, SessionHandler>();
  return (route) => {
    let handler = handlers.get(route);
    if (!handler) {
      const create = (mppx as unknown as { tempo: { session(options: Record<string, unknown>): SessionHandler } }).tempo.session;
      handlers.set(route, (handler = create(sessionRequest(route, recipient))));
    }
    return handler;
  };
}

/**
 * A challenge id is an HMAC of its content, expiry included (to the millisecond): a strictly
 * increasing expiry makes every challenge this process issues unique, so one payer's concurrent
 * 402s never share a challenge (and a credential per challenge and payer pays once).
 */
function expiryClock(): () => string {
  let lastExpiry = 0;
  return () => {
    // Real time, not the service clock: mppx checks the expiry against the real time, as the payer's client does.
    lastExpiry = Math.max(Date.now() + CHALLENGE_TTL_MS, lastExpiry + 1);
    return new Date(lastExpiry).toISOString();
  };
}

/**
 * The route a charge challenge is for, bound into its opaque part: a credential made for one
 * route never pays for another, even at the same price to the same recipient.
 */
const scopeOf = routeName;

/**
 * What the route asks a Tempo payment for; mppx binds challenges and credentials to it. The
 * description is not part of it: mppx keeps a challenge's description beside its request, and
 * mppx's own tempo.charge (live mode) refuses a credential whose bound request has one.
 */
const tempoRequest = (options: MppRailOptions, route: PaidRoute) => ({ amount: formatUsd(route.price), recipient: options.recipient });

/** The card charge offered next to it (USD, 2 decimals): the price, or a card credit top-up where the price is below the processor's minimum. */
function cardRequest(card: CardRail | undefined, route: PaidRoute) {
  const offer = routeOffers(route, { card: card !== undefined }).card;
  if (!card || !offer) return null;
  const amount = cardAmount(offer);
  const description = offer.credit
    ? `${route.summary}: a ${amount} USD card credit; this call draws ${formatUsd(route.price)} USD and later calls draw the rest (${CREDIT_HEADER} header)`
    : route.summary;
  return { amount, currency: 'usd', decimals: 2, networkId: card.networkId, paymentMethodTypes: ['card'], description };
}

/** A Tempo credential: HMAC, expiry, the route's amount and recipient, then the method's own checks; nothing moves. */
async function verifyTempo(mppx: MppxServer, options: MppRailOptions, route: PaidRoute, credential: Credential.Credential): Promise<Verification> {
  const { tempo } = options;
  const bound = { request: tempoRequest(options, route), scope: scopeOf(route) };
  let validation: Method.Validation;
  try {
    validation = await mppx.validateCredential(credential, bound);
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal) return { ok: false, reason: refusal };
    throw error;
  }
  const payer = await tempo.payerOf(credential, validation);
  const pushed = (credential.payload as { type?: string; hash?: Hex }).type === 'hash';
  return {
    ok: true,
    payment: {
      rail: 'A',
      network: tempo.network,
      // One service per challenge and payer, whatever the credential type (a push payment and
      // a pull payment for one challenge pay through the same challenge-bound memo).
      proofKey: `mpp:tempo:${credential.challenge.id}:${payer.toLowerCase()}`,
      payer,
      asset: tempo.currency,
      // A pushed transaction paid before it was presented.
      prepaid: pushed,
      trace: tempoTrace(options, route, credential, payer, pushed),
      async settle(): Promise<SettlementOutcome> {
        try {
          const receipt = await mppx.broadcastCredential(credential, bound);
          return { state: 'settled', reference: receipt.reference, payer, headers: receiptHeader(receipt), receipt: { ...receipt } };
        } catch (error) {
          if (error instanceof Errors.PaymentError) return { state: 'refused', reason: reasonOf(error) };
          return { state: 'unknown', reason: error instanceof Error ? error.message : String(error), reference: null };
        }
      },
    },
  };
}

/** What finds a Tempo payment again: a pushed transaction's hash, or the pull payment's challenge-bound transfer. */
function tempoTrace(options: MppRailOptions, route: PaidRoute, credential: Credential.Credential, payer: Address, pushed: boolean): PaymentTrace {
  if (pushed) return { kind: 'tempo-push', hash: (credential.payload as { hash: Hex }).hash };
  return {
    kind: 'tempo-pull',
    payer,
    recipient: options.recipient,
    amount: route.price.toString(),
    realm: credential.challenge.realm,
    challengeId: credential.challenge.id,
    expires: credential.challenge.expires ?? new Date(Date.now() + CHALLENGE_TTL_MS).toISOString(),
  };
}

/**
 * mppx's stripe method charges the card while it verifies (a confirmed PaymentIntent); a 5xx refunds
 * it. A card credit top-up is held for the caller it pays for: one who cannot be told is refused
 * before the card is charged.
 */
async function verifyCard(mppx: MppxServer, card: MppRailOptions['card'], route: PaidRoute, credential: Credential.Credential, request: Request): Promise<Verification> {
  const offer = card && cardRequest(card.rail, route);
  const charge = routeOffers(route, { card: true }).card;
  if (!card || !offer || !charge) return { ok: false, reason: 'this route offers no card payment' };
  const holder = charge.credit ? await card.credits.holderFor(request.headers) : null;
  if (charge.credit && holder === null) return { ok: false, reason: 'a card credit is held for its caller: send X-Identity-Token or X-Agent-Key with the card payment' };
  let receipt: Receipt.Receipt;
  try {
    receipt = await mppx.broadcastCredential(credential, { request: offer, scope: scopeOf(route) });
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal) return { ok: false, reason: refusal };
    throw error;
  }
  const paymentIntent = receipt.reference;
  const network = `stripe:${card.rail.networkId}`;
  const proofKey = `mpp:stripe:${paymentIntent}`;
  if (holder !== null) {
    const topUp = await card.credits.fund({ paymentIntent, network, route, holder, amount: charge.amount });
    return { ok: true, payment: card.credits.drawPayment(topUp, route, proofKey, receiptHeader(receipt)) };
  }
  return {
    ok: true,
    payment: {
      rail: 'card',
      network,
      proofKey,
      payer: null,
      asset: 'usd',
      prepaid: true,
      trace: { kind: 'card', paymentIntent },
      settle: async () => ({ state: 'settled', reference: paymentIntent, payer: null, headers: receiptHeader(receipt), receipt: { ...receipt } }),
    },
  };
}

/** Whether a card credit draw happened: one transaction, so done or never. */
async function lookupDraw(credits: CardCredits | undefined, trace: Extract<PaymentTrace, { kind: 'card-credit' }>): Promise<PaymentLookup> {
  if (!credits) throw new Error('no card rail to look a card credit draw up');
  return (await credits.drew(trace.drawKey)) ? { state: 'landed', reference: trace.paymentIntent } : { state: 'absent', reason: 'the card credit draw never happened' };
}

/** Whether a payment this rail verified moved the money, from the Tempo chain (the card always did). */
async function lookupPayment(tempo: TempoChargeRail, trace: PaymentTrace): Promise<PaymentLookup> {
  if (trace.kind === 'card') return { state: 'landed', reference: trace.paymentIntent };
  if (trace.kind === 'tempo-push') {
    const receipt = await tempo.client.getTransactionReceipt({ hash: trace.hash as Hex }).catch(() => null);
    if (!receipt) return { state: 'pending' };
    return receipt.status === 'success' ? { state: 'landed', reference: trace.hash } : { state: 'absent', reason: `transaction ${trace.hash} reverted` };
  }
  if (trace.kind !== 'tempo-pull') throw new Error(`rail A cannot look up a ${trace.kind} payment`);
  // The challenge-bound transfer from the payer to the service: mppx's own proof that it paid.
  const latest = await tempo.client.getBlockNumber({ cacheTime: 0 });
  const fromBlock = tempo.lookbackBlocks === undefined || latest < tempo.lookbackBlocks ? 0n : latest - tempo.lookbackBlocks;
  const logs = await tempo.client.getLogs({
    address: tempo.currency,
    event: transferWithMemoEvent,
    args: { from: trace.payer as Address, to: trace.recipient as Address },
    fromBlock,
    strict: true,
  });
  const paid = logs.find((log) => log.args.amount === BigInt(trace.amount) && isChallengeBoundMemo(log.args.memo, trace.realm, trace.challengeId));
  if (paid) return { state: 'landed', reference: paid.transactionHash };
  // Real time: the challenge's expiry was issued (and is enforced by mppx) on the real time, not the service clock.
  if (Date.now() > Date.parse(trace.expires) + LANDING_GRACE_MS) return { state: 'absent', reason: 'its challenge expired and no transfer landed' };
  return { state: 'pending' };
}

/**
 * Why mppx refused a credential, or null for a failure of ours. mppx parses a genuine challenge's
 * payload with the method's schema and throws the schema error as is: a forged payload is the
 * payer's mistake (402), not a 500.
 */
function refusalOf(error: unknown): string | null {
  if (error instanceof Errors.PaymentError) return reasonOf(error);
  if (error instanceof z.core.$ZodError) return 'the Payment credential payload does not fit the challenge method';
  return null;
}

export function receiptHeader(receipt: Receipt.Receipt): Record<string, string> {
  return { 'Payment-Receipt': Receipt.serialize(receipt) };
}
