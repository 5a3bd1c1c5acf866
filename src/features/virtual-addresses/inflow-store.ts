import { and, desc, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { feedSourceQuery, toFeedRow, type FeedPosition, type FeedRow } from '../../db/keyset.js';
import { indexerCheckpoints, indexerCursors, virtualAddressInflows } from './tables.js';

export type NewInflow = typeof virtualAddressInflows.$inferInsert;

/** A cursor's last indexed block and its hash then (null: indexed before hashes were kept). */
export interface Cursor {
  lastBlock: bigint;
  lastBlockHash: string | null;
}

/** A block of the chain as this run saw it. */
export interface BlockRef {
  number: bigint;
  hash: string;
}

/** Checkpoints kept behind a cursor: a reorg deeper than this rescans the indexer's window instead. */
const CHECKPOINT_BLOCKS = 5_000n;

/** The named cursors that exist. */
export async function readCursors(db: Db, names: string[]): Promise<Map<string, Cursor>> {
  if (names.length === 0) return new Map();
  const rows = await db.select().from(indexerCursors).where(inArray(indexerCursors.name, names));
  return new Map(rows.map((row) => [row.name, { lastBlock: row.lastBlock, lastBlockHash: row.lastBlockHash }]));
}

/**
 * Moves the cursors from `from` (null: they do not exist yet) to `to`, each only if it is still
 * where this run found it (compare-and-set), and records `to` as a checkpoint of those that moved.
 * Answers the names that moved: one another instance moved or rolled back in between stays put.
 */
export async function advanceCursors(db: Db, names: string[], from: BlockRef | null, to: BlockRef): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const moved = from
    ? await db
        .update(indexerCursors)
        .set({ lastBlock: to.number, lastBlockHash: to.hash, updatedAt: clockNow })
        .where(
          and(
            inArray(indexerCursors.name, names),
            eq(indexerCursors.lastBlock, from.number),
            or(eq(indexerCursors.lastBlockHash, from.hash), isNull(indexerCursors.lastBlockHash)),
          ),
        )
        .returning({ name: indexerCursors.name })
    : await db
        .insert(indexerCursors)
        .values(names.map((name) => ({ name, lastBlock: to.number, lastBlockHash: to.hash })))
        .onConflictDoNothing()
        .returning({ name: indexerCursors.name });
  if (moved.length === 0) return new Set();
  await db
    .insert(indexerCheckpoints)
    .values(moved.map(({ name }) => ({ name, blockNumber: to.number, blockHash: to.hash })))
    .onConflictDoUpdate({ target: [indexerCheckpoints.name, indexerCheckpoints.blockNumber], set: { blockHash: sql`excluded.block_hash` } });
  await db.delete(indexerCheckpoints).where(
    and(
      inArray(
        indexerCheckpoints.name,
        moved.map(({ name }) => name),
      ),
      lt(indexerCheckpoints.blockNumber, to.number - CHECKPOINT_BLOCKS),
    ),
  );
  return new Set(moved.map(({ name }) => name));
}

/** A cursor's checkpoints below `block`, newest first. */
export function checkpointsBelow(db: Db, name: string, block: bigint): Promise<BlockRef[]> {
  return db
    .select({ number: indexerCheckpoints.blockNumber, hash: indexerCheckpoints.blockHash })
    .from(indexerCheckpoints)
    .where(and(eq(indexerCheckpoints.name, name), lt(indexerCheckpoints.blockNumber, block)))
    .orderBy(desc(indexerCheckpoints.blockNumber))
    .limit(100);
}

/**
 * Sets a cursor back to the fork point if it is still where it was read (compare-and-set), and
 * deletes the employer's inflow rows and the cursor's checkpoints above it. Answers the rows
 * deleted, or null when another instance moved the cursor first (then nothing changes).
 */
export async function rollBackCursor(db: Db, name: string, employerId: string, from: Cursor, fork: BlockRef): Promise<number | null> {
  const [moved] = await db
    .update(indexerCursors)
    .set({ lastBlock: fork.number, lastBlockHash: fork.hash, updatedAt: clockNow })
    .where(
      and(
        eq(indexerCursors.name, name),
        eq(indexerCursors.lastBlock, from.lastBlock),
        from.lastBlockHash === null ? isNull(indexerCursors.lastBlockHash) : eq(indexerCursors.lastBlockHash, from.lastBlockHash),
      ),
    )
    .returning({ name: indexerCursors.name });
  if (!moved) return null;
  await db.delete(indexerCheckpoints).where(and(eq(indexerCheckpoints.name, name), gt(indexerCheckpoints.blockNumber, fork.number)));
  const removed = await db
    .delete(virtualAddressInflows)
    .where(and(eq(virtualAddressInflows.employerId, employerId), gt(virtualAddressInflows.blockNumber, fork.number)))
    .returning({ txHash: virtualAddressInflows.txHash });
  return removed.length;
}

/** Inserts the inflows once each, by (tx_hash, log_index); answers how many were new. */
export async function insertInflows(db: Db, rows: NewInflow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await db.insert(virtualAddressInflows).values(rows).onConflictDoNothing().returning({ txHash: virtualAddressInflows.txHash });
  return inserted.length;
}

// ---- read model of another feature: the portal's activity feed ----

/** Transfers to the employees' virtual deposit addresses, as activity cards: at the block's time (else when indexed). */
export async function virtualInflowFeed(db: Db, employeeIds: string[], before: FeedPosition | null, limit: number): Promise<FeedRow<'virtual_inflow'>[]> {
  const id = sql`(${virtualAddressInflows.txHash} || ':' || ${virtualAddressInflows.logIndex})`;
  const q = feedSourceQuery('virtual_inflow', sql`coalesce(${virtualAddressInflows.blockTimestamp}, ${virtualAddressInflows.createdAt})`, id, before);
  const rows = await db
    .select({ id: sql<string>`${id}`, at: q.at, amount: virtualAddressInflows.amount, inflow: virtualAddressInflows })
    .from(virtualAddressInflows)
    .where(and(inArray(virtualAddressInflows.employeeId, employeeIds), q.after))
    .orderBy(...q.order)
    .limit(limit);
  return rows.map(({ inflow, ...row }) =>
    toFeedRow('virtual_inflow')({
      ...row,
      details: {
        direction: 'in',
        employee_id: inflow.employeeId,
        employer_id: inflow.employerId,
        tx_hash: inflow.txHash,
        log_index: inflow.logIndex,
        token_address: inflow.tokenAddress,
        virtual_address: inflow.virtualAddress,
        sender_address: inflow.senderAddress,
        block_number: inflow.blockNumber.toString(),
      },
    }),
  );
}
