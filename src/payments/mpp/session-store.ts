import { desc, eq, sql } from 'drizzle-orm';
import { Json } from 'ox';
import type { Logger } from 'pino';
import { getAddress } from 'viem';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { mppChannelStore, mppSessions, paymentReceipts } from '../tables.js';
import { recordOwedRefund, type OwedRefund } from '../store.js';
import { StreamMetering, type StreamMeter } from './metering.js';

/**
 * MPP session channel state in PostgreSQL (mppx's Store: get/put/delete/update), so every instance
 * sees one channel's vouchers and spend. `update` is a row-locked read-modify-write in one
 * transaction. Values hold bigints: they are stored as ox's JSON (bigints tagged), as mppx's own
 * stores do.
 */

type Change = { op: 'noop'; result: unknown } | { op: 'set'; value: unknown; result: unknown } | { op: 'delete'; result: unknown };

/** The fields of mppx's channel state this service reads and writes (ChannelStore.State). */
export interface ChannelState {
  channelId: string;
  payer: string;
  deposit: bigint;
  highestVoucherAmount: bigint;
  spent: bigint;
  units: number;
  settledOnChain: bigint;
  finalized: boolean;
  closeRequestedAt: bigint;
  /** When the channel was opened (ISO 8601). */
  createdAt: string;
  chainId: number;
  token: string;
}

export class PgChannelStore {
  private readonly waiting = new Map<string, { promise: Promise<void>; resolve(): void }>();

  constructor(
    private readonly db: Db,
    log?: Logger,
  ) {
    this.metering = new StreamMetering(db, { wake: (key) => this.wake(key), waitForChange: (key) => this.waitForChange(key) }, log);
    // mppx calls the store's methods detached from it.
    this.get = this.get.bind(this);
    this.put = this.put.bind(this);
    this.delete = this.delete.bind(this);
    this.update = this.update.bind(this);
  }

  async get(key: string): Promise<unknown> {
    const [row] = await this.db
      .select({ value: sql<string>`${mppChannelStore.value}::text` })
      .from(mppChannelStore)
      .where(eq(mppChannelStore.key, key));
    return row ? (Json.parse(row.value) as unknown) : null;
  }

  async put(key: string, value: unknown): Promise<void> {
    const json = sql`${Json.stringify(value)}::jsonb`;
    await this.db
      .insert(mppChannelStore)
      .values({ key, value: json })
      .onConflictDoUpdate({ target: mppChannelStore.key, set: { value: json, updatedAt: clockNow } });
    this.changed(key);
  }

  async delete(key: string): Promise<void> {
    await this.db.delete(mppChannelStore).where(eq(mppChannelStore.key, key));
    this.changed(key);
  }

  /**
   * mppx's atomic update: `fn` sees the current value under a row lock and says what to write;
   * `alongside` writes what goes with that decision in the same transaction.
   */
  async update<R>(key: string, fn: (current: unknown) => Change, alongside?: (tx: Db, result: R) => Promise<void>): Promise<R> {
    const change = await this.db.transaction(async (tx) => {
      // A placeholder row gives a first writer something to lock; JSON null reads as absent.
      await tx.insert(mppChannelStore).values({ key, value: sql`'null'::jsonb` }).onConflictDoNothing();
      const [row] = await tx
        .select({ value: sql<string>`${mppChannelStore.value}::text` })
        .from(mppChannelStore)
        .where(eq(mppChannelStore.key, key))
        .for('update');
      const result = fn(row ? (Json.parse(row.value) as unknown) : null);
      if (result.op === 'set') {
        await tx
          .update(mppChannelStore)
          .set({ value: sql`${Json.stringify(result.value)}::jsonb`, updatedAt: clockNow })
          .where(eq(mppChannelStore.key, key));
      } else if (result.op === 'delete') {
        await tx.delete(mppChannelStore).where(eq(mppChannelStore.key, key));
      }
      await alongside?.(tx, result.result as R);
      return result;
    });
    if (change.op !== 'noop') this.changed(key);
    return change.result as R;
  }

  /**
   * Resolves on this process's next write to `key` (other instances' writes are seen by polling).
   * Everyone waiting on a key shares one promise: mppx asks again on every poll of a stream waiting
   * for a voucher, and a listener each time would pile up.
   */
  waitForChange(key: string): Promise<void> {
    let waiting = this.waiting.get(key);
    if (!waiting) {
      let resolve = () => {};
      waiting = { promise: new Promise<void>((done) => (resolve = done)), resolve };
      this.waiting.set(key, waiting);
    }
    return waiting.promise;
  }

  /** This process wrote `key`: its streams' ledgers read it again, and the streams waiting on it wake. */
  private changed(key: string): void {
    this.metering.changed(key);
    this.wake(key);
  }

  private wake(key: string): void {
    const waiting = this.waiting.get(key);
    this.waiting.delete(key);
    waiting?.resolve();
  }

  // ---- charging --------------------------------------------------------------------------------

  /**
   * Charges `amount` against a channel's accepted vouchers (mppx's deduction rule): the signed
   * cumulative amount bounds what can ever be spent, so a replayed voucher buys nothing twice.
   */
  async charge(channelId: string, amount: bigint): Promise<{ ok: boolean; channel: ChannelState | null }> {
    return this.update(channelKey(channelId), (value) => {
      const current = value as ChannelState | null;
      if (!current) return { op: 'noop', result: { ok: false, channel: null } };
      if (current.finalized || current.closeRequestedAt !== 0n || current.highestVoucherAmount - current.spent < amount) {
        return { op: 'noop', result: { ok: false, channel: current } };
      }
      const next = { ...current, spent: current.spent + amount, units: current.units + 1 };
      return { op: 'set', value: next, result: { ok: true, channel: next } };
    });
  }

