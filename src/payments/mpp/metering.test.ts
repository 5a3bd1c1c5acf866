import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSharedDatabase } from '../../../test/support/shared-database.js';
import type { Db } from '../../db/client.js';
import { meteredStream } from './metered-stream.js';
import { StreamMetering, type StreamMeter } from './metering.js';
import { channelKey, PgChannelStore, type ChannelState } from './session-store.js';

/**
 * Stream ticks charged in memory and written in batches (metering.ts), driven by the metered
 * stream (metered-stream.ts) as the balance stream drives it.
 */
const TICK = 1_000n;
let shared: Awaited<ReturnType<typeof openSharedDatabase>>;
let store: PgChannelStore;

beforeAll(async () => {
  shared = await openSharedDatabase();
  store = new PgChannelStore(shared.first.db);
});
afterAll(async () => shared?.close());

/** A channel whose accepted vouchers cover `ticks` ticks. */
async function channel(ticks: bigint): Promise<string> {
  const channelId = `0x${randomBytes(32).toString('hex')}`;
  const state: ChannelState = {
    channelId,
    payer: `0x${'11'.repeat(20)}`,
    deposit: 1_000n * TICK,
    highestVoucherAmount: ticks * TICK,
    spent: 0n,
    units: 0,
    settledOnChain: 0n,
    finalized: false,
    closeRequestedAt: 0n,
    createdAt: new Date().toISOString(),
    chainId: 4217,
    token: `0x${'22'.repeat(20)}`,
  };
  await store.put(channelKey(channelId), state);
  return channelId;
}

/** A metering whose periodic write is far off (tests write with `flush`) unless `flushMs` says otherwise. */
function metering(db: Db = shared.first.db, flushMs = 3_600_000) {
  const changes = new EventEmitter();
  return new StreamMetering(
    db,
    { wake: (key) => changes.emit(key), waitForChange: (key) => new Promise<void>((resolve) => changes.once(key, () => resolve())) },
    undefined,
    flushMs,
  );
}

/** `db` whose transactions run through `around`, which may fail, count or delay them. */
function aroundTransactions(db: Db, around: (run: () => Promise<unknown>) => Promise<unknown>): Db {
  return new Proxy(db, {
    get(target, property) {
      if (property !== 'transaction') return Reflect.get(target, property, target) as unknown;
      return (work: Parameters<Db['transaction']>[0]) => around(() => target.transaction(work));
    },
  });
}

/** An SSE body of `count` events, as a route answers. */
function sseBody(count: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === count) return controller.close();
      sent += 1;
      controller.enqueue(encoder.encode(`data: tick ${sent}\n\n`));
    },
  });
}

/**
 * `events` events of a route metered on the channel through `meter` (none prepaid); resolves with
 * the SSE events sent, or rejects when the stream ends before all `events` were sent.
 */
async function stream(meter: StreamMeter, channelId: string, events: number, onEvent: (event: string) => void = () => {}): Promise<string[]> {
  const { sent, delivered } = await serve(meter, channelId, events, { onEvent });
  if (delivered !== events) throw new Error(`the stream ended after ${delivered} of ${events} events: ${sent.join('')}`);
  return sent;
}

/** Serves `events` events through a metered stream; what it sent, and what it reported delivered (how often) when it ended. */
async function serve(meter: StreamMeter, channelId: string, events: number, options: { onEvent?: (event: string) => void; signal?: AbortSignal; voucherWaitMs?: number; release?: boolean }) {
  let delivered = -1;
  let ends = 0;
  const body = meteredStream({
    upstream: sseBody(events),
    meter,
    channelId,
    challengeId: 'c',
    price: TICK,
    prepaid: 0,
    signal: options.signal ?? new AbortController().signal,
    voucherWaitMs: options.voucherWaitMs,
    ended: async (ticks) => {
      delivered = ticks;
      ends += 1;
      // As the service's streams do; the metering's own tests write when they choose.
      if (options.release) await meter.release();
      return store.channel(channelId);
    },
  });
  const sent: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const event = decoder.decode(chunk);
    sent.push(event);
    options.onEvent?.(event);
  }
  return { sent, delivered, ends };
}

