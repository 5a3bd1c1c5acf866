/** The agent directory (registrations). Column conventions: src/db/columns.ts. */
import { index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from '../../db/columns.js';

/** Agents registered through POST /api/mpp/agents/register (directory and profiles, 4.6). */
export const agentRegistrations = pgTable(
  'agent_registrations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    identifier: text('identifier').notNull(),
    displayName: text('display_name').notNull(),
    description: text('description'),
    erc8004AgentId: text('erc8004_agent_id'),
    solanaPublicKey: text('solana_public_key'),
    ownerAddress: text('owner_address'),
    capabilities: jsonb('capabilities').notNull().default([]),
    feePaymentId: uuid('fee_payment_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('agent_registrations_identifier_key').on(t.identifier), index('agent_registrations_fee_payment_idx').on(t.feePaymentId)],
);
