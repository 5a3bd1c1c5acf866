/** The live demo agent. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { money, updatedAt } from '../../db/columns.js';

/**
 * What the live demo agent has spent from one wallet, on every instance since the row was made.
 * A run reserves a payment with a compare-and-set (`spent + amount <= cap`) before signing it.
 */
export const demoAgentSpend = pgTable('demo_agent_spend', {
  wallet: text('wallet').primaryKey(),
  spent: money('spent').notNull().default(sql`0`),
  updatedAt: updatedAt(),
});
