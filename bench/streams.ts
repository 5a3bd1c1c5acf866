/**
 * Balance streams (issue 6): many concurrent `GET /api/mpp/employee/balance/stream` streams, each
 * paid per tick through its own MPP session (mppx's session client, unmodified), held for a while
 * at one tick a second. Records the server process's CPU (user + system, all threads: PGlite and
 * the embedded chains run in it too) and its peak resident memory over the held window, and the
 * ticks delivered against the ticks expected. The reference is the same server idle, measured in
 * the same run. Loopback only; every phase is bounded.
 *
 *   BENCH_STREAMS=500 BENCH_STREAM_SECONDS=60 npx tsx bench/streams.ts   (alone)
 */
import fs from 'node:fs';
import os from 'node:os';
import { Session } from 'mppx/tempo';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { startServer, type BenchServer } from './payments.js';
import { checkTarget } from './targets.js';

type Row = [string, string, string, string];

/**
 * The issue's target is 5,000 streams for 60 s under one core and 1 GB; on a 2-core machine the
 * server ends streams whose vouchers queue behind thousands of channel openings, so the default
 * is what this machine holds (BENCHMARKS.md says how far from the target that is).
 */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 500);
const HOLD_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 60);
/** Streams per paying wallet and per employee (each stream has its own channel). */
const STREAMS_PER_PAYER = 100;
const STREAMS_PER_EMPLOYEE = 50;
const OPEN_CONCURRENCY = 50;
const OPEN_TIMEOUT_MS = 600_000;
const TICK = 1_000n; // $0.001

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** The process's CPU seconds (user + system) and resident memory, from /proc. */
function usage(pid: number): { cpuSeconds: number; rssBytes: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds, rssBytes: Number(rss?.[1] ?? 0) * 1024 };
}

/** CPU cores used on average, and peak RSS, over `seconds`, sampled every second. */
async function measure(pid: number, seconds: number) {
  const start = usage(pid);
  const began = performance.now();
  let peak = start.rssBytes;
  for (let i = 0; i < seconds; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    peak = Math.max(peak, usage(pid).rssBytes);
  }
  const end = usage(pid);
  return { cores: (end.cpuSeconds - start.cpuSeconds) / ((performance.now() - began) / 1000), peakRss: peak, endRss: end.rssBytes };
}

async function post<T>(base: string, path: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** An employer with salaried employees; their streams start on first use. */
async function employees(base: string, count: number): Promise<{ token: string; ids: string[] }> {
  const { token } = await post<{ token: string }>(base, '/api/dev/token', { sub: 'bench-streams-owner' });
  const { id } = await post<{ id: string }>(base, '/api/employers', { name: 'Streams Inc' }, token);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const body = { email: `s${i}@streams.example`, full_name: `Streamer ${i}`, wallet_address: wallet, annual_salary_usd: '100000' };
    ids.push((await post<{ id: string }>(base, `/api/employers/${id}/team`, body, token)).id);
  }
  return { token, ids };
}

interface OpenStream {
  ticks: number;
  /** Why the stream ended before the client left, if it did. */
  error?: string;
  opened: Promise<void>;
  leave(): void;
  done: Promise<void>;
}

/** One paid stream: resolves `opened` at its first tick, counts ticks until `leave`. */
function openStream(manager: ReturnType<typeof Session.Client.sessionManager>, url: string, token: string): OpenStream {
  const leave = new AbortController();
  let first: () => void = () => {};
  let failed: (error: unknown) => void = () => {};
  const opened = new Promise<void>((resolve, reject) => ((first = resolve), (failed = reject)));
  const stream: OpenStream = { ticks: 0, opened, leave: () => leave.abort(), done: Promise.resolve() };
  stream.done = (async () => {
    try {
      for await (const data of await manager.sse(url, { headers: { 'X-Identity-Token': token }, signal: leave.signal })) {
        if (!data.startsWith('{')) continue;
        stream.ticks += 1;
        if (stream.ticks === 1) first();
      }
    } catch (error) {
      if (!leave.signal.aborted) {
        stream.error = error instanceof Error ? error.message : String(error);
        failed(error);
      }
    }
  })();
  return stream;
}

/** Leaving a stream aborts mppx client requests in flight (a voucher POST): those rejections are expected. */
function expectedAbort(reason: unknown): void {
  if ((reason as Error | undefined)?.name !== 'AbortError') throw reason;
}

