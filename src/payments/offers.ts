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
  /** A card charge (mppx's stripe method) next to rail A. */
  card: boolean;
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
    // The card processor's minimum charge decides too: below it no card offer can be made.
    card: railA && processors.card && route.card && route.price >= CARD_MINIMUM,
  };
}
