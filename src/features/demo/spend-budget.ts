import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { demoAgentSpend } from './tables.js';

/** What demos may still spend: reserved before a payment is signed, given back when it was not charged. */
export interface SpendBudget {
  /** Base units; null: no cap (local mode, where each run's faucet-funded wallet is the bound). */
  readonly cap: bigint | null;
  spent(): Promise<bigint>;
  /** False, reserving nothing, when `amount` would take spending above the cap. */
  reserve(amount: bigint): Promise<boolean>;
  release(amount: bigint): Promise<void>;
}

export const UNCAPPED: SpendBudget = {
  cap: null,
  spent: async () => 0n,
  reserve: async () => true,
  release: async () => {},
};

/**
 * The live demo wallet's spending, one row per wallet shared by every instance and kept across
 * restarts. A reservation is one compare-and-set statement (`spent + amount <= cap`), so concurrent
 * runs on any number of instances never overshoot the cap.
 */
export class DatabaseSpendBudget implements SpendBudget {
  constructor(
    private readonly database: Database,
    private readonly wallet: string,
    readonly cap: bigint,
  ) {}

  async spent(): Promise<bigint> {
    const [row] = await this.database.db.select({ spent: demoAgentSpend.spent }).from(demoAgentSpend).where(eq(demoAgentSpend.wallet, this.wallet));
    return row?.spent ?? 0n;
  }

  async reserve(amount: bigint): Promise<boolean> {
    if (amount > this.cap) return false;
    const rows = await this.database.db
      .insert(demoAgentSpend)
      .values({ wallet: this.wallet, spent: amount })
      .onConflictDoUpdate({
        target: demoAgentSpend.wallet,
        set: { spent: sql`${demoAgentSpend.spent} + ${amount.toString()}::numeric`, updatedAt: clockNow },
        setWhere: sql`${demoAgentSpend.spent} + ${amount.toString()}::numeric <= ${this.cap.toString()}::numeric`,
      })
      .returning({ spent: demoAgentSpend.spent });
    return rows.length === 1;
  }

  async release(amount: bigint): Promise<void> {
    await this.database.db
      .update(demoAgentSpend)
      .set({ spent: sql`${demoAgentSpend.spent} - ${amount.toString()}::numeric`, updatedAt: clockNow })
      .where(eq(demoAgentSpend.wallet, this.wallet));
  }
}
