/**
 * Virtual-master salt mining (issue 10): keccak256 of 52 bytes (20-byte address || 32-byte salt)
 * per second, ours (src/features/virtual-addresses: WebAssembly keccak-f[1600] with the loop over
 * nonces inside the module, one worker thread per core) against the keccak implementations and
 * the OpenSSL SHA3 that Node reaches here, all measured in the same run, interleaved, median of
 * `runs`. A reference hashes the same 52 bytes with the salt's last 4 bytes rewritten each time,
 * reusing what it can (hash-wasm: one hasher, init/update/digest into a buffer).
 *
 * `npx tsx bench/salt-mining.ts` prints one JSON line per figure; `npm run bench` puts the
 * figures in BENCHMARKS.md (section `mining`).
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { keccak_256 } from '@noble/hashes/sha3';
import { instantiateKeccakMiner, messageLanes } from '../src/features/virtual-addresses/keccak-wasm.js';
import { mineSalt } from '../src/features/virtual-addresses/miner.js';
import { checkTarget } from './targets.js';

const SECONDS = Number(process.env.BENCH_MINING_SECONDS ?? 2);
const ADDRESS = '0x5FbDB2315678afecb367f032d93F642f64180aa3' as const;
/** Leading zero bytes no nonce here reaches (2^-64 per try): every run spends its whole budget. */
const NEVER = 8;

