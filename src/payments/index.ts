import type { MiddlewareHandler } from 'hono';
import type { EmbeddedChains } from '../chains/embedded/index.js';
import type { Chains } from '../chains/index.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { AppEnv } from '../http/context.js';
import { CardSandbox, sandboxCardRail } from './card/sandbox.js';
import { stripeCardRail } from './card/stripe.js';
import { paymentGate, type PaymentRailAdapter } from './gate.js';
import { mppRail } from './mpp/rail.js';
import { embeddedSessionRail, liveSessionRail } from './mpp/session.js';
import { PgChannelStore } from './mpp/session-store.js';
import { embeddedTempoRail, liveTempoRail } from './mpp/tempo-rails.js';
import type { PaidRoute } from './prices.js';
import { x402Rail } from './x402/adapter.js';
import { embeddedX402Rails, liveX402Rails } from './x402/rails.js';

/** The payment gate of this process: the only way a route becomes paid (src/payments/). */
export interface Payments {
  gate(route: PaidRoute): MiddlewareHandler<AppEnv>;
  /** Local mode's card processor (dev token route, tests). */
  cardSandbox: CardSandbox | undefined;
  /** Where fees go: the service's wallets. */
  payTo: { tempo: string; base: string; solana: string };
  /** MPP session channels' state (vouchers accepted, spent). */
  sessions: PgChannelStore;
}

/**
 * Local mode: rail A settles on the embedded Tempo chain, B and C through an in-process x402
 * facilitator on the embedded Base and Solana chains, the card through the sandbox. Live mode:
 * mppx's tempo.charge, the configured x402 facilitator, Stripe when a key is set.
 */
export async function openPayments(deps: { config: Config; database: Database; chains: Chains; embedded?: EmbeddedChains | undefined }): Promise<Payments> {
  const { config, chains, embedded } = deps;
  const payTo = { tempo: chains.tempo.serviceAddress, base: chains.base.serviceAddress, solana: chains.solana.serviceAddress };
  const realm = new URL(config.publicBaseUrl).host;
  let adapters: PaymentRailAdapter[];
  let cardSandbox: CardSandbox | undefined;
  const channels = new PgChannelStore(deps.database.db);
  const db = deps.database.db;

  if (embedded) {
    cardSandbox = new CardSandbox(deps.database.db);
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
        card: sandboxCardRail(cardSandbox),
        db,
      }),
      x402Rail(await embeddedX402Rails(embedded, { evm: payTo.base, solana: payTo.solana }), config.publicBaseUrl),
    ];
  } else {
    const { mppSecretKey, x402FacilitatorUrl, stripe } = config.live;
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
        card: stripe && stripeCardRail(stripe),
        db,
      }),
      x402Rail(
        liveX402Rails({
          facilitatorUrl: x402FacilitatorUrl,
          payTo: { evm: payTo.base, solana: payTo.solana },
          baseUsdc: config.live.baseUsdcAddress,
          solanaMint: config.live.solanaUsdcMint,
          solanaNetwork: config.live.solanaNetwork,
        }),
        config.publicBaseUrl,
      ),
    ];
  }
  return { gate: paymentGate({ db, adapters }), cardSandbox, payTo, sessions: channels };
}
