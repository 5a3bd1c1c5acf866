import { CARD_MINIMUM, type PaidRoute, type PriceUnit, type Rail } from './prices.js';

/**
 * What a paid route's 402 offers, in one function: the rail adapters issue exactly these offers,
 * and every advertisement of a route's payment (the MCP tool `_meta`) is derived from it, so the
 * advertisement and the 402 cannot disagree (docs/decisions.md, "The MCP endpoint").
 */
export interface RouteOffers {
  /** USD in 6-decimal base units. */
  price: bigint;
  unit: PriceUnit;
  /** The rails the 402 carries an offer for (A: `WWW-Authenticate: Payment`; B, C: `PAYMENT-REQUIRED`). */
  rails: readonly Rail[];
  /** Rail A's MPP intents: per-tick routes are paid through a session only; per-session routes also take a single charge. */
  mppIntents: readonly ('charge' | 'session')[];
  /** A card charge (mppx's stripe method) next to rail A, or none. */
  card: CardOffer | null;
}

/**
 * The card charge: the price, or where the price is below the processor's minimum charge, a card
 * credit of the minimum that this call and later ones draw on (src/payments/card/credit.ts).
 */
export interface CardOffer {
  /** USD in 6-decimal base units (whole cents). */
  amount: bigint;
  credit: boolean;
}

/** The processors this process has beside the chains (a card processor is configured or not). */
export interface OfferProcessors {
  card: boolean;
}

export function routeOffers(route: PaidRoute, processors: OfferProcessors): RouteOffers {
  const railA = route.rails.includes('A');
  return {
    price: route.price,
    unit: route.unit,
    rails: route.rails,
    mppIntents: railA ? [...(route.unit === 'charge' ? [] : ['session' as const]), ...(route.unit === 'tick' ? [] : ['charge' as const])] : [],
    card: railA && processors.card && route.card ? cardOffer(route.price) : null,
  };
}

const cardOffer = (price: bigint): CardOffer => (price >= CARD_MINIMUM ? { amount: price, credit: false } : { amount: CARD_MINIMUM, credit: true });

/** A card charge's amount as the processor takes it: USD with 2 decimals, e.g. "0.50". */
export function cardAmount(offer: CardOffer): string {
  const cents = offer.amount / 10_000n;
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
}

/** A card offer as the service's advertisements show it (OpenAPI `x-payment`, MCP tool `_meta`): false when there is none. */
export function presentCardOffer(offer: CardOffer | null): false | { amount: string; currency: 'usd'; credit: boolean } {
  return offer ? { amount: cardAmount(offer), currency: 'usd', credit: offer.credit } : false;
}
