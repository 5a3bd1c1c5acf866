import { sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import type { Logger } from '../log.js';

/** Never more than this in one advance (a year): a typo of a few zeros should not age the data by millennia. */
export const MAX_ADVANCE_SECONDS = 366 * 24 * 3600;

/** How often a local-mode process rereads the offset another instance may have advanced. */
const FOLLOW_INTERVAL_MS = 1_000;

/** Serialises advances across instances (pg_advisory_xact_lock). */
const ADVANCE_LOCK_ID = 4_217_845_303; // 301: migrations, 302: the chain journal (src/chains/embedded/ownership.ts)

/** The offset, as SQL's clock reads it: the one place it is kept. */
async function storedOffsetSeconds(db: Db): Promise<number> {
  const { rows } = await db.execute<{ offset: string }>(sql`SELECT extract(epoch FROM clock_now() - now())::bigint AS offset`);
  return Number(rows[0]!.offset);
}

/**
 * The service's time: the real time plus the seconds local mode's dev clock was advanced by. Every time
 * rule reads it (expiries, windows, token lifetimes, schedules, jobs); SQL reads the same time as
 * `clock_now()`. The offset lives in the database, as a constant in the body of `clock_now()`
 * (migration 0022), so every instance on it agrees:
 * in live mode it is zero and never moves (the advance route does not exist there, and live mode
 * refuses to start on a database whose clock was advanced).
 *
 * Times exchanged with a client's own clock stay on the real time: request-signature windows
 * (X-Agent-Timestamp), payment-protocol expiries checked by the protocol libraries, identity tokens
 * from the identity provider, and durations measured inside the process (docs/decisions.md).
 */
export class ServiceClock {
  private offsetMs = 0;
  private follower: NodeJS.Timeout | undefined;

  /** Milliseconds since the epoch, by the service's time. */
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  /** Whole seconds since the epoch, by the service's time. */
  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  /** Seconds the dev clock is ahead of the real time. */
  get offsetSeconds(): number {
    return this.offsetMs / 1000;
  }

  /** Reads the offset the database holds (a read that raced an advance never takes this process back). */
  async sync(db: Db): Promise<number> {
    this.offsetMs = Math.max(this.offsetMs, (await storedOffsetSeconds(db)) * 1000);
    return this.offsetSeconds;
  }

  /** Local mode: keeps up with advances made by other instances on the same database. */
  follow(db: Db, onError: (error: unknown) => void): void {
    this.follower ??= setInterval(() => this.sync(db).catch(onError), FOLLOW_INTERVAL_MS).unref();
  }

  stop(): void {
    clearInterval(this.follower);
    this.follower = undefined;
  }

  /**
   * Moves the service's time forward by `seconds` for every instance on the database. Only the local
   * mode's dev clock calls it. Advances add up, so two at once both count and time never goes back:
   * an advisory lock orders them, and each writes the new total into clock_now() before it commits.
   */
  async advance(db: Db, seconds: number): Promise<number> {
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS) throw new RangeError(`cannot advance the clock by ${seconds} s`);
    const total = await db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${ADVANCE_LOCK_ID})`);
      const offset = (await storedOffsetSeconds(tx)) + seconds;
      // A constant in the body, so the planner inlines it; `offset` is an integer we computed.
      await tx.execute(sql.raw(`CREATE OR REPLACE FUNCTION clock_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$ SELECT now() + interval '${offset} seconds' $$`));
      return offset;
    });
    this.offsetMs = Math.max(this.offsetMs, total * 1000);
    return this.offsetSeconds;
  }
}

/**
 * At start-up: the clock reads the database's offset. Local mode follows the advances other instances
 * make; live mode refuses a database whose clock was advanced (a local database pointed at by mistake).
 */
export async function startServiceClock(mode: 'local' | 'live', database: Database, log: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  const offsetSeconds = await database.clock.sync(database.db);
  if (mode === 'live' && offsetSeconds !== 0) {
    throw new Error(`this database's clock was advanced by ${offsetSeconds} s in local mode (clock_now()): live mode will not run on it`);
  }
  if (mode === 'local') database.clock.follow(database.db, (error) => log.warn({ err: error }, 'could not read the service clock'));
  if (offsetSeconds !== 0) log.info({ offsetSeconds }, 'service clock ahead of the real time (dev clock)');
}
