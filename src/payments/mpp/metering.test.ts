import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Session } from 'mppx/tempo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSharedDatabase } from '../../../test/support/shared-database.js';
import type { Db } from '../../db/client.js';
import { StreamMetering } from './metering.js';
import { channelKey, PgChannelStore, type ChannelState } from './session-store.js';

/**
 * Stream ticks charged in memory and written in batches (metering.ts), driven by mppx's own SSE
 * metering (`Session.Server.Sse.serve`) as the balance stream drives it.
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
    { changed: (key) => changes.emit(key), waitForChange: (key) => new Promise<void>((resolve) => changes.once(key, () => resolve())) },
    undefined,
    flushMs,
  );
}

/** mppx's metering of `events` events on the channel through `store`; resolves with the SSE events it sent. */
async function stream(meterStore: unknown, channelId: string, events: number, onEvent: (event: string) => void = () => {}): Promise<string[]> {
  const generate = async function* () {
    for (let i = 1; i <= events; i++) yield `tick ${i}`;
  };
  const body = Session.Server.Sse.serve({ store: meterStore as never, channelId: channelId as `0x${string}`, challengeId: 'c', tickCost: TICK, generate: generate(), pollIntervalMs: 20 });
  const sent: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const event = decoder.decode(chunk);
    sent.push(event);
    onEvent(event);
  }
  return sent;
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
    expect(await meter.getChannel(id)).toMatchObject({ spent: 5n * TICK, units: 5 });
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
    expect(served.filter((event) => event.startsWith('event: payment-need-voucher'))).toHaveLength(1);
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
    expect(await after.getChannel(id)).toMatchObject({ spent: 0n, units: 0 });
    await stream(after, id, 2);
    await after.release();
    expect(await billed(id)).toEqual({ spent: 2n * TICK, units: 2 });
  });

  it('a write that rolled back is tried again; one whose commit outcome is unknown never is', async () => {
    let fail: 'before' | 'after commit' | null = null;
    const db = shared.first.db;
    // The database as the metering sees it: each transaction can fail before it starts, or answer an error after it committed.
    const flaky = new Proxy(db, {
      get(target, property) {
        if (property !== 'transaction') return Reflect.get(target, property, target) as unknown;
        return async (work: Parameters<Db['transaction']>[0]) => {
          const failure = fail;
          fail = null;
          if (failure === 'before') throw new Error('connection lost before the transaction');
          const result = await target.transaction(work);
          if (failure === 'after commit') throw new Error('connection lost after COMMIT');
          return result;
        };
      },
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
    expect(await meter.getChannel(id)).toMatchObject({ closeRequestedAt: 1_700_000_000n, spent: 0n });
    // mppx's metering refuses to go on.
    await expect(stream(meter, id, 1)).rejects.toThrow(/close/);
  });

  it('takes nothing but charges through the stream meter', async () => {
    const id = await channel(10n);
    const meter = metering().meter(channelKey(id));
    await expect(meter.updateChannel(id, (current) => current && { ...current, highestVoucherAmount: 0n })).rejects.toThrow(/only charges/);
    await expect(meter.updateChannel(id, (current) => current && { ...current, spent: current.spent - 1n })).rejects.toThrow(/only charges/);
  });
});
