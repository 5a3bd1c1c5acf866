import { BlockNotFoundError, getAddress, type Address, type Hex, type PublicClient } from 'viem';
import { transferEvent } from '../../chains/evm/abis.js';
import type { TokenTransfer } from '../../chains/evm/token-chain.js';
import type { Database } from '../../db/client.js';
import { virtualMasterStore } from '../employers/index.js';
import { userTag } from './address.js';
import {
  advanceCursors,
  checkpointsBelow,
  insertInflows,
  readCursors,
  rollBackCursor,
  type BlockRef,
  type Cursor,
  type NewInflow,
} from './inflow-store.js';

/** How far back a run looks (spec 4.8: "about the last 5,000 blocks"), and at most how many blocks it scans. */
export const DEFAULT_MAX_BLOCKS = 5_000;
/** Blocks per `eth_getLogs` call: many RPC providers refuse wider ranges. */
export const DEFAULT_CHUNK_BLOCKS = 1_000;
/** Recipients (masters, or virtual addresses) per `eth_getLogs` call: an OR over the `to` topic. */
const MASTERS_PER_QUERY = 100;

/**
 * USD TIP-20 tokens on Tempo mainnet whose transfers to a master the indexer reads in live mode
 * (spec 4.8: "the scanned set is four tokens"; addresses from viem's Tempo token list). The
 * configured payroll stablecoin is always scanned too, if it is not one of them.
 */
export const TEMPO_KNOWN_USD_TOKENS: Record<string, Address> = {
  pathUSD: '0x20c0000000000000000000000000000000000000',
  'USDC.e': '0x20C000000000000000000000b9537d11c60E8b50',
  USDT0: '0x20c00000000000000000000014f22ca97301eb73',
  USD1: '0x20c000000000000000000000111111111e910f0f',
};

/**
 * The tokens to scan: live mode, the four known tokens and the configured stablecoin; local mode,
 * the embedded chain's one stablecoin (nothing is deployed at the real addresses there).
 */
export function inflowTokens(mode: 'local' | 'live', stablecoin: Address): Address[] {
  const all = mode === 'live' ? [stablecoin, ...Object.values(TEMPO_KNOWN_USD_TOKENS)] : [stablecoin];
  return [...new Map(all.map((token) => [token.toLowerCase(), getAddress(token)])).values()];
}

/** What the indexer needs of the Tempo chain port. */
export interface InflowChain {
  connection: { publicClient: PublicClient };
  blockNumber(): Promise<bigint>;
}

/** What the indexer is built from. */
export interface IndexerOptions {
  database: Database;
  chain: InflowChain;
  /** The TIP-20 tokens whose transfers are scanned. */
  tokens: Address[];
  /** Blocks mined on top of a block before its inflows are recorded (config VIRTUAL_INFLOW_CONFIRMATIONS). */
  confirmations: number;
}

export interface IndexOptions {
  /** Most blocks one run scans per master; also how far back a master without a cursor starts. */
  maxBlocks?: number;
  /** Blocks per log query. */
  chunk?: number;
  /** Stops between chunks (what was written stays, the cursor says where to resume). */
  signal?: AbortSignal;
}

export interface IndexRunSummary {
  /** The chain's head when the run started. */
  head: bigint;
  /** The newest block deep enough to index: head - confirmations. */
  confirmed: bigint;
  /** The block ranges scanned, one per group of masters that shared a cursor. */
  ranges: { fromBlock: bigint; toBlock: bigint; masters: number }[];
  /** Virtual -> master legs found (new or already indexed). */
  found: number;
  /** Rows written this run. */
  inserted: number;
  /** Of the legs found, those whose user tag matches no employee of the master's employer. */
  unattributed: number;
  /** Cursors a reorg had overtaken: rolled back to `forkBlock`, with `removed` rows of orphaned blocks deleted. */
  reorgs: { employerId: string; forkBlock: bigint; removed: number }[];
}

interface Master {
  employerId: string;
  masterId: Hex;
  address: Address;
  cursorName: string;
  /** userTag -> employee id, for this employer. */
  tags: Map<string, string>;
}

/** Masters that resume from the same block of the same chain: they share their log queries. */
interface Group {
  start: bigint;
  /** The block before `start` as indexed (null: the masters have no cursor yet). */
  base: BlockRef | null;
  masters: Master[];
}

