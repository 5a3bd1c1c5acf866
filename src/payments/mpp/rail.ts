import { Credential, Errors, Receipt, type Method } from 'mppx';
import { Mppx } from 'mppx/server';
import type { Address } from 'viem';
import { formatUsd } from '../../money.js';
import type { PaymentProof } from '../carriers.js';
import type { PaymentRailAdapter, SettlementOutcome, Verification } from '../gate.js';
import { CARD_MINIMUM, type PaidRoute } from '../prices.js';

/**
 * Rail A (MPP on Tempo) and the card fallback, through mppx: mppx issues the challenges and checks
 * every credential (HMAC binding to this server, the route's amount and recipient, expiry). A Tempo
 * payment is validated before the handler and broadcast after it; the card is charged while it is
 * verified and refunded when the handler fails.
 */

/**
 * The Tempo charge method: its `validate` checks a payment without moving money (run before the
 * handler), its `broadcast` moves it (run after the handler answered below 500).
 */
export interface TempoChargeRail {
  method: Method.AnyServer;
  network: string;
  currency: Address;
  /** Who pays, once validation passed. */
  payerOf(credential: Credential.Credential, validation: Method.Validation): Promise<Address>;
}

/** The card processor behind mppx's stripe method: it charges at verification, so it can refund. */
export interface CardRail {
  method: Method.AnyServer;
  /** Stripe's network id for the challenge (`methodDetails.networkId`). */
  networkId: string;
  /** Gives a charge back (the handler failed with a 5xx). */
  refund(paymentIntentId: string): Promise<void>;
}

export interface MppRailOptions {
  secretKey: string;
  realm: string;
  /** The service's Tempo wallet: every rail A payment goes there. */
  recipient: Address;
  tempo: TempoChargeRail;
  /** Absent: no card offer (live mode without a Stripe key). */
  card?: CardRail | undefined;
}

const CENTS_PER_BASE_UNIT = 10_000n;

export function mppRail(options: MppRailOptions): PaymentRailAdapter {
  const { tempo, card } = options;
  const mppx = Mppx.create({
    methods: card ? [tempo.method, card.method] : [tempo.method],
    secretKey: options.secretKey,
    realm: options.realm,
  });
  type Handler = (request: Request) => Promise<{ status: 402; challenge: Response } | { status: 200; withReceipt: (response: Response) => Response }>;
  const handlers = new Map<PaidRoute, Handler>();

  /** What the route asks a Tempo payment for; mppx binds challenges and credentials to it. */
  const tempoRequest = (route: PaidRoute) => ({ amount: formatUsd(route.price), recipient: options.recipient, description: route.summary });

  /** The route's mppx handler: a Tempo charge, composed with a card charge where the route offers one. */
  const handlerFor = (route: PaidRoute): Handler => {
    let handler = handlers.get(route);
    if (handler) return handler;
    const entries: unknown[] = [[tempo.method, tempoRequest(route)]];
    if (card && route.card && route.price >= CARD_MINIMUM) {
      const cents = route.price / CENTS_PER_BASE_UNIT;
      const amount = `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
      entries.push([card.method, { amount, currency: 'usd', decimals: 2, networkId: card.networkId, paymentMethodTypes: ['card'], description: route.summary }]);
    }
    handler = (mppx.compose as (...e: unknown[]) => Handler)(...entries);
    handlers.set(route, handler);
    return handler;
  };

  // mppx reads only the URL, method and Authorization header; the body stays for the route's validation.
  const mppRequest = (request: Request, authorization?: string) =>
    new Request(request.url, { method: request.method, headers: authorization ? { authorization } : {} });

  return {
    rails: ['A'],
    accepts: (proof) => proof.kind === 'mpp',

    async offer(route, request) {
      const result = await handlerFor(route)(mppRequest(request));
      if (result.status !== 402) throw new Error('mppx answered a request without a credential with a receipt');
      const challenges = result.challenge.headers.get('WWW-Authenticate');
      return { headers: challenges ? [['WWW-Authenticate', challenges]] : [] };
    },

    async verify(route, proof: PaymentProof, request): Promise<Verification> {
      if (proof.kind !== 'mpp') return { ok: false, reason: 'not an MPP credential' };
      let credential: Credential.Credential;
      try {
        credential = Credential.deserialize(Credential.extractPaymentScheme(proof.authorization) ?? '');
      } catch {
        return { ok: false, reason: 'the Payment credential cannot be decoded' };
      }
      if (credential.challenge.method === 'stripe' && card) return verifyCard(route, proof, request, card);

      // HMAC, expiry, the route's amount and recipient, then the method's own checks: nothing moves.
      const bound = { request: tempoRequest(route) };
      let validation: Method.Validation;
      try {
        validation = await mppx.validateCredential(credential, bound);
      } catch (error) {
        if (error instanceof Errors.PaymentError) return { ok: false, reason: reasonOf(error) };
        throw error;
      }
      const payer = await tempo.payerOf(credential, validation);
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
    },
  };

  /** mppx's stripe method charges the card while it verifies (a confirmed PaymentIntent); a 5xx refunds it. */
  async function verifyCard(route: PaidRoute, proof: { authorization: string }, request: Request, card: CardRail): Promise<Verification> {
    const result = await handlerFor(route)(mppRequest(request, proof.authorization));
    if (result.status === 402) return { ok: false, reason: await problemDetail(result.challenge) };
    const receipt = Receipt.deserialize(result.withReceipt(new Response(null)).headers.get('Payment-Receipt') ?? '');
    const paymentIntent = receipt.reference;
    return {
      ok: true,
      payment: {
        rail: 'card',
        network: `stripe:${card.networkId}`,
        proofKey: `mpp:stripe:${paymentIntent}`,
        payer: null,
        asset: 'usd',
        settle: async () => ({ state: 'settled', reference: paymentIntent, payer: null, headers: receiptHeader(receipt), receipt: { ...receipt } }),
        abandon: () => card.refund(paymentIntent),
      },
    };
  }
}

export function receiptHeader(receipt: Receipt.Receipt): Record<string, string> {
  return { 'Payment-Receipt': Receipt.serialize(receipt) };
}

function reasonOf(error: Errors.PaymentError): string {
  return error.message.replace(/^Payment verification failed: /, '').replace(/\.$/, '');
}

/** The reason in mppx's problem+json 402 body. */
async function problemDetail(response: Response): Promise<string> {
  try {
    const problem = (await response.json()) as { detail?: string; title?: string };
    return (problem.detail ?? problem.title ?? 'the payment credential was refused').replace(/\.$/, '');
  } catch {
    return 'the payment credential was refused';
  }
}
