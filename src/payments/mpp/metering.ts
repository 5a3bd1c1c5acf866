import { inArray, sql } from 'drizzle-orm';
import { Json } from 'ox';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { mppChannelStore } from '../tables.js';
import type { ChannelState } from './session-store.js';

/**
 * Per-tick metering of paid event streams, kept in memory and written in batches (issue 32).
 *
 * Charging each tick through the channel store, as mppx's SSE metering does, costs two database
 * round trips per event: at 5,000 streams, 10,000 a second. Here a stream's ticks are charged
 * against this process's view of its channel (the last row read, plus the ticks charged since), at
 * once and with no wait, and written every FLUSH_MS, all channels of the process in a few transactions.
 *
 * - A tick is charged in memory only within the vouchers the view shows, so a write bills at most
 *   what the payer signed for. The write re-checks under the row lock: ticks the channel can no
 *   longer cover (a close requested meanwhile, or another instance spending the same channel's
 *   vouchers) are not billed and are logged as lost.
 * - A crash loses the ticks charged since the last write (at most FLUSH_MS of each stream) and
 *   never bills a tick twice: ticks leave the ledger only once their write committed, writes are
 *   one at a time, and a write whose commit's outcome is unknown is not tried again.
 * - The view is read again after every write (vouchers and closes made on other instances show
 *   within FLUSH_MS), after this process changes the channel, and while a stream waits for a voucher.
 */
export const METERING_FLUSH_MS = 5_000;
/** Channels written per transaction (rows locked at once). */
const FLUSH_CHUNK = 500;
/** How long an ended stream's write waits for other streams ending. */
const ENDED_WINDOW_MS = 20;

interface Meter {
  key: string;
  /** The channel as last read from the database (null: not read yet, or gone). */
  row: ChannelState | null;
  /** Charged to streams here since the last write: the amount, and the ticks. */
  unbilled: bigint;
  units: number;
  /** Read the database before the next answer: the stream waits for a voucher, or a write failed. */
  stale: boolean;
  /** Bumped by each write, so a read that started before it cannot put back an older row. */
  version: number;
  /** Streams of this process metering the channel. */
  streams: number;
}

/** One stream's access to its channel's ledger (metered-stream.ts), and its end. */
export interface StreamMeter {
  /**
   * Charges one tick of `amount` in memory, at once, where this process's view of the channel is
   * current and its vouchers cover it; false otherwise (read the channel, or wait for a voucher).
   */
  tryCharge(amount: bigint): boolean;
  /** The channel as this process's streams see it, read again first where the view is not current. */
  channel(): Promise<ChannelState | null>;
  /** Resolves when this process changes the channel (or never: callers poll too); the next `channel()` reads it. */
  waitForUpdate(): Promise<void>;
  /** The stream ended: writes the channel's unbilled ticks now. */
  release(): Promise<void>;
}

export class StreamMetering {
  private readonly meters = new Map<string, Meter>();
  private readonly reads: ReadBatch;
  /** The write in progress: writes run one at a time, so no ticks are written twice. */
  private writing: Promise<void> = Promise.resolve();
  /** Streams that ended, waiting to be written together. */
  private ending: { meters: Set<Meter>; written: Promise<void> } | undefined;

  constructor(
    private readonly db: Db,
    private readonly channel: {
      /** Wakes this process's streams waiting on a channel (a write may show a voucher made elsewhere). */
      wake(key: string): void;
      waitForChange(key: string): Promise<void>;
    },
    private readonly log?: Logger,
    flushMs = METERING_FLUSH_MS,
  ) {
    this.reads = new ReadBatch(db);
    setInterval(() => void this.flush(), flushMs).unref();
  }

  /** A meter for one stream on `key`'s channel (several streams of one channel share its ledger). */
  meter(key: string): StreamMeter {
    const meter = this.meters.get(key) ?? { key, row: null, unbilled: 0n, units: 0, stale: true, version: 0, streams: 0 };
    meter.streams += 1;
    this.meters.set(key, meter);
    let released = false;
    return {
      tryCharge: (amount) => {
        if (released || meter.stale || !meter.row || !covers(meter.row, meter.unbilled + amount)) return false;
        meter.unbilled += amount;
        meter.units += 1;
        return true;
      },
      channel: () => (released ? this.reads.read(key) : this.view(meter)),
      waitForUpdate: () => {
        meter.stale = true;
        return this.channel.waitForChange(key);
      },
      release: async () => {
        if (released) return;
        released = true;
        meter.streams -= 1;
        await this.flushEnded(meter);
      },
    };
  }

  /** This process changed `key`'s channel (a voucher, a top-up, a close): its streams read it again. */
  changed(key: string): void {
    const meter = this.meters.get(key);
    if (!meter) return;
    // A read already under way may predate the change: its answer is not kept.
    meter.version += 1;
    meter.stale = true;
  }

  /**
   * Writes an ended stream's ticks with those of the streams ending within a few milliseconds of it:
   * thousands of clients leaving at once (a network drop, a shutdown) make a few writes, not thousands.
   */
  private flushEnded(meter: Meter): Promise<void> {
    if (!this.ending) {
      const ended = new Set<Meter>();
      const written = new Promise<void>((resolve) => setTimeout(resolve, ENDED_WINDOW_MS)).then(() => {
        this.ending = undefined;
        return this.flush([...ended]);
      });
      this.ending = { meters: ended, written };
    }
    this.ending.meters.add(meter);
    return this.ending.written;
  }