const VIRTUAL_MAGIC = 'fd'.repeat(10);
export const cursorName = (employerId: string) => `virtual-inflows:${employerId}`;

/** masterId and userTag of a virtual address, or null when it is not one (spec 2.13). */
export function decodeVirtualAddress(address: Address): { masterId: Hex; tag: Hex } | null {
  const hex = address.toLowerCase();
  if (hex.slice(10, 30) !== VIRTUAL_MAGIC) return null;
  return { masterId: `0x${hex.slice(2, 10)}`, tag: `0x${hex.slice(30)}` };
}

/**
 * The `index-virtual-inflows` job's work (spec 4.8, 6): a transfer to an employee's virtual
 * address emits `Transfer(sender, virtual)` then `Transfer(virtual, master)`. For every employer
 * with a registered master it reads the second leg (`to` = master) on each scanned token, keeps
 * those whose `from` is a virtual address of that master's id, decodes the user tag, attributes
 * it to the employee whose `userTag(employerId, employeeId)` it is (none: stored unattributed,
 * `employee_id` null) and writes one row per (tx_hash, log_index). The sender is the `from` of the
 * paired first leg of the same transaction.
 *
 * Only blocks `confirmations` deep are read. Each master has a cursor (the last indexed block and
 * its hash). A run first checks each cursor's hash against the chain: a different one means a reorg
 * went below it, and the cursor goes back to its newest checkpoint still on the chain, taking the
 * employer's rows above it back. It then scans from the block after the cursor, at most `maxBlocks`
 * blocks (catching up over several runs after downtime); a master without one starts `maxBlocks`
 * back. Block ranges are chunked; a chunk's rows and the cursors move in one transaction, each
 * cursor by compare-and-set, so a crash resumes after the last written chunk and an instance that
 * lost a race (another moved or rolled back the cursor) writes nothing for that master.
 */
export class VirtualInflowIndexer {
  private readonly confirmations: bigint;

  private readonly database: Database;
  private readonly chain: InflowChain;
  private readonly tokens: Address[];

  constructor({ database, chain, tokens, confirmations }: IndexerOptions) {
    if (tokens.length === 0) throw new Error('the inflow indexer needs at least one token');
    if (!Number.isInteger(confirmations) || confirmations < 0) throw new Error('confirmations must be a whole number of blocks');
    this.database = database;
    this.chain = chain;
    this.tokens = tokens;
    this.confirmations = BigInt(confirmations);
  }

  async indexVirtualInflows(options: IndexOptions = {}): Promise<IndexRunSummary> {
    const maxBlocks = BigInt(options.maxBlocks ?? DEFAULT_MAX_BLOCKS);
    const chunk = BigInt(options.chunk ?? DEFAULT_CHUNK_BLOCKS);
    if (maxBlocks < 1n || chunk < 1n) throw new Error('maxBlocks and chunk must be at least 1');
    const head = await this.chain.blockNumber();
    const confirmed = head - this.confirmations;
    const summary: IndexRunSummary = { head, confirmed, ranges: [], found: 0, inserted: 0, unattributed: 0, reorgs: [] };
    const masters = confirmed < 0n ? [] : await this.masters();
    if (masters.length === 0) return summary;

    const groups = await this.resumePoints(masters, confirmed, maxBlocks, summary);
    for (const group of [...groups].sort((a, b) => (a.start < b.start ? -1 : 1))) {
      const end = group.start + maxBlocks - 1n < confirmed ? group.start + maxBlocks - 1n : confirmed;
      summary.ranges.push({ fromBlock: group.start, toBlock: end, masters: group.masters.length });
      await this.indexGroup(group, end, chunk, summary, options.signal);
    }
    return summary;
  }

