import type { LocalChains } from '../../chains/embedded/index.js';
import type { Database } from '../../db/client.js';

/** `GET /api/dev/clock` and the answer of an advance. */
export interface ClockReading {
  now: string;
  unix: number;
  offset_seconds: number;
}

/**
 * Local mode's time travel: moves the service clock (src/clock/clock.ts) and the embedded chains'
 * clocks that carry our time rules forward together, so an expiry passes for the service and the
 * chain alike.
 */
export class DevClock {
  private readonly advanced: (() => Promise<void>)[] = [];

  constructor(private readonly deps: { database: Database; chains: LocalChains }) {}

  /** `then` runs after each advance (the service runs its scheduled jobs, so what fell due acts at once). */
  onAdvance(then: () => Promise<void>): void {
    this.advanced.push(then);
  }

  read(): ClockReading {
    const { clock } = this.deps.database;
    return { now: clock.now().toISOString(), unix: clock.nowSeconds(), offset_seconds: clock.offsetSeconds };
  }

  /**
   * Tempo (wage vesting, session channels) and Solana (escrow expiry) move with the service. Base
   * does not: no rule of ours reads its time, and x402 authorizations on it carry a validBefore a
   * client takes from its own clock, which a Base clock ahead would refuse (docs/decisions.md).
   * The chains move first: if the service's advance then failed, the chains would be ahead, which an
   * expiry check tolerates, where the service ahead of the chain would send refunds the chain refuses.
   */
  async advance(seconds: number): Promise<ClockReading> {
    const { database, chains } = this.deps;
    await chains.tempo.evm.request({ method: 'evm_increaseTime', params: [seconds] } as never);
    await chains.tempo.evm.request({ method: 'evm_mine' } as never); // the latest block shows the new time at once
    await chains.solana.advanceClock(seconds);
    await database.clock.advance(database.db, seconds);
    for (const then of this.advanced) await then();
    return this.read();
  }
}
