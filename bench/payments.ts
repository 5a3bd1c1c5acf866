/**
 * Payment gate figures: the 402 path against a free route with the same handler, paid calls per
 * second on each rail (proofs made beforehand by the real client libraries, then fired 20 at a
 * time), and the gate's added latency on one connection. The service runs in its own process
 * (bench/payments-server.ts: the full app with embedded chains on in-memory PGlite); this process
 * is the load generator. Loopback only; every loop is bounded in count and time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateKeyPairSigner } from '@solana/kit';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import autocannon from 'autocannon';
import { Challenge } from 'mppx';
import { tempo } from 'mppx/client';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { checkTarget } from './targets.js';

const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 20;
/** Paid calls per run and rail; BENCH_PAID_CALLS sets one count for every rail. */
const PAID_CALLS: Record<'A' | 'B' | 'C', number> = process.env.BENCH_PAID_CALLS
  ? { A: Number(process.env.BENCH_PAID_CALLS), B: Number(process.env.BENCH_PAID_CALLS), C: Number(process.env.BENCH_PAID_CALLS) }
  : { B: 600, A: 300, C: 400 };
const PAID_CONCURRENCY = 20;
/** Proofs that need the server (rail A's challenge and transaction, rail C's blockhash) are made this many at a time. */
const PROOF_CONCURRENCY = 10;
/** Rail A proofs made and fired per batch (see paidRun). */
const RAIL_A_BATCH = 100;
const SEQUENTIAL_CALLS = 200;
const WARM_UP_CALLS = 10;
const BASE_NETWORK = 'eip155:8453';
const TEMPO_NETWORK = 'eip155:4217';
const FUNDING_USD = '1000';
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** No pool (proofs or paid calls) starts new work after this long. */
const PHASE_TIMEOUT_MS = 300_000;

export type Row = [string, string, string, string];
export type Headers = Record<string, string>;

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export interface BenchServer {
  base: string;
  /** The server process, for CPU and memory readings. */
  pid: number;
  stop(): Promise<void>;
}