const billed = async (channelId: string) => {
  const state = await store.channel(channelId);
  return { spent: state?.spent, units: state?.units };
};
const messages = (events: string[]) => events.filter((event) => event.startsWith('event: message')).length;

describe('stream metering', () => {
  it("charges a stream's ticks in memory and writes them in one go when it ends", async () => {
    const id = await channel(10n);
    const meter = metering().meter(channelKey(id));
    expect(messages(await stream(meter, id, 5))).toBe(5);
    // Served and charged against the vouchers, not written yet.
    expect(await billed(id)).toEqual({ spent: 0n, units: 0 });
    expect(await meter.channel()).toMatchObject({ spent: 5n * TICK, units: 5 });
    await meter.release();
    expect(await billed(id)).toEqual({ spent: 5n * TICK, units: 5 });
  });

  it('writes the ticks of running streams every flush interval', async () => {
    const id = await channel(10n);
    const meter = metering(shared.first.db, 50).meter(channelKey(id));
    await stream(meter, id, 4);
    await expect.poll(() => billed(id), { timeout: 5_000 }).toEqual({ spent: 4n * TICK, units: 4 });
  });

  it('serves no tick beyond the accepted vouchers: the stream asks for one and goes on once it is accepted', async () => {
    const id = await channel(3n);
    const meter = metering().meter(channelKey(id));
    const served = await stream(meter, id, 5, (event) => {
      // The payer's voucher for 5 ticks, accepted as mppx accepts it (through the store).
      if (event.startsWith('event: payment-need-voucher')) void store.update(channelKey(id), (value) => ({ op: 'set', value: { ...(value as ChannelState), highestVoucherAmount: 5n * TICK }, result: null }));
    });
    const asked = served.filter((event) => event.startsWith('event: payment-need-voucher'));
    expect(asked).toHaveLength(1);
    // Asked for 300 ticks past the 3 spent, not for the next one alone.
    expect(JSON.parse(asked[0]!.split('data: ')[1]!)).toMatchObject({ requiredCumulative: String(303n * TICK), acceptedCumulative: String(3n * TICK) });
    expect(messages(served)).toBe(5);
    await meter.release();
    expect(await billed(id)).toEqual({ spent: 5n * TICK, units: 5 });
  });

  it('a crash loses the unbilled ticks and bills none twice', async () => {
    const id = await channel(10n);
    const crashed = metering().meter(channelKey(id));
    await stream(crashed, id, 4);
    // The process dies here: its ledger is gone. A new process meters the next stream of the channel.
    const after = metering().meter(channelKey(id));
    expect(await after.channel()).toMatchObject({ spent: 0n, units: 0 });
    await stream(after, id, 2);
    await after.release();
    expect(await billed(id)).toEqual({ spent: 2n * TICK, units: 2 });
  });

  it('a write that rolled back is tried again; one whose commit outcome is unknown never is', async () => {
    let fail: 'before' | 'after commit' | null = null;
    const db = shared.first.db;
    // The database as the metering sees it: each transaction can fail before it starts, or answer an error after it committed.
    const flaky = aroundTransactions(db, async (run) => {
      const failure = fail;
      fail = null;
      if (failure === 'before') throw new Error('connection lost before the transaction');
      const result = await run();
      if (failure === 'after commit') throw new Error('connection lost after COMMIT');
      return result;
    });
    const ledger = metering(flaky);
    const rolledBack = await channel(10n);
    const meter = ledger.meter(channelKey(rolledBack));
    await stream(meter, rolledBack, 3);
    fail = 'before';
    await ledger.flush();
    expect(await billed(rolledBack)).toEqual({ spent: 0n, units: 0 });
    await ledger.flush();
    await ledger.flush();
    expect(await billed(rolledBack)).toEqual({ spent: 3n * TICK, units: 3 });

    const unknown = await channel(10n);
    const other = ledger.meter(channelKey(unknown));
    await stream(other, unknown, 4);
    fail = 'after commit';
    await ledger.flush();
    await ledger.flush();
    await other.release();
    expect(await billed(unknown)).toEqual({ spent: 4n * TICK, units: 4 });
  });

  it("two instances streaming on one channel never bill beyond the payer's vouchers", async () => {
    const id = await channel(6n);
    const first = metering(shared.first.db);
    const second = metering(shared.second.db);
    const [a, b] = [first.meter(channelKey(id)), second.meter(channelKey(id))];
    // Each instance's view shows 6 ticks of headroom; each serves 4.
    expect(messages(await stream(a, id, 4))).toBe(4);
    expect(messages(await stream(b, id, 4))).toBe(4);
    await Promise.all([first.flush(), second.flush()]);
    const state = await store.channel(id);
    // One instance's 4 ticks are billed; the other's no longer fit the vouchers and are not.
    expect(state).toMatchObject({ spent: 4n * TICK, units: 4 });
    expect(state!.spent).toBeLessThanOrEqual(state!.highestVoucherAmount);
  });

  it('a close requested meanwhile: the ticks it no longer covers are not billed, and the stream sees the close', async () => {
    const id = await channel(10n);
    const ledger = metering();
    const meter = ledger.meter(channelKey(id));
    await stream(meter, id, 2);
    await store.update(channelKey(id), (value) => ({ op: 'set', value: { ...(value as ChannelState), closeRequestedAt: 1_700_000_000n }, result: null }));
    await ledger.flush();
    expect(await billed(id)).toEqual({ spent: 0n, units: 0 });
    expect(await meter.channel()).toMatchObject({ closeRequestedAt: 1_700_000_000n, spent: 0n });
    // The stream refuses to go on.
    await expect(stream(meter, id, 1)).rejects.toThrow(/after 0 of 1 events/);
  });

  it('streams ending together are written in one transaction', async () => {
    let transactions = 0;
    const db = shared.first.db;
    const counting = aroundTransactions(db, (run) => {
      transactions += 1;
      return run();
    });
    const ledger = metering(counting);
    const ids = await Promise.all([1, 2, 3].map(() => channel(10n)));
    const meters = ids.map((id) => ledger.meter(channelKey(id)));
    await Promise.all(meters.map((meter, i) => stream(meter, ids[i]!, i + 1)));
    await Promise.all(meters.map((meter) => meter.release()));
    expect(transactions).toBe(1);
    expect(await Promise.all(ids.map(billed))).toEqual([1, 2, 3].map((n) => ({ spent: BigInt(n) * TICK, units: n })));
  });

  it('shutdown (settle) waits for the streams ending and writes the ticks of those still running', async () => {
    const running = await channel(10n);
    const meter = store.meter(running);
    await stream(meter, running, 3);
    let recorded = false;
    void store.ending(new Promise<void>((resolve) => setTimeout(resolve, 100)).then(() => (recorded = true)));
    await store.settle();
    expect(recorded).toBe(true);
    expect(await billed(running)).toEqual({ spent: 3n * TICK, units: 3 });
    await meter.release();
  });

  it('a voucher this process accepted while a write was finishing is not hidden by the row that write read', async () => {
    let hold: Promise<void> | null = null;
    const db = shared.first.db;
    // The write's transaction commits, then its answer is late: the voucher below lands meanwhile.
    const slow = aroundTransactions(db, async (run) => {
      const late = hold;
      hold = null;
      const result = await run();
      if (late) await late;
      return result;
    });
    const sessions = new PgChannelStore(slow);
    const id = await channel(3n);
    const meter = sessions.meter(id);
    await meter.channel();
    for (let i = 0; i < 3; i++) expect(meter.tryCharge(TICK)).toBe(true);
    expect(meter.tryCharge(TICK)).toBe(false);
    let answer = () => {};
    hold = new Promise<void>((resolve) => (answer = resolve));
    const writing = sessions.settle();
    await expect.poll(() => billed(id)).toEqual({ spent: 3n * TICK, units: 3 });
    await sessions.update(channelKey(id), (value) => ({ op: 'set', value: { ...(value as ChannelState), highestVoucherAmount: 10n * TICK }, result: null }));
    answer();
    await writing;
    await meter.channel();
    expect(meter.tryCharge(TICK)).toBe(true);
    await meter.release();
  });

  it('a close requested through this process shows to its streams at once', async () => {
    const id = await channel(10n);
    const meter = store.meter(id);
    await meter.channel();
    expect(meter.tryCharge(TICK)).toBe(true);
    await store.update(channelKey(id), (value) => ({ op: 'set', value: { ...(value as ChannelState), closeRequestedAt: 1_700_000_000n }, result: null }));
    expect(meter.tryCharge(TICK)).toBe(false);
    await meter.release();
  });
});