interface Rate {
  name: string;
  threads: number;
  hashesPerSecond: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (rate: number) => `${(rate / 1e6).toFixed(3)} M/s`;

/** Calls `hash` with a changing salt for about SECONDS (after a short warm-up); hashes per second. */
function rateOf(hash: (message: Uint8Array) => unknown): number {
  const message = new Uint8Array(52);
  message.set(Buffer.from(ADDRESS.slice(2), 'hex'));
  const view = new DataView(message.buffer);
  let nonce = 0;
  const spin = (ms: number) => {
    const started = performance.now();
    let count = 0;
    let elapsed = 0;
    do {
      for (let i = 0; i < 1000; i++) {
        view.setUint32(48, nonce++);
        hash(message);
      }
      count += 1000;
      elapsed = performance.now() - started;
    } while (elapsed < ms);
    return (count / elapsed) * 1000;
  };
  spin(300);
  return spin(SECONDS * 1000);
}

/** The references Node reaches here; a package that is not installed is left out. */
async function references(): Promise<{ name: string; hash: (message: Uint8Array) => unknown }[]> {
  const list: { name: string; hash: (message: Uint8Array) => unknown }[] = [{ name: '@noble/hashes keccak_256 (what viem uses)', hash: (m) => keccak_256(m) }];
  try {
    const { createKeccak } = await import('hash-wasm');
    const hasher = await createKeccak(256);
    list.push({
      name: 'hash-wasm keccak256 (WebAssembly, one reused hasher)',
      hash: (m) => {
        hasher.init();
        hasher.update(m);
        return hasher.digest('binary');
      },
    });
  } catch {
    // not installed
  }
  try {
    const { default: sha3 } = (await import('js-sha3' as string)) as { default: { keccak256: { array(m: Uint8Array): number[] } } };
    list.push({ name: 'js-sha3 keccak256 (JS, 32-bit lane halves)', hash: (m) => sha3.keccak256.array(m) });
  } catch {
    // not installed
  }
  list.push({ name: 'OpenSSL sha3-256 via crypto.createHash (same permutation, SHA-3 padding)', hash: (m) => crypto.createHash('sha3-256').update(m).digest() });
  const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash;
  if (oneShot) list.push({ name: 'OpenSSL sha3-256 via crypto.hash (one-shot)', hash: (m) => oneShot('sha3-256', m, 'buffer') });
  return list;
}

/** Ours through mineSalt (the service's path): `threads` workers, about SECONDS long. */
async function ours(threads: number, perThreadRate: number): Promise<number> {
  const budget = Math.min(2 ** 31 - 1, Math.round(perThreadRate * threads * SECONDS));
  const started = performance.now();
  const result = await mineSalt({ address: ADDRESS, zeroBytes: NEVER, startNonce: 0n, budget, workers: threads });
  return (result.hashes / (performance.now() - started)) * 1000;
}

/** Ours on this thread: the WebAssembly search loop alone. */
function oursInThread(): number {
  const miner = instantiateKeccakMiner();
  const lanes = messageLanes(Buffer.from(ADDRESS.slice(2), 'hex'), new Uint8Array(32)) as [bigint, bigint, bigint, bigint, bigint, bigint, bigint];
  let start = 0n;
  const spin = (ms: number) => {
    const began = performance.now();
    let count = 0;
    let elapsed = 0;
    do {
      miner.search(...lanes, start, 1 << 16, 0xffffffffffffffffn);
      start += 1n << 16n;
      count += 1 << 16;
      elapsed = performance.now() - began;
    } while (elapsed < ms);
    return (count / elapsed) * 1000;
  };
  spin(300);
  return spin(SECONDS * 1000);
}

export async function measureSaltMining(runs: number, onRate: (rate: Rate) => void = () => {}): Promise<Rate[]> {
  const cores = os.availableParallelism();
  const refs = await references();
  const samples = new Map<string, { threads: number; values: number[] }>();
  const record = (name: string, threads: number, value: number) => {
    const entry = samples.get(name) ?? { threads, values: [] };
    entry.values.push(value);
    samples.set(name, entry);
    onRate({ name, threads, hashesPerSecond: value });
  };
  // Warm the worker pool (thread start-up and compilation are not mining).
  await mineSalt({ address: ADDRESS, zeroBytes: NEVER, startNonce: 0n, budget: 200_000, workers: cores });
  for (let run = 0; run < runs; run++) {
    const inThread = oursInThread();
    record('ours: WebAssembly search loop, this thread', 1, inThread);
    for (const ref of refs) record(ref.name, 1, rateOf(ref.hash));
    record('ours: mineSalt, 1 worker thread', 1, await ours(1, inThread));
    record(`ours: mineSalt, ${cores} worker threads`, cores, await ours(cores, inThread));
  }
  return [...samples].map(([name, { threads, values }]) => ({ name, threads, hashesPerSecond: median(values) }));
}

/** Rows for BENCHMARKS.md: [figure, value, reference, ratio]. */
export async function saltMiningFigures(runs: number): Promise<[string, string, string, string][]> {
  return figuresFrom(await measureSaltMining(runs));
}

function figuresFrom(rates: Rate[]): [string, string, string, string][] {
  const cores = os.availableParallelism();
  const find = (prefix: string) => rates.find((rate) => rate.name.startsWith(prefix))!;
  const references = rates.filter((rate) => !rate.name.startsWith('ours'));
  const keccakReferences = references.filter((rate) => !rate.name.startsWith('OpenSSL'));
  const fastest = keccakReferences.reduce((a, b) => (b.hashesPerSecond > a.hashesPerSecond ? b : a));
  const fastestAny = references.reduce((a, b) => (b.hashesPerSecond > a.hashesPerSecond ? b : a));
  const one = find('ours: mineSalt, 1 worker');
  const all = find(`ours: mineSalt, ${cores} worker`);
  const kernel = find('ours: WebAssembly search loop');
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  checkTarget('salt mining per core against the fastest keccak256 reachable from Node (ratio)', one.hashesPerSecond / fastest.hashesPerSecond, { atLeast: 0.8 }, '');
  const rows: [string, string, string, string][] = [
    [
      'salt mining keccak256 of a 20-byte address and a 32-byte salt, per core (mineSalt, 1 worker thread), hashes/s',
      fmt(one.hashesPerSecond),
      `fastest keccak256 reachable from Node here: ${fastest.name} ${fmt(fastest.hashesPerSecond)}; target >= 0.8`,
      ratio(one.hashesPerSecond, fastest.hashesPerSecond),
    ],
    [
      `salt mining on all ${cores} cores (mineSalt, ${cores} worker threads), hashes/s`,
      fmt(all.hashesPerSecond),
      `1 worker x ${cores} = ${fmt(one.hashesPerSecond * cores)} (scaling)`,
      ratio(all.hashesPerSecond, one.hashesPerSecond * cores),
    ],
    ['salt mining kernel alone (WebAssembly loop on the calling thread), hashes/s', fmt(kernel.hashesPerSecond), `fastest of any hash here: ${fastestAny.name} ${fmt(fastestAny.hashesPerSecond)}`, ratio(kernel.hashesPerSecond, fastestAny.hashesPerSecond)],
    ...references.map((rate): [string, string, string, string] => [`reference, per core: ${rate.name}, hashes/s`, fmt(rate.hashesPerSecond), `ours per core ${fmt(one.hashesPerSecond)}`, ratio(rate.hashesPerSecond, one.hashesPerSecond)]),
    [
      'virtual-master registration at 4 zero bytes: one 50,000,000-iteration request / expected 2^32 tries, all cores, s',
      `${(50e6 / all.hashesPerSecond).toFixed(1)} / ${(2 ** 32 / all.hashesPerSecond).toFixed(0)}`,
      'spec 8.1: 50,000,000 per request, then 504 with nextStartNonce',
      '',
    ],
  ];
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  print({ node: process.version, cores: os.availableParallelism(), cpu: os.cpus()[0]?.model, seconds_per_sample: SECONDS, runs });
  const rates = await measureSaltMining(runs, (rate) => print({ sample: rate.name, threads: rate.threads, hashes_per_second: Math.round(rate.hashesPerSecond) }));
  for (const rate of rates) print({ median: rate.name, threads: rate.threads, hashes_per_second: Math.round(rate.hashesPerSecond) });
  for (const [figure, value, reference, ratio] of figuresFrom(rates)) print({ figure, value, reference, ratio });
}