export async function streamFigures(): Promise<Row[]> {
  const server: BenchServer = await startServer();
  process.on('unhandledRejection', expectedAbort);
  try {
    const idle = await measure(server.pid, 10);
    const staff = await employees(server.base, Math.ceil(STREAMS / STREAMS_PER_EMPLOYEE));
    // Each channel's deposit covers the whole run (opening takes minutes at thousands of streams).
    const deposit = (TICK * BigInt(HOLD_SECONDS + OPEN_TIMEOUT_MS / 1000 + 60)) / 1_000n;
    const managers: ReturnType<typeof Session.Client.sessionManager>[] = [];
    for (let p = 0; p < Math.ceil(STREAMS / STREAMS_PER_PAYER); p++) {
      const account = privateKeyToAccount(generatePrivateKey());
      await post(server.base, '/api/dev/faucet', { network: 'eip155:4217', address: account.address, amount: String(Math.ceil((Number(deposit) / 1000) * STREAMS_PER_PAYER) + 1) });
      const client = createClient({ chain: tempoChain, transport: http(`${server.base}/api/dev/rpc/tempo`), account });
      for (let s = 0; s < STREAMS_PER_PAYER && managers.length < STREAMS; s++) {
        managers.push(Session.Client.sessionManager({ account, client, maxDeposit: (Number(deposit) / 1000).toFixed(6) }));
      }
    }

    // Open every stream, OPEN_CONCURRENCY at a time, each waiting for its first tick.
    const streams: OpenStream[] = [];
    const openedAt = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: OPEN_CONCURRENCY }, async () => {
        while (next < managers.length) {
          if (performance.now() - openedAt > OPEN_TIMEOUT_MS) throw new Error(`only ${streams.length} of ${STREAMS} streams opened in ${OPEN_TIMEOUT_MS / 1000} s`);
          const index = next++;
          const employee = staff.ids[index % staff.ids.length]!;
          const stream = openStream(managers[index]!, `${server.base}/api/mpp/employee/balance/stream?employeeId=${employee}`, staff.token);
          streams.push(stream);
          await stream.opened;
        }
      }),
    );
    const openSeconds = (performance.now() - openedAt) / 1000;

    const ticksAtHold = streams.map((s) => s.ticks);
    const before = ticksAtHold.reduce((sum, n) => sum + n, 0);
    const clientBefore = process.cpuUsage();
    const held = await measure(server.pid, HOLD_SECONDS);
    const client = process.cpuUsage(clientBefore);
    const clientCores = (client.user + client.system) / 1e6 / HOLD_SECONDS;
    const delivered = streams.reduce((sum, s) => sum + s.ticks, 0) - before;
    const perStream = streams.map((s, i) => s.ticks - (ticksAtHold[i] ?? 0)).sort((a, b) => a - b);
    for (const stream of streams) stream.leave();
    await Promise.all(streams.map((s) => s.done));

    const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
    // The issue's target is stated for 5,000 streams; what each stream costs here, scaled to that.
    const coresPerStream = (held.cores - idle.cores) / STREAMS;
    const bytesPerStream = Math.max(0, held.peakRss - idle.peakRss) / STREAMS;
    const errors = new Map<string, number>();
    for (const stream of streams) if (stream.error) errors.set(stream.error, (errors.get(stream.error) ?? 0) + 1);
    if (errors.size > 0) process.stderr.write(`streams that ended early: ${JSON.stringify(Object.fromEntries(errors))}\n`);
    const expected = STREAMS * HOLD_SECONDS;
    checkTarget(`server CPU while ${STREAMS} streams tick`, held.cores, { below: 1 }, 'cores');
    checkTarget(`server peak RSS while ${STREAMS} streams tick`, held.peakRss / 2 ** 20, { below: 1024 }, 'MiB');
    checkTarget('5,000 streams (projected from the measured ones): CPU', coresPerStream * 5000, { below: 1 }, 'cores');
    checkTarget('5,000 streams (projected from the measured ones): memory over idle', (bytesPerStream * 5000) / 2 ** 20, { below: 1024 }, 'MiB');
    return [
      [`balance streams open at once (paid per tick, one MPP session each)`, String(STREAMS), `opened in ${openSeconds.toFixed(0)} s`, ''],
      [`ticks delivered in ${HOLD_SECONDS} s, all streams`, String(delivered), `expected ${expected}`, (delivered / expected).toFixed(3)],
      [`ticks per stream in ${HOLD_SECONDS} s: min / median / max`, `${perStream[0]} / ${perStream[Math.floor(perStream.length / 2)]} / ${perStream.at(-1)}`, `expected ${HOLD_SECONDS}`, ''],
      [`server CPU while ${STREAMS} streams tick, cores`, held.cores.toFixed(2), `idle ${idle.cores.toFixed(2)}; target < 1`, (held.cores / 1).toFixed(2)],
      [`load generator CPU (mppx session clients, same machine), cores`, clientCores.toFixed(2), `${os.cpus().length} cores in all`, ''],
      [`server peak RSS while ${STREAMS} streams tick, MiB`, mib(held.peakRss), `idle ${mib(idle.peakRss)}; target < 1024`, (held.peakRss / 2 ** 30).toFixed(2)],
      [
        `5,000 streams projected from ${STREAMS} (linear; not measured here): cores / MiB over idle`,
        `${(coresPerStream * 5000).toFixed(2)} / ${mib(bytesPerStream * 5000)}`,
        'target < 1 core, < 1024 MiB',
        (coresPerStream * 5000).toFixed(2),
      ],
    ];
  } finally {
    await server.stop();
    process.off('unhandledRejection', expectedAbort);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await streamFigures();
  process.stdout.write(`${os.cpus().length} x ${os.cpus()[0]?.model}\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
}
