import type { MiddlewareHandler } from 'hono';
import type { LocalChains } from '../chains/embedded/index.js';
import type { Chains } from '../chains/index.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { AppEnv } from '../http/context.js';
import type { PaidCallerResolver } from '../http/paid-caller.js';
import type { Logger } from '../log.js';
import { CardCredits } from './card/credit.js';
import { CardSandbox, sandboxCardRail } from './card/sandbox.js';
import { stripeCardRail } from './card/stripe.js';
import { paymentGate, type PaymentRailAdapter } from './gate.js';
import { mppRail, type CardRail } from './mpp/rail.js';
import { embeddedSessionRail, liveSessionRail } from './mpp/session.js';
import { PgChannelStore } from './mpp/session-store.js';
import { embeddedTempoRail, liveTempoRail } from './mpp/tempo-rails.js';
import { routeOffers, type RouteOffers } from './offers.js';
import type { PaidRoute } from './prices.js';
import { PaymentReconciler } from './reconcile.js';
import { PaymentRefunds } from './refunds.js';
import { recordReference, type SettledHook } from './store.js';
import { x402Rail } from './x402/adapter.js';
import type { DiscoveryExtensions } from './x402/discovery.js';
import { facilitatorAuthHeaders } from './x402/facilitator-auth.js';
import { embeddedX402Rails, liveX402Rails } from './x402/rails.js';

/** The payment gate of this process: the only way a route becomes paid (src/payments/). */
export interface Payments {
  /** `discovery`: the route's x402 discovery metadata (`paidRoute` builds it from the route's schemas). */
  gate(route: PaidRoute, discovery?: DiscoveryExtensions): MiddlewareHandler<AppEnv>;
  /** Local mode's card processor (dev token route, tests). */
  cardSandbox: CardSandbox | undefined;
  /** Card credits (the card fallback of routes priced below the processor's minimum); absent without a card processor. */
  cardCredits: CardCredits | undefined;
  /** Where fees go: the service's wallets. */
  payTo: { tempo: string; base: string; solana: string };
  /** MPP session channels' state (vouchers accepted, spent). */
  sessions: PgChannelStore;
  /** Resolves payments no request is answering any more (the `payments-reconcile` job). */
  reconciler: PaymentReconciler;
  /** The rails' adapters behind the gate. */
  adapters: readonly PaymentRailAdapter[];
  /** What a paid route's 402 offers in this process (its advertisements, e.g. MCP tool `_meta`, read this). */
  offers(route: PaidRoute): RouteOffers;
}

/** A claim outlives a request that stopped renewing it (a crash) by this long (LOCAL_TAKEOVER_SECONDS shortens it in tests). */
const LEASE_SECONDS = 60;

/**
 * Local mode: rail A settles on the embedded Tempo chain, B and C through an in-process x402
 * facilitator on the embedded Base and Solana chains, the card through the sandbox. Live mode:
 * mppx's tempo.charge, the configured x402 facilitator, Stripe when a key is set.
 */
export async function openPayments(deps: {
  config: Config;
  database: Database;
  chains: Chains;
  embedded?: LocalChains | undefined;
  /** What the service does with each collected fee (in the transaction that keeps it). */
  onSettled?: SettledHook | undefined;
  /** Who is behind a paid call: a card credit is held for them. */
  paidCallers: PaidCallerResolver;
  log: Logger;
}): Promise<Payments> {
  const { config, chains, embedded } = deps;
  const payTo = { tempo: chains.tempo.serviceAddress, base: chains.base.serviceAddress, solana: chains.solana.serviceAddress };
  const realm = new URL(config.publicBaseUrl).host;
  let adapters: PaymentRailAdapter[];
  const db = deps.database.db;
  const channels = new PgChannelStore(db, deps.log);
  const cardSandbox = embedded ? new CardSandbox(db) : undefined;
  const card: CardRail | undefined = cardSandbox ? sandboxCardRail(cardSandbox) : config.live.stripe ? stripeCardRail(config.live.stripe) : undefined;
  const cardCredits = card && new CardCredits(db, deps.paidCallers, card.refund);
  const cardWithCredits = card && cardCredits && { rail: card, credits: cardCredits };

  if (embedded) {
    // Challenge ids are HMACs under this key: derived from the embedded operator key (a stable
    // signature), so challenges survive a restart without a setting.
    const secretKey = config.live.mppSecretKey ?? (await embedded.tempo.operator.signMessage({ message: 'mpp challenge key' }));
    adapters = [
      mppRail({
        secretKey,
        realm,
        recipient: payTo.tempo,
        tempo: embeddedTempoRail(embedded.tempo),
        session: embeddedSessionRail(embedded.tempo, channels),
        card: cardWithCredits,
        db,
      }),
      x402Rail(
        await embeddedX402Rails(embedded, { evm: payTo.base, solana: payTo.solana }, { beforeSvmSend: (proofKey, signature) => recordReference(db, proofKey, signature) }),
        config.publicBaseUrl,
        chains,
      ),
    ];
  } else {
    const { mppSecretKey, x402FacilitatorUrl, x402FacilitatorKey } = config.live;
    if (!mppSecretKey || !x402FacilitatorUrl) throw new Error('live payments need MPP_SECRET_KEY and X402_FACILITATOR_URL');
    adapters = [
      mppRail({
        secretKey: mppSecretKey,
        realm,
        recipient: payTo.tempo,
        tempo: liveTempoRail({ client: chains.tempo.connection.publicClient, currency: chains.tempo.token, recipient: payTo.tempo }),
        session: liveSessionRail({
          transport: chains.tempo.connection.transport,
          account: chains.tempo.connection.signer,
          currency: chains.tempo.token,
          store: channels,
        }),
        card: cardWithCredits,
        db,
      }),
      x402Rail(
        liveX402Rails({
          facilitatorUrl: x402FacilitatorUrl,
          createAuthHeaders: x402FacilitatorKey && facilitatorAuthHeaders(x402FacilitatorUrl, x402FacilitatorKey),
          timeoutMs: config.live.x402FacilitatorTimeoutMs,
          payTo: { evm: payTo.base, solana: payTo.solana },
          baseUsdc: config.live.baseUsdcAddress,
          solanaMint: config.live.solanaUsdcMint,
          solanaNetwork: config.live.solanaNetwork,
        }),
        config.publicBaseUrl,
        chains,
      ),
    ];
  }
  const leaseSeconds = config.faults.takeoverSeconds ?? LEASE_SECONDS;
  const refunds = new PaymentRefunds(db, { tempo: chains.tempo, base: chains.base, solana: chains.solana, refundCard: card?.refund, cardCredits }, leaseSeconds);
  return {
    gate: paymentGate({ db, adapters, refunds, leaseSeconds, onSettled: deps.onSettled }),
    cardSandbox,
    payTo,
    sessions: channels,
    reconciler: new PaymentReconciler({ db, clock: deps.database.clock, adapters, refunds, cardCredits, log: deps.log.child({ component: 'payments' }) }),
    cardCredits,
    adapters,
    offers: (route) => routeOffers(route, { card: card !== undefined }),
  };
}
