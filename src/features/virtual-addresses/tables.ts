/** Virtual deposit addresses (spec 2.13): inflows and the indexer cursors. Column conventions: src/db/columns.ts. */
import { bigint, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { money, createdAt, updatedAt, tstz } from '../../db/columns.js';
import { employees, employers } from '../employers/tables.js';

export const virtualAddressInflows = pgTable(
  'virtual_address_inflows',
  {
    txHash: text('tx_hash').notNull(),
    logIndex: integer('log_index').notNull(),
    employerId: uuid('employer_id')
      .notNull()
      .references(() => employers.id),
    employeeId: uuid('employee_id').references(() => employees.id),
    tokenAddress: text('token_address').notNull(),
    virtualAddress: text('virtual_address').notNull(),
    userTag: text('user_tag').notNull(),
    amount: money('amount').notNull(),
    blockNumber: bigint('block_number', { mode: 'bigint' }).notNull(),
    /** The `from` of the paired sender -> virtual leg in the same transaction, when there is one. */
    senderAddress: text('sender_address'),
    /** When the block was mined (the activity card's time); null only for rows indexed before migration 0007. */
    blockTimestamp: tstz('block_timestamp'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.txHash, t.logIndex] }),
    index('virtual_address_inflows_employee_idx').on(t.employeeId, t.blockNumber),
    index('virtual_address_inflows_employer_idx').on(t.employerId, t.blockNumber),
  ],
);

/** Where a block-range indexer resumes after a restart. */
export const indexerCursors = pgTable('indexer_cursors', {
  name: text('name').primaryKey(),
  lastBlock: bigint('last_block', { mode: 'bigint' }).notNull(),
  /** The hash of `last_block` when it was indexed: another hash there now means a reorg. Null: indexed before hashes were kept. */
  lastBlockHash: text('last_block_hash'),
  updatedAt: updatedAt(),
});

/** Hashes of blocks a cursor stopped at (recent ones): after a reorg, the newest still on the chain is the fork point. */
export const indexerCheckpoints = pgTable(
  'indexer_checkpoints',
  {
    name: text('name').notNull(),
    blockNumber: bigint('block_number', { mode: 'bigint' }).notNull(),
    blockHash: text('block_hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.name, t.blockNumber] })],
);
