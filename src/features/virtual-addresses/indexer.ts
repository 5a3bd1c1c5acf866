import { getAddress, type Address, type Hex, type PublicClient } from 'viem';
import { transferEvent } from '../../chains/evm/abis.js';
import type { TokenTransfer } from '../../chains/evm/token-chain.js';
import type { Database } from '../../db/client.js';
import { userTag } from './address.js';
import { advanceCursors, employeesOf, employersWithMasters, insertInflows, readCursors, type NewInflow } from './inflow-store.js';

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

export interface IndexOptions {
  /** Most blocks one run scans per master; also how far back a master without a cursor starts. */
  maxBlocks?: number;
  /** Blocks per log query. */
  chunk?: number;
  /** Stops between chunks (what was written stays, the cursor says where to resume). */
  signal?: AbortSignal;
}

export interface IndexRunSummary {
  head: bigint;
  /** The block ranges scanned, one per group of masters that shared a cursor. */
  ranges: { fromBlock: bigint; toBlock: bigint; masters: number }[];
  /** Virtual -> master legs found (new or already indexed). */
  found: number;
  /** Rows written this run. */
  inserted: number;
  /** Of the legs found, those whose user tag matches no employee of the master's employer. */
  unattributed: number;
}

interface Master {
  employerId: string;
  masterId: Hex;
  address: Address;
  cursorName: string;
  /** userTag -> employee id, for this employer. */
  tags: Map<string, string>;
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
 * Each master has a cursor (the last indexed block). A run scans from the block after it, at most
 * `maxBlocks` blocks (catching up over several runs after downtime); a master without one starts
 * `maxBlocks` back from the head. Block ranges are chunked; a chunk's rows and the cursors move in
 * one transaction, so a crash resumes after the last written chunk and never skips a block.
 */
export class VirtualInflowIndexer {
  constructor(
    private readonly database: Database,
    private readonly chain: InflowChain,
    private readonly tokens: Address[],
  ) {
    if (tokens.length === 0) throw new Error('the inflow indexer needs at least one token');
  }

  async indexVirtualInflows(options: IndexOptions = {}): Promise<IndexRunSummary> {
    const maxBlocks = BigInt(options.maxBlocks ?? DEFAULT_MAX_BLOCKS);
    const chunk = BigInt(options.chunk ?? DEFAULT_CHUNK_BLOCKS);
    if (maxBlocks < 1n || chunk < 1n) throw new Error('maxBlocks and chunk must be at least 1');
    const { db } = this.database;
    const head = await this.chain.blockNumber();
    const summary: IndexRunSummary = { head, ranges: [], found: 0, inserted: 0, unattributed: 0 };

    const masters = await this.masters();
    if (masters.length === 0) return summary;
    const cursors = await readCursors(db, masters.map((m) => m.cursorName));

    // Masters that resume from the same block share their log queries (after the first run, all do).
    const groups = new Map<bigint, Master[]>();
    for (const master of masters) {
      const last = cursors.get(master.cursorName);
      const start = last === undefined ? (head >= maxBlocks ? head - maxBlocks + 1n : 0n) : last + 1n;
      if (start > head) continue;
      const group = groups.get(start);
      if (group) group.push(master);
      else groups.set(start, [master]);
    }

    for (const [start, group] of [...groups].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const end = start + maxBlocks - 1n < head ? start + maxBlocks - 1n : head;
      summary.ranges.push({ fromBlock: start, toBlock: end, masters: group.length });
      for (let from = start; from <= end; from += chunk) {
        if (options.signal?.aborted) return summary;
        const to = from + chunk - 1n < end ? from + chunk - 1n : end;
        const rows = await this.scan(group, from, to);
        summary.found += rows.length;
        await this.database.transaction(async (tx) => {
          const inserted = await insertInflows(tx.db, rows);
          summary.inserted += inserted;
          await advanceCursors(tx.db, group.map((m) => m.cursorName), to);
        });
        summary.unattributed += rows.filter((row) => row.employeeId === null).length;
      }
    }
    return summary;
  }

  /** Registered masters with each employer's tag -> employee map. */
  private async masters(): Promise<Master[]> {
    const { db } = this.database;
    const rows = await employersWithMasters(db);
    const staff = await employeesOf(
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
