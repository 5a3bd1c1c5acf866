import type { Context, Next } from 'hono';
import { Credential, type Method } from 'mppx';
import PQueue from 'p-queue';
import { tempo } from 'mppx/server';
import { Session } from 'mppx/tempo';
import { createClient, custom, type Account, type Address, type Client, type Transport } from 'viem';
import { tempo as tempoChain } from 'viem/chains';
import type { EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { recoverSigner, rememberingRecovery, useNativeOxRecovery } from '../../chains/evm/secp256k1.js';
import { tempoRpc } from '../../chains/embedded/tempo-rpc.js';
import type { Db } from '../../db/client.js';
import type { AppEnv } from '../../http/context.js';
import { formatUsd } from '../../money.js';
import { paymentContext } from '../attribution.js';
import type { PaymentProof } from '../carriers.js';
import { routeName, type PaidRoute } from '../prices.js';
import { meteredStream, sessionReceipt } from './metered-stream.js';
import { recordSessionUse, type ChannelState, type PgChannelStore } from './session-store.js';

/**
 * MPP sessions (TIP-1034 payment channels) on rail A. mppx's `tempo.session` method verifies and
 * applies every credential (open, voucher, top-up, close) against the escrow, with channel state in
 * PostgreSQL. This module charges: a call is charged its price against the channel's accepted
 * vouchers before the handler runs and given back when the handler fails (5xx); an event stream
 * is metered per event (one tick) with mppx's SSE protocol, asking for a voucher
 * (`payment-need-voucher`) when the accepted amount runs out (metered-stream.ts). Its ticks are
 * charged in this process's ledger and written in batches (metering.ts).
 */

export interface SessionRail {
  method: Method.AnyServer;
  store: PgChannelStore;
}

/** Local mode: mppx's session method against the embedded Tempo chain's escrow, through its Tempo RPC. */
export function embeddedSessionRail(chain: EmbeddedEvmChain, store: PgChannelStore): SessionRail {
  const client = createClient({
    chain: { ...tempoChain, id: chain.chain.id },
    transport: custom(tempoRpc(chain), { retryCount: 0 }),
    pollingInterval: chain.connection.pollingInterval,
  });
  return sessionRail({ client, account: chain.operator, currency: chain.contracts.stablecoin!, store });
}

/** Live mode: the same method against Tempo, closing and settling channels from the service key. */
export function liveSessionRail(options: { transport: Transport; account: Account; currency: Address; store: PgChannelStore }): SessionRail {
  const client = createClient({ chain: tempoChain, transport: options.transport, pollingInterval: 500 });
  return sessionRail({ client, account: options.account, currency: options.currency, store: options.store });
}

/**
 * mppx checks a voucher's signature when it validates the credential and again when it applies it,
 * and each check recovers the signer twice in pure JavaScript (ox), milliseconds each. Our patch to
 * mppx (patches/, docs/decisions.md) takes the recovery from here instead: libsecp256k1, once per
 * voucher (the second check finds the first's answer).
 */
export function useNativeVoucherRecovery(): void {
  const voucher = Session.Precompile.Voucher as typeof Session.Precompile.Voucher & { setSecp256k1SignerRecovery?: unknown };
  if (typeof voucher.setSecp256k1SignerRecovery !== 'function') throw new Error('mppx is not patched (patches/mppx+*.patch): run npm install');
  Session.Precompile.Voucher.setSecp256k1SignerRecovery(rememberingRecovery(recoverSigner, VOUCHERS_REMEMBERED));
}

/** Recovered voucher signers kept for mppx's second check of the same voucher (a few hundred bytes each). */
const VOUCHERS_REMEMBERED = 4096;

function sessionRail(options: { client: Client; account: Account; currency: Address; store: PgChannelStore }): SessionRail {
  useNativeVoucherRecovery();
  useNativeOxRecovery();
  const method = tempo.session({
    // The payee closes channels (only the payee or operator may): the service's own key.
    account: options.account,
    recipient: options.account.address,
    currency: options.currency,
    chainId: options.client.chain!.id,
    getClient: () => options.client,
    store: options.store,
  } as never);
  return { method: method as unknown as Method.AnyServer, store: options.store };
}

/**
 * Ticks a stream's suggested deposit covers: an hour of a balance stream. Each deposit and top-up
 * is a chain transaction (the payer's fee, and a turn in FUNDINGS_AT_ONCE), so a deposit of a few
 * minutes would have every stream topping up every few minutes; what is not spent is the payer's
 * again when the channel closes.
 */
const TICKS_PER_DEPOSIT = 3_600n;
/** Calls a per-session route's suggested deposit covers. */
const CALLS_PER_DEPOSIT = 10n;

/** What a session-billed route asks: the price per unit, and a deposit that covers a good while. */
export function sessionRequest(route: PaidRoute, recipient: Address) {
  const unitsPerDeposit = route.unit === 'tick' ? TICKS_PER_DEPOSIT : CALLS_PER_DEPOSIT;
  return {
    amount: formatUsd(route.price),
    unitType: route.unit === 'tick' ? 'second' : 'session',
    suggestedDeposit: formatUsd(route.price * unitsPerDeposit),
    recipient,
    description: route.summary,
  };
}

/**
 * Channel opens and top-ups checked at once by this process. Each one verifies and broadcasts a
 * chain transaction (tens of milliseconds of CPU and several database round trips); thousands
 * arriving together would queue every running stream's voucher behind them, and a stream whose
 * voucher is late stops. Past this many, the rest wait their turn: top-ups first, since a running
 * stream waits for its top-up (and ends without it), and an open only delays a stream not begun.
 */
const FUNDINGS_AT_ONCE = 4;
const channelFunding = new PQueue({ concurrency: FUNDINGS_AT_ONCE });

/** Runs an open's or a top-up's check and broadcast in its turn (see FUNDINGS_AT_ONCE). */
export function fundingTurn<T>(action: 'open' | 'topUp', work: () => Promise<T>): Promise<T> {
  return channelFunding.add(work, { priority: action === 'topUp' ? 1 : 0 });
}

type SessionHandler = (request: Request) => Promise<{ status: 402; challenge: Response } | { status: 200; withReceipt(response?: Response): Response }>;

export interface SessionCall {
  c: Context<AppEnv>;
  route: PaidRoute;
  proof: Extract<PaymentProof, { kind: 'mpp' }>;
  next: Next;
  /** The gate's 402 with a code and a reason. */
  refuse(code: string, reason: string): Promise<Response>;
}

/** Serves one request that carries a session credential (see the module comment). */
export async function serveSessionCall(deps: { db: Db; store: PgChannelStore; handler: SessionHandler }, call: SessionCall): Promise<Response | void> {
  const { c, route, proof } = call;
  const credential = Credential.deserialize(Credential.extractPaymentScheme(proof.authorization) ?? '');
  const payload = credential.payload as { action?: string; channelId?: string };
  const channelId = String(payload.channelId ?? '');
  const original = c.req.raw;

  // mppx checks and applies the credential on a body-less POST copy (its "management" shape), so
  // it never charges by itself: charging is done here, where a 5xx can give it back.
  const probe = new Request(new URL(new URL(original.url).pathname, original.url), {
    method: 'POST',
    headers: { Authorization: proof.authorization },
  });
  // Opens and top-ups (a chain transaction each) take turns; vouchers of running streams never wait for them.
  const result = await (payload.action === 'open' || payload.action === 'topUp' ? fundingTurn(payload.action, () => deps.handler(probe)) : deps.handler(probe));
  if (result.status === 402) return call.refuse('PAYMENT_INVALID', await refusalReason(result.challenge));
  const applied = result.withReceipt();
  const name = routeName(route);

  // Top-ups, closes and vouchers sent to refill a running stream are not calls of the route.
  const management = payload.action === 'topUp' || payload.action === 'close' || original.method !== route.method || !hasContent(original);
  if (management) {
    // Deposits and closes change the session's row; a refill voucher (one per tick, for clients that
    // sign as they go) shows in it when the stream records its use.
    const channel = payload.action === 'voucher' ? null : await deps.store.channel(channelId);
    if (channel) await recordSessionUse(deps.db, channel, { channelId, route: name, employerId: null, charged: 0n, units: 0, receipt: {} });
    return applied;
  }

  const price = route.price;
  const charged = await deps.store.charge(channelId, price);
  if (!charged.ok) {
    const available = charged.channel ? charged.channel.highestVoucherAmount - charged.channel.spent : 0n;
    return call.refuse(
      'PAYMENT_INSUFFICIENT',
      `the session's accepted vouchers leave ${available} base units; this call costs ${price}: send a voucher for a higher cumulative amount`,
    );
  }
  const fee = paymentContext(channelId, false);
  c.set('payment', fee.payment);
  /** Gives the charge back, or records it owed once the channel's close has captured it. */
  const giveBack = (httpStatus: number | null) =>
    deps.store.refund(channelId, price, { route: name, httpStatus, requestId: c.var.requestId, employerId: fee.attributedTo() });
  try {
    await call.next();
  } catch (error) {
    await giveBack(500);
    throw error;
  }
  if (c.res.status >= 500) {
    if ((await giveBack(c.res.status)) === 'owed') c.res.headers.set('Payment-Refund', 'pending');
    return;
  }

  const record = async (channel: ChannelState | null, units: number) => {
    if (channel) {
      await recordSessionUse(deps.db, channel, {
        channelId,
        route: name,
        employerId: fee.attributedTo(),
        charged: price * BigInt(units),
        units,
        receipt: { ...sessionReceipt(credential.challenge.id, channel) },
      });
    }
  };
  if (!Session.Server.Sse.isEventStream(c.res)) {
    await record(charged.channel, 1);
    c.res.headers.set('Payment-Receipt', Session.Precompile.Receipt.serializeSessionReceipt(sessionReceipt(credential.challenge.id, charged.channel!)));
    return;
  }

  // A stream: one tick per event, the first one already charged above, the rest in this process's
  // ledger (metered-stream.ts). It ends when the client leaves, the route's answer ends, or the
  // session runs dry (no voucher in time).
  const stop = new AbortController();
  const clientGone = () => stop.abort();
  if (original.signal.aborted) stop.abort();
  else original.signal.addEventListener('abort', clientGone, { once: true });
  const meter = deps.store.meter(channelId);
  const stream = meteredStream({
    upstream: c.res.body ?? new Response('').body!,
    meter,
    channelId,
    challengeId: credential.challenge.id,
    price,
    prepaid: 1,
    signal: stop.signal,
    ended: (ticks) =>
      deps.store.ending(
        (async () => {
          original.signal.removeEventListener('abort', clientGone);
          // The ticks charged in memory are written before the stream's use is recorded.
          await meter.release().catch((error: unknown) => c.var.log.error({ err: error, channelId }, 'stream ticks not written'));
          // A stream that delivered nothing keeps nothing.
          if (ticks === 0) await giveBack(null);
          const channel = await deps.store.channel(channelId);
          await record(channel, ticks).catch((error: unknown) => c.var.log.error({ err: error, channelId }, 'session use not recorded'));
          return channel;
        })(),
      ),
  });
  c.res = Session.Server.Sse.toResponse(stream);
}

/** A request that asks for the route's content (mppx's rule): any GET, or a POST with a body or query. */
function hasContent(request: Request): boolean {
  if (request.method !== 'POST') return true;
  if (new URL(request.url).search) return true;
  const length = request.headers.get('content-length');
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding');
}

async function refusalReason(response: Response): Promise<string> {
  const problem = (await response.json().catch(() => null)) as { detail?: string; title?: string } | null;
  return (problem?.detail ?? problem?.title ?? 'the session credential was refused').replace(/\.$/, '');
}

/** Whether a proof is a session credential (intent `session`), rather than a single charge. */
export function isSessionProof(proof: PaymentProof): proof is Extract<PaymentProof, { kind: 'mpp' }> {
  if (proof.kind !== 'mpp') return false;
  try {
    return Credential.deserialize(Credential.extractPaymentScheme(proof.authorization) ?? '').challenge.intent === 'session';
  } catch {
    return false;
  }
}
