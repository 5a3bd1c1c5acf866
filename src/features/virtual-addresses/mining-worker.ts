/**
 * One salt-mining thread (miner.ts keeps one per core): for each task it searches the contiguous
 * nonce range [start, start + count) in slices, checking the shared stop flag between slices, and reports
 * either the first nonce in its range whose hash has the leading zero bytes or how many nonces it
 * tried. The state and the loop live in the WebAssembly module (keccak-wasm.ts); nothing is
 * allocated per hash.
 */
import { parentPort } from 'node:worker_threads';
import { instantiateKeccakMiner, type WasmModule } from './keccak-wasm.js';

export interface MiningTask {
  module: WasmModule;
  /** messageLanes(address, zero salt). */
  lanes: bigint[];
  start: bigint;
  count: number;
  /** 2^(8 * zeroBytes) - 1 */
  mask: bigint;
  /** Int32 flag: non-zero tells every worker to stop at its next slice. */
  stop: SharedArrayBuffer;
  /** Nonces per call into the module, between two looks at the stop flag. */
  slice: number;
}

export type MiningReport = { found: true; nonce: bigint; hashes: number } | { found: false; hashes: number };

function run(task: MiningTask): MiningReport {
  let miner = instances.get(task.module);
  if (!miner) instances.set(task.module, (miner = instantiateKeccakMiner(task.module)));
  const stop = new Int32Array(task.stop);
  const [l0, l1, l2, l3, l4, l5, l6] = task.lanes as [bigint, bigint, bigint, bigint, bigint, bigint, bigint];
  let done = 0;
  while (done < task.count && Atomics.load(stop, 0) === 0) {
    const count = Math.min(task.slice, task.count - done);
    const hit = miner.search(l0, l1, l2, l3, l4, l5, l6, task.start + BigInt(done), count, task.mask);
    if (hit >= 0) return { found: true, nonce: task.start + BigInt(done + hit), hashes: done + hit + 1 };
    done += count;
  }
  return { found: false, hashes: done };
}

const instances = new WeakMap<WasmModule, ReturnType<typeof instantiateKeccakMiner>>();

parentPort?.on('message', ({ id, task }: { id: number; task: MiningTask }) => {
  parentPort!.postMessage({ id, report: run(task) });
});