  /**
   * Gives back a charge of `amount` (the handler failed, so the call is not charged). What a close
   * (pending or done) or a settlement captured stays spent: the channel can no longer give it
   * back, so the amount is owed to the payer instead, as a refund the reconciler sends.
   */
  async refund(channelId: string, amount: bigint, failed: Pick<OwedRefund, 'route' | 'httpStatus' | 'requestId' | 'employerId'>): Promise<'given back' | 'owed' | null> {
    let owed: OwedRefund | null = null;
    return this.update(
      channelKey(channelId),
      (value) => {
        const current = value as ChannelState | null;
        if (!current || current.spent < amount) return { op: 'noop', result: null };
        const captured = current.finalized || current.closeRequestedAt !== 0n ? current.spent : current.settledOnChain;
        if (current.spent - amount < captured) {
          const asset = getAddress(current.token);
          owed = { ...failed, network: `eip155:${current.chainId}`, payer: getAddress(current.payer), amount, asset, reference: channelKey(channelId) };
          return { op: 'noop', result: 'owed' };
        }
        return { op: 'set', value: { ...current, spent: current.spent - amount, units: Math.max(0, current.units - 1) }, result: 'given back' };
      },
      async (tx) => {
        if (owed) await recordOwedRefund(tx, owed);
      },
    );
  }

  async channel(channelId: string): Promise<ChannelState | null> {
    return (await this.get(channelKey(channelId))) as ChannelState | null;
  }

  /** The ledger access of one event stream on `channelId` (src/payments/mpp/metering.ts). */
  meter(channelId: string): StreamMeter {
    return this.metering.meter(channelKey(channelId));
  }

  /** Work a stream does as it ends (its ticks written, its use recorded), which shutdown waits for. */
  ending<T>(work: Promise<T>): Promise<T> {
    this.endings.add(work);
    void work.finally(() => this.endings.delete(work)).catch(() => {});
    return work;
  }

  /** Shutdown, before the database closes: the streams' endings finish and every unbilled tick is written. */
  async settle(): Promise<void> {
    while (this.endings.size > 0) await Promise.allSettled([...this.endings]);
    await this.metering.flush();
  }

  private readonly metering: StreamMetering;
  private readonly endings = new Set<Promise<unknown>>();
}

/** mppx keys channel state by the lower-case channel id. */
export const channelKey = (channelId: string) => channelId.toLowerCase();

// ---- session history -----------------------------------------------------------------------------

export interface SessionUse {
  channelId: string;
  route: string;
  employerId: string | null;
  /** What this request or stream was charged, and for how many units. */
  charged: bigint;
  units: number;
  receipt: Record<string, unknown>;
}

/**
 * Records a paid use of a session: the session's row (mirroring the channel's state, so the
 * history needs no channel store reads) and a receipt for the activity feed.
 */
export async function recordSessionUse(db: Db, channel: ChannelState, use: SessionUse): Promise<void> {
  const payer = getAddress(channel.payer); // mppx keeps addresses in lower case
  const status = channel.finalized ? 'closed' : channel.closeRequestedAt !== 0n ? 'closing' : 'open';
  const state = {
    acceptedCumulative: channel.highestVoucherAmount,
    spent: channel.spent,
    settled: channel.settledOnChain,
    status,
    updatedAt: clockNow,
    ...(status === 'closed' ? { closedAt: clockNow } : {}),
  } as const;
  await db.transaction(async (tx) => {
    await tx
      .insert(mppSessions)
      .values({
        id: channelKey(use.channelId),
        payer,
        route: use.route,
        employerId: use.employerId,
        deposit: channel.deposit,
        // mppx's own (real-time) record of the channel's opening; only shown, no time rule reads it.
        openedAt: new Date(channel.createdAt),
        ...state,
      })
      .onConflictDoUpdate({
        target: mppSessions.id,
        set: {
          ...state,
          employerId: sql`coalesce(${mppSessions.employerId}, excluded.employer_id)`,
          // A close zeroes the channel's deposit (mppx); the history keeps the deposit it had, top-ups included.
          deposit: sql`greatest(${mppSessions.deposit}, excluded.deposit)`,
          openedAt: sql`least(${mppSessions.openedAt}, excluded.opened_at)`,
        },
      });
    if (use.units === 0) return;
    await tx.insert(paymentReceipts).values({
      sessionId: channelKey(use.channelId),
      route: use.route,
      rail: 'A',
      payer,
      amount: use.charged,
      reference: channelKey(use.channelId),
      // Covered by a signed voucher; the money moves when the channel is settled or closed.
      status: 'voucher',
      receipt: use.receipt,
      employerId: use.employerId,
    });
  });
}

/** An employer's sessions, newest activity first. */
export async function listEmployerSessions(db: Db, employerId: string, page: { offset: number; limit: number }) {
  const rows = await db
    .select()
    .from(mppSessions)
    .where(eq(mppSessions.employerId, employerId))
    .orderBy(desc(mppSessions.updatedAt))
    .limit(page.limit)
    .offset(page.offset);
  const [total] = await db.select({ n: sql<number>`count(*)::int` }).from(mppSessions).where(eq(mppSessions.employerId, employerId));
  return { rows, total: total?.n ?? 0 };
}