  /**
   * Where each master resumes, grouped: after its cursor when the chain still has the cursor's
   * block, after the fork point when a reorg replaced it (rolled back here), `maxBlocks` back
   * without a cursor. A master whose cursor another instance just moved sits this run out.
   */
  private async resumePoints(masters: Master[], confirmed: bigint, maxBlocks: bigint, summary: IndexRunSummary): Promise<Group[]> {
    const cursors = await readCursors(
      this.database.db,
      masters.map((m) => m.cursorName),
    );
    const seen = new Map<bigint, Promise<string | null>>();
    const hashAt = (number: bigint) => seen.get(number) ?? seen.set(number, this.hashAt(number)).get(number)!;
    const groups = new Map<string, Group>();
    for (const master of masters) {
      const cursor = cursors.get(master.cursorName);
      let base: BlockRef | null = null;
      if (cursor) {
        const hash = await hashAt(cursor.lastBlock);
        if (hash !== null && (cursor.lastBlockHash === null || cursor.lastBlockHash === hash)) base = { number: cursor.lastBlock, hash };
        else {
          const rolledBack = await this.rollBack(master, cursor, confirmed, maxBlocks, hashAt);
          if (!rolledBack) continue;
          summary.reorgs.push({ employerId: master.employerId, forkBlock: rolledBack.fork.number, removed: rolledBack.removed });
          base = rolledBack.fork;
        }
      }
      const start = base ? base.number + 1n : confirmed >= maxBlocks ? confirmed - maxBlocks + 1n : 0n;
      if (start > confirmed) continue;
      const key = `${start}:${base?.hash ?? 'new'}`;
      const group = groups.get(key) ?? groups.set(key, { start, base, masters: [] }).get(key)!;
      group.masters.push(master);
    }
    return [...groups.values()];
  }

  /**
   * A reorg replaced the cursor's block: back to the cursor's newest checkpoint the chain still
   * has (or `maxBlocks` back when none is), deleting the employer's rows above it. Null when
   * another instance moved the cursor first.
   */
  private async rollBack(
    master: Master,
    cursor: Cursor,
    confirmed: bigint,
    maxBlocks: bigint,
    hashAt: (number: bigint) => Promise<string | null>,
  ): Promise<{ fork: BlockRef; removed: number } | null> {
    let fork: BlockRef | undefined;
    for (const checkpoint of await checkpointsBelow(this.database.db, master.cursorName, cursor.lastBlock)) {
      if ((await hashAt(checkpoint.number)) === checkpoint.hash) {
        fork = checkpoint;
        break;
      }
    }
    if (!fork) {
      const top = cursor.lastBlock < confirmed ? cursor.lastBlock : confirmed;
      const number = top > maxBlocks ? top - maxBlocks : 0n;
      const hash = await hashAt(number);
      if (hash === null) return null;
      fork = { number, hash };
    }
    const at = fork;
    const removed = await this.database.transaction((tx) => rollBackCursor(tx.db, master.cursorName, master.employerId, cursor, at));
    return removed === null ? null : { fork: at, removed };
  }

  /**
   * Scans a group's blocks [start, end] chunk by chunk. A chunk counts only if the chain did not
   * move while its logs were read (the same hash at its last block before and after, and the
   * block before it still the one indexed); otherwise the group stops and the next run re-checks.
   */
  private async indexGroup(group: Group, end: bigint, chunk: bigint, summary: IndexRunSummary, signal: AbortSignal | undefined): Promise<void> {
    let { base, masters } = group;
    for (let from = group.start; from <= end && masters.length > 0; from += chunk) {
      if (signal?.aborted) return;
      const to = from + chunk - 1n < end ? from + chunk - 1n : end;
      const tip = await this.hashAt(to);
      const rows = await this.scan(masters, from, to);
      if (tip === null || (await this.hashAt(to)) !== tip || (base && (await this.hashAt(base.number)) !== base.hash)) return;
      const next: BlockRef = { number: to, hash: tip };
      const moved = await this.database.transaction(async (tx) => {
        const names = await advanceCursors(
          tx.db,
          masters.map((m) => m.cursorName),
          base,
          next,
        );
        const kept = rows.filter((row) => names.has(cursorName(row.employerId)));
        summary.found += kept.length;
        summary.unattributed += kept.filter((row) => row.employeeId === null).length;
        summary.inserted += await insertInflows(tx.db, kept);
        return names;
      });
      masters = masters.filter((m) => moved.has(m.cursorName));
      base = next;
    }
  }

  /** The hash of the chain's block `number` now, or null when the chain has no such block. */
  private async hashAt(number: bigint): Promise<string | null> {
    try {
      return (await this.chain.connection.publicClient.getBlock({ blockNumber: number })).hash;
    } catch (error) {
      if (error instanceof BlockNotFoundError) return null;
      throw error;
    }
  }