describe('metered stream', () => {
  it("ends with the session's receipt for what was written", async () => {
    const id = await channel(10n);
    const meter = metering().meter(channelKey(id));
    const { sent, delivered, ends } = await serve(meter, id, 4, { release: true });
    expect([delivered, ends]).toEqual([4, 1]);
    expect(sent.slice(0, 4)).toEqual([1, 2, 3, 4].map((n) => `event: message\ndata: tick ${n}\n\n`));
    expect(sent).toHaveLength(5);
    expect(sent[4]).toMatch(/^event: payment-receipt\n/);
    expect(JSON.parse(sent[4]!.split('data: ')[1]!)).toMatchObject({ channelId: id, spent: String(4n * TICK), units: 4, acceptedCumulative: String(10n * TICK) });
  });

  it('asks for at most the deposit, and ends when no voucher comes in time', async () => {
    const id = await channel(2n);
    // A deposit of 100 ticks: the voucher asked for cannot pass it.
    await store.update(channelKey(id), (value) => ({ op: 'set', value: { ...(value as ChannelState), deposit: 100n * TICK }, result: null }));
    const meter = metering().meter(channelKey(id));
    const { sent, delivered } = await serve(meter, id, 5, { voucherWaitMs: 300, release: true });
    expect(delivered).toBe(2);
    expect(sent.map((event) => event.split('\n')[0])).toEqual(['event: message', 'event: message', 'event: payment-need-voucher', 'event: payment-receipt']);
    expect(JSON.parse(sent[2]!.split('data: ')[1]!)).toMatchObject({ requiredCumulative: String(100n * TICK), deposit: String(100n * TICK) });
    expect(await billed(id)).toEqual({ spent: 2n * TICK, units: 2 });
  });

  it('a client that leaves ends the stream once, with no receipt, and its ticks are written', async () => {
    const id = await channel(10n);
    const meter = metering().meter(channelKey(id));
    const leave = new AbortController();
    const { sent, delivered, ends } = await serve(meter, id, 8, {
      signal: leave.signal,
      release: true,
      onEvent: (event) => {
        if (event === 'event: message\ndata: tick 3\n\n') leave.abort();
      },
    });
    expect([delivered, ends]).toEqual([3, 1]);
    expect(sent).toHaveLength(3);
    expect(await billed(id)).toEqual({ spent: 3n * TICK, units: 3 });
  });

  it('a client whose connection closes (the stream cancelled) ends it once, and its ticks are written', async () => {
    const id = await channel(10n);
    const meter = metering().meter(channelKey(id));
    let ends = 0;
    let delivered = -1;
    const body = meteredStream({
      upstream: sseBody(8),
      meter,
      channelId: id,
      challengeId: 'c',
      price: TICK,
      prepaid: 0,
      signal: new AbortController().signal,
      ended: async (ticks) => {
        ends += 1;
        delivered = ticks;
        await meter.release();
        return store.channel(id);
      },
    });
    const reader = body.getReader();
    for (let i = 0; i < 2; i++) await reader.read();
    await reader.cancel();
    expect([ends, delivered]).toEqual([1, 2]);
    expect(await billed(id)).toEqual({ spent: 2n * TICK, units: 2 });
  });
});
