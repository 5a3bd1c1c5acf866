import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { hexToBytes, type Address, type Hex } from 'viem';
import { keccakMinerModule, MAX_NONCE, messageLanes } from './keccak-wasm.js';
import type { MiningReport, MiningTask } from './mining-worker.js';

/**
 * Virtual-master salt mining (spec 2.13, 8.1): find a salt such that keccak256(masterAddress ||
 * salt) (20 + 32 bytes) begins with `zeroBytes` zero bytes. The salt is the nonce as a 32-byte
 * big-endian number, nonces below 2^64 (4 zero bytes take about 2^32 tries on average).
 *
 * Partitioning: a call searches exactly the nonces [startNonce, startNonce + budget); that range
 * is cut into one contiguous chunk per worker thread (chunk i = [start + floor(i*budget/W),
 * start + floor((i+1)*budget/W))). When no salt is found every nonce of the range was tried and
 * the answer is `nextStartNonce = startNonce + budget`, so a series of calls each resuming at the
 * previous `nextStartNonce` tries every nonce once: no gap, no overlap. When a worker finds a salt
 * all workers stop at their next slice; the answer is the smallest nonce among the hits reported
 * by then (a valid salt, not necessarily the smallest valid one in the range).
 */
export interface MineOptions {
  address: Address;
  zeroBytes: number;
  startNonce: bigint;
  /** Nonces to try at most (spec 8.1: 50,000,000 per request). */
  budget: number;
  /** Threads; default os.availableParallelism(), fewer for small budgets (at least 16,384 nonces each). */
  workers?: number;
  /**
   * Stops the search early: the result then is `found: false` with a `nextStartNonce` below which
   * every nonce of the range was tried (some above it may be tried again on resuming).
   */
  signal?: AbortSignal;
}

export type MineResult =
  | { found: true; salt: Hex; nonce: bigint; hashes: number }
  | { found: false; nextStartNonce: bigint; hashes: number };

/** Nonces per call into the WebAssembly loop: about 20-40 ms per slice, the stop latency. */
const SLICE = 1 << 16;
/** Below this many nonces per thread another thread costs more (start-up) than it saves. */
const MIN_CHUNK = 1 << 14;
const MAX_BUDGET = 2 ** 31 - 1;

/** The 32-byte salt of a nonce (big-endian). */
export function saltOf(nonce: bigint): Hex {
  if (nonce < 0n || nonce > MAX_NONCE) throw new RangeError(`nonce out of range: ${nonce}`);
  return `0x${nonce.toString(16).padStart(64, '0')}`;
}

/** [start, start + budget) cut into `threads` contiguous chunks, in order, sizes differing by at most 1. */
export function partitionRange(start: bigint, budget: number, threads: number): { start: bigint; count: number }[] {
  return Array.from({ length: threads }, (_, i) => {
    const from = Math.floor((i * budget) / threads);
    const to = Math.floor(((i + 1) * budget) / threads);
    return { start: start + BigInt(from), count: to - from };
  });
}

export async function mineSalt(options: MineOptions): Promise<MineResult> {
  const { address, zeroBytes, startNonce } = options;
  if (!Number.isInteger(zeroBytes) || zeroBytes < 0 || zeroBytes > 8) throw new RangeError('zeroBytes must be 0 to 8');
  if (!Number.isInteger(options.budget) || options.budget < 0 || options.budget > MAX_BUDGET) throw new RangeError('budget must be 0 to 2^31-1');
  if (startNonce < 0n || startNonce > MAX_NONCE + 1n) throw new RangeError(`startNonce must be 0 to 2^64, got ${startNonce}`);
  // The nonce space ends at 2^64 - 1 (the salt's last 8 bytes); never reached in practice.
  const budget = Number(BigInt(options.budget) < MAX_NONCE + 1n - startNonce ? BigInt(options.budget) : MAX_NONCE + 1n - startNonce);
  if (budget === 0) return { found: false, nextStartNonce: startNonce, hashes: 0 };

  const threads = Math.max(1, Math.min(budget, options.workers ?? Math.min(os.availableParallelism(), Math.ceil(budget / MIN_CHUNK))));
  const stop = new SharedArrayBuffer(4);
  const stopFlag = new Int32Array(stop);
  const onAbort = () => Atomics.store(stopFlag, 0, 1);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const lanes = messageLanes(hexToBytes(address), new Uint8Array(32));
  const mask = (1n << BigInt(8 * zeroBytes)) - 1n;
  const module = keccakMinerModule();

  const chunks = partitionRange(startNonce, budget, threads);
  try {
    const reports = await Promise.all(
      chunks.map(async (chunk, i) => {
        try {
          const report = await pool.run(i, { module, lanes, start: chunk.start, count: chunk.count, mask, stop, slice: SLICE });
          if (report.found) Atomics.store(stopFlag, 0, 1);
          return report;
        } catch (error) {
          Atomics.store(stopFlag, 0, 1); // a thread died: stop the others, fail the call
          throw error;
        }
      }),
    );
    const hashes = reports.reduce((sum, report) => sum + report.hashes, 0);
    const hits = reports.flatMap((report) => (report.found ? [report.nonce] : []));
    if (hits.length > 0) {
      const nonce = hits.reduce((a, b) => (b < a ? b : a));
      return { found: true, salt: saltOf(nonce), nonce, hashes };
    }
    // Stopped early (abort): resume at the first nonce of the first chunk not searched to its end.
    const firstUnfinished = chunks.findIndex((chunk, i) => reports[i]!.hashes < chunk.count);
    const nextStartNonce = firstUnfinished < 0 ? startNonce + BigInt(budget) : chunks[firstUnfinished]!.start + BigInt(reports[firstUnfinished]!.hashes);
    return { found: false, nextStartNonce, hashes };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Mining threads, started on first use and kept (unreferenced while idle, so they never hold the
 * process open); each runs its tasks one after another, so concurrent searches share the cores.
 */
class MiningPool {
  private readonly workers: { worker: Worker; pending: Map<number, { resolve(report: MiningReport): void; reject(error: Error): void }> }[] = [];
  private nextId = 0;

  run(index: number, task: MiningTask): Promise<MiningReport> {
    const slot = (this.workers[index] ??= this.start(index));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.ref();
      slot.worker.postMessage({ id, task });
    });
  }

  private start(index: number) {
    const worker = startWorker();
    const slot = { worker, pending: new Map<number, { resolve(report: MiningReport): void; reject(error: Error): void }>() };
    worker.unref();
    worker.on('message', ({ id, report }: { id: number; report: MiningReport }) => {
      slot.pending.get(id)?.resolve(report);
      slot.pending.delete(id);
      if (slot.pending.size === 0) worker.unref();
    });
    const fail = (error: Error) => {
      if (this.workers[index] === slot) delete this.workers[index];
      for (const { reject } of slot.pending.values()) reject(error);
      slot.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`mining worker exited with ${code}`)));
    return slot;
  }
}

const pool = new MiningPool();

function startWorker(): Worker {
  const compiled = new URL('./mining-worker.js', import.meta.url);
  if (fs.existsSync(compiled)) return new Worker(compiled);
  // Running from TypeScript sources (npm start, tests): the worker registers tsx, then loads them.
  const source = new URL('./mining-worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(bootstrap, { eval: true });
}