  /** Registered masters with each employer's tag -> employee map. */
  private async masters(): Promise<Master[]> {
    const { db } = this.database;
    const rows = await virtualMasterStore.employersWithMasters(db);
    const staff = await virtualMasterStore.employeesOf(
      db,
      rows.map((row) => row.id),
    );
    const tags = new Map<string, Map<string, string>>(rows.map((row) => [row.id, new Map()]));
    for (const employee of staff) tags.get(employee.employerId)?.set(userTag(employee.employerId, employee.id), employee.id);
    return rows.map((row) => ({
      employerId: row.id,
      masterId: row.masterId.toLowerCase() as Hex,
      address: getAddress(row.masterAddress),
      cursorName: cursorName(row.id),
      tags: tags.get(row.id)!,
    }));
  }

  /** The inflow rows of blocks [from, to] for these masters. */
  private async scan(group: Master[], fromBlock: bigint, toBlock: bigint): Promise<NewInflow[]> {
    const byMasterId = new Map(group.map((m) => [m.masterId, m]));
    const legs: { leg: TokenTransfer; master: Master; tag: Hex }[] = [];
    for (let i = 0; i < group.length; i += MASTERS_PER_QUERY) {
      const batch = group.slice(i, i + MASTERS_PER_QUERY);
      for (const leg of await this.transfers(fromBlock, toBlock, batch.map((m) => m.address))) {
        const decoded = decodeVirtualAddress(leg.from);
        const master = decoded && byMasterId.get(decoded.masterId);
        // A virtual address of this master's id, forwarded to this master: anything else sent
        // to the master (a direct payment, another id's forwarding) is not a virtual inflow.
        if (!decoded || !master || master.address !== getAddress(leg.to)) continue;
        legs.push({ leg, master, tag: decoded.tag });
      }
    }
    if (legs.length === 0) return [];

    // The first legs (sender -> virtual) of the same transactions, and the blocks' times.
    const virtuals = [...new Set(legs.map(({ leg }) => getAddress(leg.from)))];
    const blocks = legs.map(({ leg }) => leg.blockNumber);
    const minBlock = blocks.reduce((a, b) => (a < b ? a : b));
    const maxBlock = blocks.reduce((a, b) => (a > b ? a : b));
    const firstLegs: TokenTransfer[] = [];
    for (let i = 0; i < virtuals.length; i += MASTERS_PER_QUERY) {
      firstLegs.push(...(await this.transfers(minBlock, maxBlock, virtuals.slice(i, i + MASTERS_PER_QUERY))));
    }
    const times = new Map<bigint, Date>();
    for (const number of new Set(blocks)) {
      const block = await this.chain.connection.publicClient.getBlock({ blockNumber: number });
      times.set(number, new Date(Number(block.timestamp) * 1000));
    }

    return legs.map(({ leg, master, tag }) => {
      const sender = firstLegs
        .filter(
          (first) =>
            first.txHash === leg.txHash &&
            first.token === leg.token &&
            first.logIndex < leg.logIndex &&
            first.amount === leg.amount &&
            getAddress(first.to) === getAddress(leg.from),
        )
        .reduce<TokenTransfer | null>((best, first) => (best && best.logIndex > first.logIndex ? best : first), null);
      return {
        txHash: leg.txHash,
        logIndex: leg.logIndex,
        employerId: master.employerId,
        employeeId: master.tags.get(tag) ?? null,
        tokenAddress: leg.token,
        virtualAddress: getAddress(leg.from),
        userTag: tag,
        amount: leg.amount,
        blockNumber: leg.blockNumber,
        senderAddress: sender ? getAddress(sender.from) : null,
        blockTimestamp: times.get(leg.blockNumber) ?? null,
      };
    });
  }

  /** `Transfer` logs of the scanned tokens to any of `recipients` in blocks [from, to]. */
  private async transfers(fromBlock: bigint, toBlock: bigint, recipients: Address[]): Promise<TokenTransfer[]> {
    const logs = await this.chain.connection.publicClient.getLogs({
      address: this.tokens,
      event: transferEvent,
      args: { to: recipients },
      fromBlock,
      toBlock,
      strict: true,
    });
    return logs.map((log) => ({
      token: getAddress(log.address),
      txHash: log.transactionHash.toLowerCase() as Hex,
      logIndex: log.logIndex,
      blockNumber: log.blockNumber,
      from: log.args.from,
      to: log.args.to,
      amount: log.args.amount,
    }));
  }
}