/** bench/payments-server.ts in a child process (with `env` added to this one's); resolves once it printed its port. */
export async function startServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // BENCH_PROFILE_DIR: the service writes a V8 CPU profile there when it stops (where its time goes).
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, '--import', 'tsx', 'bench/payments-server.ts'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS)));
    if ((await Promise.race([exited, late])) === 'late') {
      child.kill('SIGKILL');
      await exited;
    }
    clearTimeout(timer);
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench/payments-server.ts did not print its port within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      const lines = readline.createInterface({ input: child.stdout! });
      lines.once('line', (line) => {
        clearTimeout(timer);
        const port = (JSON.parse(line) as { port?: unknown }).port;
        if (typeof port === 'number') resolve(port);
        else reject(new Error(`bench/payments-server.ts printed ${line}, not {"port": N}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`bench/payments-server.ts exited with ${code ?? signal} before listening`));
      });
    });
    return { base: `http://127.0.0.1:${port}`, pid: child.pid!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs `work` over `items`, `concurrency` at a time; nothing new starts after `PHASE_TIMEOUT_MS`. */
export async function pool<T, R>(items: readonly T[], concurrency: number, what: string, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  const deadline = performance.now() + PHASE_TIMEOUT_MS;
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      if (performance.now() > deadline) throw new Error(`${what}: not done within ${PHASE_TIMEOUT_MS / 1000} s (${next} of ${items.length} started)`);
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

const count = (n: number) => Array.from({ length: n }, (_, i) => i);

async function faucet(base: string, network: string, address: string): Promise<void> {
  const response = await fetch(`${base}/api/dev/faucet`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network, address, amount: FUNDING_USD }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`faucet ${network} ${address}: ${response.status} ${body}`);
}

/** A 402 from the paid route (its body read, so the connection is free again). */
async function challengeResponse(base: string): Promise<Response> {
  const response = await fetch(`${base}/bench/paid`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  await response.arrayBuffer();
  if (response.status !== 402) throw new Error(`GET /bench/paid without a proof answered ${response.status}, not 402`);
  return response;
}

export const x402Header = (requirement: PaymentRequirements, payload: Record<string, unknown>): Headers => ({
  'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify({ x402Version: 2, accepted: requirement, payload })).toString('base64'),
});

/** One payer per rail, funded once; each `proof()` is a new, unused payment for GET /bench/paid. */
interface Payer {
  proof(): Promise<Headers>;
}

async function payers(base: string): Promise<Record<'A' | 'B' | 'C', Payer>> {
  const accepts = decodePaymentRequiredHeader((await challengeResponse(base)).headers.get('PAYMENT-REQUIRED')!).accepts;
  const baseRequirement = accepts.find((r) => r.network === BASE_NETWORK);
  const solanaRequirement = accepts.find((r) => r.network.startsWith('solana:'));
  if (!baseRequirement || !solanaRequirement) throw new Error(`the 402 offers ${accepts.map((r) => r.network).join(', ')}, not Base and Solana`);

  // B: EIP-3009 authorizations, signed locally by the x402 client scheme (random nonce each).
  const baseAccount = privateKeyToAccount(generatePrivateKey());
  await faucet(base, BASE_NETWORK, baseAccount.address);
  const evm = new ExactEvmScheme(baseAccount);

  // A: mppx's Tempo charge client; each credential answers its own fresh challenge.
  const tempoAccount = privateKeyToAccount(generatePrivateKey());
  await faucet(base, TEMPO_NETWORK, tempoAccount.address);
  const tempoClient = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account: tempoAccount });
  const charge = tempo.charge({ account: tempoAccount, getClient: () => tempoClient });

  // C: the x402 SVM client scheme against the dev RPC (a random memo keeps payments apart).
  const solanaSigner = await generateKeyPairSigner();
  await faucet(base, solanaRequirement.network, solanaSigner.address);
  const svm = new ExactSvmScheme(solanaSigner, { rpcUrl: `${base}/api/dev/rpc/solana` });

  return {
    A: { proof: async () => ({ authorization: await charge.createCredential({ challenge: Challenge.fromResponse(await challengeResponse(base)), context: {} } as never) }) },
    B: { proof: async () => x402Header(baseRequirement, (await evm.createPaymentPayload(2, baseRequirement)).payload) },
    C: { proof: async () => x402Header(solanaRequirement, (await svm.createPaymentPayload(2, solanaRequirement)).payload) },
  };
}

export interface Call {
  status: number;
  ms: number;
  /** The body of a failed call, or the error. */
  failure?: string;
}

/** A GET, or a POST of `json` when one is given; timed from sending to the whole answer read. */
export async function call(url: string, headers: Headers = {}, json?: string): Promise<Call> {
  const started = performance.now();
  try {
    const init: RequestInit =
      json === undefined ? { headers } : { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: json };
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const body = await response.text();
    const ms = performance.now() - started;
    return response.status === 200 ? { status: 200, ms } : { status: response.status, ms, failure: body.slice(0, 300) };
  } catch (error) {
    return { status: 0, ms: performance.now() - started, failure: error instanceof Error ? error.message : String(error) };
  }
}

/** Throws unless every call answered 200, naming the statuses and the first failure. */
export function expectAllPaid(what: string, calls: Call[]): void {
  const failed = calls.filter((c) => c.status !== 200);
  if (failed.length === 0) return;
  const statuses = new Map<number, number>();
  for (const c of failed) statuses.set(c.status, (statuses.get(c.status) ?? 0) + 1);
  const summary = [...statuses].map(([status, n]) => `${n} x ${status || 'no answer'}`).join(', ');
  throw new Error(`${what}: ${failed.length} of ${calls.length} calls were not served (${summary}); first: ${failed[0]!.failure}`);
}

/** autocannon on one URL for LOAD_SECONDS; `expected` is the only status allowed. */
async function load(url: string, expected: number): Promise<number> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: LOAD_SECONDS });
  const statuses = Object.entries(result.statusCodeStats ?? {}).filter(([, s]) => (s.count ?? 0) > 0);
  const others = statuses.filter(([status]) => Number(status) !== expected);
  if (result.errors + result.timeouts > 0 || others.length > 0 || statuses.length === 0) {
    const seen = statuses.map(([status, s]) => `${s.count} x ${status}`).join(', ');
    throw new Error(`${url}: expected only ${expected}; got ${seen || 'no answers'}, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return result.requests.average;
}

interface PaidRun {
  perSecond: number;
  p50: number;
}

/**
 * N proofs made first (untimed), then fired PAID_CONCURRENCY at a time; N / elapsed. Rail A's
 * proofs go in batches of RAIL_A_BATCH, each made just before it is fired (and only the firing
 * timed): mppx's client signs the Tempo transaction valid for 25 s only (validBefore), shorter
 * than making and firing hundreds of them takes here.
 */
async function paidRun(base: string, rail: 'A' | 'B' | 'C', payer: Payer): Promise<PaidRun> {
  const n = PAID_CALLS[rail];
  const batch = rail === 'A' ? RAIL_A_BATCH : n;
  const calls: Call[] = [];
  let seconds = 0;
  for (let done = 0; done < n; done += batch) {
    const size = Math.min(batch, n - done);
    const proofs = await pool(count(size), rail === 'B' ? 1 : PROOF_CONCURRENCY, `rail ${rail} proofs`, () => payer.proof());
    const started = performance.now();
    calls.push(...(await pool(proofs, PAID_CONCURRENCY, `rail ${rail} paid calls`, (headers) => call(`${base}/bench/paid`, headers))));
    seconds += (performance.now() - started) / 1000;
  }
  expectAllPaid(`rail ${rail} paid calls`, calls);
  return { perSecond: n / seconds, p50: median(calls.map((c) => c.ms)) };
}

/** One connection: free and paid (fresh rail-B proof each) calls alternately; p50 of each. */
async function overheadRun(base: string, payer: Payer): Promise<{ free: number; paid: number }> {
  const proofs: Headers[] = [];
  for (let i = 0; i < WARM_UP_CALLS + SEQUENTIAL_CALLS; i++) proofs.push(await payer.proof());
  const free: Call[] = [];
  const paid: Call[] = [];
  for (let i = 0; i < proofs.length; i++) {
    const freeCall = await call(`${base}/bench/free`);
    const paidCall = await call(`${base}/bench/paid`, proofs[i]!);
    if (i < WARM_UP_CALLS) {
      expectAllPaid('sequential warm-up', [freeCall, paidCall]);
      continue;
    }
    free.push(freeCall);
    paid.push(paidCall);
  }
  expectAllPaid('sequential GET /bench/free', free);
  expectAllPaid('sequential GET /bench/paid (rail B)', paid);
  return { free: median(free.map((c) => c.ms)), paid: median(paid.map((c) => c.ms)) };
}

export async function paymentFigures(runs: number): Promise<Row[]> {
  const server = await startServer();
  try {
    const { base } = server;
    const freeCheck = await call(`${base}/bench/free`);
    expectAllPaid('GET /bench/free', [freeCheck]);
    const payer = await payers(base);

    const rates = { free: [] as number[], required: [] as number[] };
    const paid = { A: [] as PaidRun[], B: [] as PaidRun[], C: [] as PaidRun[] };
    const overhead = { free: [] as number[], paid: [] as number[] };
    for (let i = 0; i < runs; i++) {
      rates.free.push(await load(`${base}/bench/free`, 200));
      rates.required.push(await load(`${base}/bench/paid`, 402));
      for (const rail of ['B', 'A', 'C'] as const) paid[rail].push(await paidRun(base, rail, payer[rail]));
      const sequential = await overheadRun(base, payer.B);
      overhead.free.push(sequential.free);
      overhead.paid.push(sequential.paid);
    }

    const free = median(rates.free);
    const required = median(rates.required);
    const perSecond = (rail: 'A' | 'B' | 'C') => median(paid[rail].map((r) => r.perSecond));
    const p50 = (rail: 'A' | 'B' | 'C') => median(paid[rail].map((r) => r.p50));
    const railB = perSecond('B');
    const freeP50 = median(overhead.free);
    const paidP50 = median(overhead.paid);
    const added = paidP50 - freeP50;
    const paidRow = (rail: 'A' | 'C', label: string): Row => [
      `paid calls/s, rail ${rail} (${label}), GET /bench/paid $0.001, ${PAID_CALLS[rail]} calls ${PAID_CONCURRENCY} at a time`,
      perSecond(rail).toFixed(0),
      `p50 ${p50(rail).toFixed(1)} ms; rail B ${railB.toFixed(0)}/s`,
      (perSecond(rail) / railB).toFixed(2),
    ];
    checkTarget('402 challenge rate against the same handler free (ratio)', required / free, { atLeast: 0.5 }, '');
    const throughput =
      'settlements are group-committed (one Base transaction per batch), but each call still costs two pure-JS signer recoveries inside @x402/evm ' +
      '(verify, and again at settle; not reachable for libsecp256k1 without patching the library), three payment-row writes, and the load generator shares the 2 cores';
    const latency = 'at one client the answer waits for its own settlement: a Base transaction signed, recorded in the nonce ledger, mined and journaled';
    checkTarget('paid calls/s, rail B', railB, { atLeast: 500 }, 'calls/s', throughput);
    checkTarget('payment gate overhead, rail B, p50', added, { atMost: 2 }, 'ms', latency);
    return [
      ['GET /bench/paid without a proof (402 with offers for rails A, B, C), req/s', required.toFixed(0), `GET /bench/free ${free.toFixed(0)}; target ratio >= 0.5`, (required / free).toFixed(3)],
      [
        `paid calls/s, rail B (x402 exact, EIP-3009 on embedded Base), GET /bench/paid $0.001, ${PAID_CALLS.B} calls ${PAID_CONCURRENCY} at a time`,
        railB.toFixed(0),
        `p50 ${p50('B').toFixed(1)} ms; target >= 500`,
        (railB / 500).toFixed(2),
      ],
      paidRow('A', `MPP Tempo charge, signed transaction; made and fired in batches of ${RAIL_A_BATCH}`),
      paidRow('C', 'x402 exact on embedded Solana'),
      [
        `payment gate overhead, rail B, p50 ms (${SEQUENTIAL_CALLS} sequential calls on one connection: paid p50 - free p50)`,
        added.toFixed(2),
        `free p50 ${freeP50.toFixed(2)} ms, paid p50 ${paidP50.toFixed(2)} ms; target <= 2 ms`,
        (added / 2).toFixed(2),
      ],
    ];
  } finally {
    await server.stop();
  }
}