  /** Writes the unbilled ticks of `only` (default: every channel metered here). */
  flush(only?: Meter[]): Promise<void> {
    const run = this.writing.then(async () => {
      const due = (only ?? [...this.meters.values()]).filter((meter) => meter.units > 0);
      for (let i = 0; i < due.length; i += FLUSH_CHUNK) await this.write(due.slice(i, i + FLUSH_CHUNK));
      for (const meter of only ?? [...this.meters.values()]) {
        if (meter.streams === 0 && meter.units === 0 && this.meters.get(meter.key) === meter) this.meters.delete(meter.key);
      }
    });
    this.writing = run.catch(() => {});
    return run;
  }

  /** The channel as this process's streams see it: the row read, plus the ticks charged since. */
  private async view(meter: Meter): Promise<ChannelState | null> {
    if (meter.stale || !meter.row) {
      const version = meter.version;
      const row = await this.reads.read(meter.key);
      if (meter.version === version) {
        meter.row = row;
        meter.stale = false;
      }
    }
    return meter.row && { ...meter.row, spent: meter.row.spent + meter.unbilled, units: meter.row.units + meter.units };
  }

  /** One transaction: each channel's unbilled ticks added to its row, where its vouchers still cover them. */
  private async write(meters: Meter[]): Promise<void> {
    const batch = meters.map((meter) => ({ meter, amount: meter.unbilled, units: meter.units, version: meter.version, billed: false }));
    const keys = batch.map((b) => b.meter.key).sort();
    let committing = false;
    let rows: Map<string, ChannelState | null>;
    try {
      rows = await this.db.transaction(async (tx) => {
        const locked = await tx
          .select({ key: mppChannelStore.key, value: sql<string>`${mppChannelStore.value}::text` })
          .from(mppChannelStore)
          .where(inArray(mppChannelStore.key, keys))
          .orderBy(mppChannelStore.key)
          .for('update');
        const state = new Map(locked.map((row) => [row.key, Json.parse(row.value) as ChannelState | null]));
        for (const b of batch) {
          const row = state.get(b.meter.key);
          if (!row || !covers(row, b.amount)) continue;
          state.set(b.meter.key, { ...row, spent: row.spent + b.amount, units: row.units + b.units });
          b.billed = true;
        }
        const written = batch.filter((b) => b.billed).map((b) => ({ key: b.meter.key, value: Json.stringify(state.get(b.meter.key)) }));
        if (written.length > 0) {
          await tx.execute(sql`
            UPDATE mpp_channel_store AS m SET value = v.value::jsonb, updated_at = clock_now()
            FROM jsonb_to_recordset(${JSON.stringify(written)}::jsonb) AS v(key text, value text)
            WHERE m.key = v.key`);
        }
        committing = true;
        return state;
      });
    } catch (error) {
      if (!committing) {
        // Rolled back: the ticks stay unbilled and the next write tries again.
        for (const { meter } of batch) meter.stale = true;
        this.log?.warn({ err: error, channels: batch.length }, 'stream metering: write failed; retried at the next');
        return;
      }
      // The commit's outcome is unknown: the ticks may be billed already, so they are never written again.
      for (const b of batch) this.settled(b.meter, b, null);
      this.log?.error({ err: error, channels: batch.length, ticks: batch.reduce((n, b) => n + b.units, 0) }, 'stream metering: commit outcome unknown; its ticks are not written again');
      return;
    }
    for (const b of batch) {
      this.settled(b.meter, b, rows.get(b.meter.key) ?? null);
      if (!b.billed) this.log?.warn({ channel: b.meter.key, ticks: b.units, amount: b.amount.toString() }, 'stream metering: ticks served that the channel no longer covers were not billed');
      this.channel.wake(b.meter.key);
    }
  }

  /** The written (or given-up) ticks leave the ledger; ticks charged during the write stay. */
  private settled(meter: Meter, written: { amount: bigint; units: number; version: number }, row: ChannelState | null): void {
    // A change this process made during the write (a voucher waiting on the row lock) may be newer than `row`.
    const changedMeanwhile = meter.version !== written.version;
    meter.unbilled -= written.amount;
    meter.units -= written.units;
    meter.version += 1;
    meter.row = row;
    meter.stale = row === null || changedMeanwhile;
  }
}

/** Whether a channel's accepted vouchers still cover `amount` more (mppx's rule for charging a stream). */
function covers(channel: ChannelState, amount: bigint): boolean {
  return !channel.finalized && channel.closeRequestedAt === 0n && channel.highestVoucherAmount - channel.spent >= amount;
}

type Pending<T> = { resolve(value: T): void; reject(error: unknown): void };

/** Channel reads arriving within a few milliseconds, done as one query. */
class ReadBatch {
  private reads = new Map<string, Pending<ChannelState | null>[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly db: Db,
    private readonly windowMs = 20,
  ) {}

  read(key: string): Promise<ChannelState | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.reads.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.reads.set(key, [{ resolve, reject }]);
      this.timer ??= setTimeout(() => void this.flush(), this.windowMs);
    });
  }

  private async flush(): Promise<void> {
    const reads = this.reads;
    this.reads = new Map();
    this.timer = undefined;
    try {
      const rows = await this.db
        .select({ key: mppChannelStore.key, value: sql<string>`${mppChannelStore.value}::text` })
        .from(mppChannelStore)
        .where(inArray(mppChannelStore.key, [...reads.keys()]));
      const values = new Map(rows.map((row) => [row.key, Json.parse(row.value) as ChannelState | null]));
      for (const [key, waiting] of reads) for (const pending of waiting) pending.resolve(values.get(key) ?? null);
    } catch (error) {
      for (const waiting of reads.values()) for (const pending of waiting) pending.reject(error);
    }
  }
}
