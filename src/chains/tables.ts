/** Embedded chains (local mode only: their state is the replay of a journal) and the chain writers shared by every instance. Column conventions: src/db/columns.ts. */
import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { createdAt, clockNow } from '../db/columns.js';

/** One embedded chain (`tempo`, `base`, `solana`): its local-only operator key and deployment. */
export const embeddedChains = pgTable('embedded_chains', {
  chain: text('chain').primaryKey(),
  /** Signs deployments, mints and agent transactions on this embedded chain only: its tokens live
   * at local addresses, so nothing it signs is worth anything on a real chain. */
  operatorKey: text('operator_key').notNull(),
  /** Unix seconds of the genesis block: fixed, so a replay can reproduce every later block's time. */
  genesisTime: bigint('genesis_time', { mode: 'bigint' }).notNull(),
  deployment: jsonb('deployment').$type<Record<string, string>>(),
  createdAt: createdAt(),
});

/**
 * Every state-changing call made to an embedded chain, in order. Written before the call runs
 * (EVM calls are stamped with their block's timestamp after); replayed at start-up to rebuild
 * the same state.
 */
export const embeddedChainJournal = pgTable(
  'embedded_chain_journal',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    chain: text('chain').notNull(),
    method: text('method').notNull(),
    params: jsonb('params').notNull(),
    blockTimestamp: bigint('block_timestamp', { mode: 'bigint' }),
    createdAt: createdAt(),
  },
  (t) => [index('embedded_chain_journal_chain_idx').on(t.chain, t.id)],
);

/**
 * The next nonce of each (chain, signing key) the service writes with, shared by every instance:
 * a write takes it under this row's lock in the transaction that records its signed bytes
 * (chain_writes), so two instances never sign two transactions with one nonce.
 */
export const chainSigners = pgTable(
  'chain_signers',
  {
    chain: text('chain').notNull(),
    address: text('address').notNull(),
    nextNonce: bigint('next_nonce', { mode: 'number' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().default(clockNow),
  },
  (t) => [primaryKey({ columns: [t.chain, t.address] })],
);

/**
 * Signed transactions not yet known to be mined, by nonce: what a crash between signing and
 * broadcasting leaves behind. The nonce watcher rebroadcasts them, or fills a nonce whose
 * transaction the chain refuses with a zero-value transfer, so no gap blocks later writes.
 * (`signed`, allowed by the check since migration 0010, is not written yet: docs/decisions.md,
 * "Reconcilers own nothing in flight".)
 */
export const chainWrites = pgTable(
  'chain_writes',
  {
    chain: text('chain').notNull(),
    address: text('address').notNull(),
    nonce: bigint('nonce', { mode: 'number' }).notNull(),
    hash: text('hash').notNull(),
    raw: text('raw').notNull(),
    /** `write` (a caller's transaction) or `filler` (a zero-value transfer that closes a gap). */
    kind: text('kind').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.chain, t.address, t.nonce] }), check('chain_writes_kind', sql`kind IN ('signed', 'write', 'filler')`)],
);
