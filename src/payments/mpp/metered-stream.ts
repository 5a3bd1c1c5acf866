import { setTimeout as delay } from 'node:timers/promises';
import { Session } from 'mppx/tempo';
import type { StreamMeter } from './metering.js';
import type { ChannelState } from './session-store.js';

/**
 * A paid event stream served in one pass (issue 32). Each event of the route's own SSE answer is
 * charged one tick in this process's ledger (metering.ts) and passed on as mppx's `event: message`;
 * when the vouchers run out the stream asks for one (`event: payment-need-voucher`) and waits; when
 * the route's answer ends, the stream ends with the session's `event: payment-receipt`. That is
 * the protocol of mppx's `Sse.serve`, whose reading, metering and writing take five stream and
 * generator hops per event: at thousands of streams a second each hop is a share of a core.
 */
export interface MeteredStreamOptions {
  /** The route's answer: a `text/event-stream` body. */
  upstream: ReadableStream<Uint8Array>;
  meter: StreamMeter;
  channelId: string;
  challengeId: string;
  /** What one event costs. */
  price: bigint;
  /** Events paid before the stream began (the first one, charged with the request). */
  prepaid: number;
  /** The client left: the stream ends at once, without its receipt. */
  signal: AbortSignal;
  /** How long the stream waits for a voucher it asked for (default VOUCHER_WAIT_MS). */
  voucherWaitMs?: number;
  /**
   * The stream ended, however it ended, with the number of events it delivered (its ticks written
   * by then): resolves with the channel for the final receipt.
   */
  ended(ticks: number): Promise<ChannelState | null>;
}

/** How long a metered stream waits for the voucher it asked for before it ends. */
export const VOUCHER_WAIT_MS = 20_000;
/** How often a stream waiting for a voucher reads its channel again (a voucher sent to another instance). */
const VOUCHER_POLL_MS = 250;
/**
 * How many ticks one voucher of a stream should cover (the deposit permitting): five minutes of a
 * balance stream ($0.30). Each voucher costs the service a request, a chain read and a database
 * write (about 1.7 ms of CPU in a profile of the streams bench), against about 0.05 ms a tick.
 */
const VOUCHER_AHEAD_UNITS = 300n;

export function meteredStream(options: MeteredStreamOptions): ReadableStream<Uint8Array> {
  const { meter, price, signal } = options;
  const events = new UpstreamEvents(options.upstream.getReader());
  const encoder = new TextEncoder();
  let prepaid = options.prepaid;
  let ticks = 0;
  let cancelled = false;
  /** Settles when the client leaves: made once, as one listener on the signal. */
  let stopped: Promise<void> | undefined;
  let ending: Promise<ChannelState | null> | undefined;
  /** Once, however the stream ends: the route's answer cancelled, the ticks written, the use recorded. */
  const end = () =>
    (ending ??= (async () => {
      await events.cancel();
      return options.ended(ticks);
    })());

  /** Whether the stream may charge and send one more event. */
  const going = () => !cancelled && !signal.aborted;
  /** Charges `price` in the ledger and counts the tick, in one step (no wait between the two). */
  const charged = () => {
    if (!going() || !meter.tryCharge(price)) return false;
    ticks += 1;
    return true;
  };

  /** Charges the next event, asking for a voucher and waiting for it where needed; false: the stream ends. */
  const charge = async (controller: ReadableStreamDefaultController<Uint8Array>): Promise<boolean> => {
    if (prepaid > 0 && going()) {
      prepaid -= 1;
      ticks += 1;
      return true;
    }
    if (charged()) return true;
    const deadline = Date.now() + (options.voucherWaitMs ?? VOUCHER_WAIT_MS);
    let asked = false;
    for (;;) {
      const channel = await meter.channel();
      if (!channel || !open(channel) || !going()) return false;
      if (charged()) return true;
      if (!asked) controller.enqueue(encoder.encode(needVoucherEvent(options.channelId, channel, price)));
      asked = true;
      const left = deadline - Date.now();
      // A client that cannot or will not pay more gets a closed stream rather than an open, silent one.
      if (left <= 0) return false;
      await Promise.race([meter.waitForUpdate(), delay(Math.min(VOUCHER_POLL_MS, left)), (stopped ??= aborted(signal))]);
    }
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const data = going() ? await events.next() : null;
        if (data !== null && (await charge(controller))) {
          if (cancelled) return;
          controller.enqueue(encoder.encode(Session.Server.Sse.formatMessageEvent(data)));
          return;
        }
        const channel = await end();
        if (cancelled) return;
        if (channel && !signal.aborted) controller.enqueue(encoder.encode(Session.Server.Sse.formatReceiptEvent(sessionReceipt(options.challengeId, channel))));
        controller.close();
      },
      async cancel() {
        cancelled = true;
        await end();
      },
    },
    // Pulled only when the client's socket takes more: an event is charged as it is sent, not ahead.
    { highWaterMark: 0 },
  );
}

/** Whether a stream may still charge the channel (mppx's rule: no close requested, not finalized). */
const open = (channel: ChannelState) => !channel.finalized && channel.closeRequestedAt === 0n;

/**
 * The voucher request: mppx's asks for exactly the next tick, so a client would sign and send one a
 * second. It asks for VOUCHER_AHEAD_UNITS ticks instead (never beyond the deposit). That only
 * widens what the payer authorises: the payer is charged the ticks served (`spent`), which is what
 * a close or settlement collects.
 */
function needVoucherEvent(channelId: string, channel: ChannelState, price: bigint): string {
  const required = channel.spent + price;
  const ahead = required + price * (VOUCHER_AHEAD_UNITS - 1n);
  const asked = ahead < channel.deposit ? ahead : channel.deposit > required ? channel.deposit : required;
  return Session.Server.Sse.formatNeedVoucherEvent({
    channelId: channelId as `0x${string}`,
    requiredCumulative: asked.toString(),
    acceptedCumulative: channel.highestVoucherAmount.toString(),
    deposit: channel.deposit.toString(),
  });
}

/** The session's receipt for what a channel accepted and spent (a stream's last event, a call's Payment-Receipt). */
export function sessionReceipt(challengeId: string, channel: ChannelState) {
  return Session.Precompile.Receipt.createSessionReceipt({
    challengeId,
    channelId: channel.channelId as `0x${string}`,
    acceptedCumulative: channel.highestVoucherAmount,
    spent: channel.spent,
    units: channel.units,
  });
}

/** Settles when `signal` aborts (one listener, removed with the signal's first abort). */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

/** The `data` of each event of an SSE body, read as asked for (mppx's `iterateData`, without its generator). */
class UpstreamEvents {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private readonly ready: string[] = [];
  private done = false;

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next event's data, or null once the body ended. */
  async next(): Promise<string | null> {
    while (this.ready.length === 0) {
      if (this.done) return null;
      const { value, done } = await this.reader.read();
      if (done) {
        this.done = true;
        this.take(this.buffer);
        this.buffer = '';
        continue;
      }
      const events = (this.buffer + this.decoder.decode(value, { stream: true })).split('\n\n');
      this.buffer = events.pop() ?? '';
      for (const event of events) this.take(event);
    }
    return this.ready.shift()!;
  }

  async cancel(): Promise<void> {
    this.done = true;
    await this.reader.cancel().catch(() => {});
  }

  private take(event: string): void {
    if (!event.trim()) return;
    const data = Session.Server.Sse.extractData(event);
    if (data !== null) this.ready.push(data);
  }
}
