/**
 * agent/pay figures: POST /api/mpp/agent/pay ($0.05 fee on rail B, then $0.01 paid from the
 * employer's treasury on Tempo) at 1, 10 and 100 concurrent clients, each client a distinct
 * authorized HMAC agent calling one after another: p50 and p99 latency (sending to the whole answer
 * read) and calls per second; target p99 < 200 ms at 100 clients. The reference, measured side by
 * side with the same number of calls at the same concurrency, is POST /api/mpp/memo/decode behind
 * the same gate and rail (a $0.01 fee, trivial handler), so the ratio separates agent/pay's own work
 * (identity proof, spend gates, the transfer on Tempo) from the gate's.
 *
 * The service runs in its own process (bench/payments-server.ts with BENCH_TRACE=1, which also
 * reports the server's own time per answer split at the fee settlement, each operator chain write's
 * execution, and how busy its main thread was); this process is the load generator. Fee proofs (EIP-3009, signed locally) and identity
 * proofs (HMAC over the exact body sent) are made before each measured burst, one per call.
 * Loopback only; every loop is bounded in count and time.
 *
 *   npx tsx bench/agent-pay.ts                        (alone; BENCH_RUNS, BENCH_AGENT_PAY_CALLS)
 *   BENCH_AGENT_PAY_CALLS=50,200,400 BENCH_RUNS=3 npx tsx bench/agent-pay.ts
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { agentProofHeaders } from '../test/support/agents.js';
import { call, expectAllPaid, median, pool, startServer, x402Header, type Call, type Headers, type Row } from './payments.js';
import { checkTarget } from './targets.js';

const PAY = '/api/mpp/agent/pay';
const MEMO = '/api/mpp/memo/decode';
const BASE_NETWORK = 'eip155:8453';
const CLIENTS = [1, 10, 100] as const;
/** Calls per run at each concurrency (BENCH_AGENT_PAY_CALLS=a,b,c overrides). */
const CALLS: number[] = process.env.BENCH_AGENT_PAY_CALLS ? process.env.BENCH_AGENT_PAY_CALLS.split(',').map(Number) : [50, 200, 400];
const TARGET_P99_MS = 200;
const AMOUNT = '0.01';
const AMOUNT_UNITS = 10_000n;
const FEES_UNITS = { [PAY]: 50_000n, [MEMO]: 10_000n };
/** The authorizations' velocity limit (the schema's maximum): a client makes at most this many calls per run. */
const VELOCITY_PER_MINUTE = 600;
const WARM_UP_CALLS = 10;
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * No client starts a call after this long in one burst: fee proofs are valid for 300 s from when
 * they were made (the rails' maxTimeoutSeconds) and identity proofs for 300 s from their timestamp.
 */
const BURST_TIMEOUT_MS = 240_000;

type Route = typeof PAY | typeof MEMO;
interface Prepared {
  headers: Headers;
  body: string;
}
interface Agent {
  identifier: string;
  secret: string;
}
interface Write {
  execMs: number;
}
interface RequestSample {
  totalMs: number;
  beforeBaseMs: number | null;
  baseMs: number | null;
}
interface Trace {
  requests: Record<string, RequestSample[]>;
  writes: { tempo: Write[]; base: Write[] };
  mainThread: { activeMs: number; idleMs: number };
  processCpuMs: number;
}
interface Burst {
  p50: number;
  p99: number;
  perSecond: number;
  /** The server's own time per answer (app.fetch), p50 / p99. */
  serverP50: number;
  serverP99: number;
  /**
   * p50s of the server's time split at the fee settlement (the request's settlement on Base, which
   * shares a transaction with the others queued with it): before it (gate verification and claim,
   * then the handler), the settlement, and after it (recording the settlement, the answer).
   */
  beforeSettleP50: number;
  settleP50: number;
  afterSettleP50: number;
  tempo: WriteStats;
  base: WriteStats;
  /** The server's main thread (event loop): share of the burst it was busy, and busy ms per call. */
  mainBusy: number;
  mainMsPerCall: number;
  /** The server process's CPU (all threads: PGlite's worker too) per call, ms. */
  cpuMsPerCall: number;
}
interface WriteStats {
  count: number;
  execP50: number;
  execP99: number;
}

/** Nearest-rank percentile (p99 of 50 samples is the largest). */
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

const writeStats = (writes: Write[]): WriteStats => ({
  count: writes.length,
  execP50: percentile(writes.map((w) => w.execMs), 0.5),
  execP99: percentile(writes.map((w) => w.execMs), 0.99),
});

async function post<T>(base: string, path: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== 200 && response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

const usd = (units: bigint) => `${units / 1_000_000n}.${(units % 1_000_000n).toString().padStart(6, '0')}`;

/** The rail-B (Base) requirement the route's 402 offers. */
async function baseRequirement(base: string, path: Route): Promise<PaymentRequirements> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  await response.arrayBuffer();
  if (response.status !== 402) throw new Error(`POST ${path} without a proof answered ${response.status}, not 402`);
  const offered = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!).accepts;
  const requirement = offered.find((r) => r.network === BASE_NETWORK);
  if (!requirement) throw new Error(`POST ${path}'s 402 offers ${offered.map((r) => r.network).join(', ')}, not Base`);
  return requirement;
}

/** The service's trace samples since the last read (bench/payments-server.ts, BENCH_TRACE=1). */
async function takeTrace(base: string): Promise<Trace> {
  const response = await fetch(`${base}/bench/trace`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (response.status !== 200) throw new Error(`GET /bench/trace answered ${response.status}`);
  return (await response.json()) as Trace;
}

interface Setup {
  base: string;
  owner: string;
  employerId: string;
  fee: ExactEvmScheme;
  requirements: Record<Route, PaymentRequirements>;
}

/** `clients` new HMAC agents of the employer: per-tx $1, per-day $1,000, the highest velocity. */
async function authorize(setup: Setup, clients: number, label: string): Promise<Agent[]> {
  return pool(
    Array.from({ length: clients }, (_, i) => i),
    5,
    'authorizations',
    async (i) => {
      const created = await post<{ agent_identifier: string; hmac_secret: string }>(
        setup.base,
        `/api/employers/${setup.employerId}/agents/authorizations`,
        {
          label: `bench ${label} ${i}`,
          agent_identifier: `bench-${label}-${i}-${randomBytes(4).toString('hex')}`,
          per_tx_cap_usd: '1.00',
          per_day_cap_usd: '1000.00',
          velocity_per_minute: VELOCITY_PER_MINUTE,
        },
        setup.owner,
      );
      return { identifier: created.agent_identifier, secret: created.hmac_secret };
    },
  );
}

const feeHeader = async (setup: Setup, route: Route) => x402Header(setup.requirements[route], (await setup.fee.createPaymentPayload(2, setup.requirements[route])).payload);

/** Call i of a burst, for client `agent`: a fresh fee proof, a unique body, its identity proof over those exact bytes. */
async function prepare(setup: Setup, route: Route, agent: Agent | null, tag: string): Promise<Prepared> {
  const fee = await feeHeader(setup, route);
  if (route === MEMO) return { headers: fee, body: JSON.stringify({ memo: `0x${randomBytes(32).toString('hex')}` }) };
  const body = JSON.stringify({
    employer_id: setup.employerId,
    recipient_wallet: getAddress(`0x${randomBytes(20).toString('hex')}`),
    amount: AMOUNT,
    reference: `bench-${tag}`,
  });
  // Signed now (not back-dated): the bodies differ, so the signatures do too.
  const proof = await agentProofHeaders(agent!.identifier, { hmac: agent!.secret }, { method: 'POST', path: PAY, body, timestamp: Math.floor(Date.now() / 1000) });
  return { headers: { ...fee, ...proof }, body };
}

/**
 * One burst: `perClient[w]` are client w's calls, made one after another; all clients at once.
 * Latency per call, calls per second over the whole burst, and the server's trace of it.
 */
async function burst(setup: Setup, route: Route, perClient: Prepared[][]): Promise<Burst> {
  await takeTrace(setup.base); // start the trace afresh
  const deadline = performance.now() + BURST_TIMEOUT_MS;
  const calls: Call[] = [];
  const started = performance.now();
  await Promise.all(
    perClient.map(async (mine) => {
      for (const prepared of mine) {
        if (performance.now() > deadline) throw new Error(`${route}: burst not done within ${BURST_TIMEOUT_MS / 1000} s`);
        calls.push(await call(`${setup.base}${route}`, prepared.headers, prepared.body));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  expectAllPaid(`POST ${route} at ${perClient.length} clients`, calls);
  const trace = await takeTrace(setup.base);
  const server = trace.requests[`POST ${route}`] ?? [];
  const settled = server.filter((r) => r.beforeBaseMs !== null && r.baseMs !== null);
  if (settled.length !== calls.length) throw new Error(`POST ${route}: ${settled.length} of ${calls.length} answers settled their fee on Base`);
  const ms = calls.map((c) => c.ms);
  return {
    p50: percentile(ms, 0.5),
    p99: percentile(ms, 0.99),
    perSecond: calls.length / seconds,
    serverP50: percentile(server.map((r) => r.totalMs), 0.5),
    serverP99: percentile(server.map((r) => r.totalMs), 0.99),
    beforeSettleP50: percentile(settled.map((r) => r.beforeBaseMs!), 0.5),
    settleP50: percentile(settled.map((r) => r.baseMs!), 0.5),
    afterSettleP50: percentile(settled.map((r) => r.totalMs - r.beforeBaseMs! - r.baseMs!), 0.5),
    tempo: writeStats(trace.writes.tempo),
    base: writeStats(trace.writes.base),
    mainBusy: trace.mainThread.activeMs / (trace.mainThread.activeMs + trace.mainThread.idleMs),
    mainMsPerCall: trace.mainThread.activeMs / calls.length,
    cpuMsPerCall: trace.processCpuMs / calls.length,
  };
}

/** Proofs for `calls` calls spread over the clients (call i to client i mod clients), made beforehand. */
async function prepareBurst(setup: Setup, route: Route, agents: Agent[] | null, clients: number, calls: number, tag: string): Promise<Prepared[][]> {
  const perClient: Prepared[][] = Array.from({ length: clients }, () => []);
  const made = await pool(
    Array.from({ length: calls }, (_, i) => i),
    1,
    `${route} proofs`,
    (i) => prepare(setup, route, agents?.[i % clients] ?? null, `${tag}-${i}`),
  );
  made.forEach((prepared, i) => perClient[i % clients]!.push(prepared));
  return perClient;
}

export async function agentPayFigures(runs: number): Promise<Row[]> {
  if (CALLS.length !== CLIENTS.length || CALLS.some((n, i) => !Number.isInteger(n) || n < CLIENTS[i]!)) {
    throw new Error(`BENCH_AGENT_PAY_CALLS must be ${CLIENTS.length} whole numbers, each at least its client count (${CLIENTS.join(', ')})`);
  }
  CLIENTS.forEach((clients, i) => {
    if (Math.ceil(CALLS[i]! / clients) > VELOCITY_PER_MINUTE) throw new Error(`${CALLS[i]} calls at ${clients} clients exceed an agent's ${VELOCITY_PER_MINUTE} per minute`);
  });
  const server = await startServer({ BENCH_TRACE: '1' });
  try {
    const { base } = server;
    const { token: owner } = await post<{ token: string }>(base, '/api/dev/token', { sub: 'bench-agent-pay-owner' });
    const { id: employerId } = await post<{ id: string }>(base, '/api/employers', { name: 'Agent Pay Bench Co' }, owner);
    const totalCalls = BigInt(runs * CALLS.reduce((a, b) => a + b, 0) + WARM_UP_CALLS);
    // Twice what the runs spend, at least $100.
    const treasuryUnits = [totalCalls * AMOUNT_UNITS * 2n, 100_000_000n].reduce((a, b) => (a > b ? a : b));
    await post(base, '/bench/fund-treasury', { employerId, usd: usd(treasuryUnits) });
    const payer = privateKeyToAccount(generatePrivateKey());
    const feeUnits = [totalCalls * (FEES_UNITS[PAY] + FEES_UNITS[MEMO]) * 2n, 100_000_000n].reduce((a, b) => (a > b ? a : b));
    await post(base, '/api/dev/faucet', { network: BASE_NETWORK, address: payer.address, amount: usd(feeUnits) });
    const setup: Setup = {
      base,
      owner,
      employerId,
      fee: new ExactEvmScheme(payer),
      requirements: { [PAY]: await baseRequirement(base, PAY), [MEMO]: await baseRequirement(base, MEMO) },
    };

    // Warm-up, untimed: one client, both routes.
    const warmAgents = await authorize(setup, 1, 'warm');
    for (const route of [PAY, MEMO] as const) {
      const warm = await prepareBurst(setup, route, warmAgents, 1, WARM_UP_CALLS, 'warm');
      await burst(setup, route, warm);
    }

    const results = CLIENTS.map(() => ({ pay: [] as Burst[], memo: [] as Burst[] }));
    for (let run = 0; run < runs; run++) {
      for (const [level, clients] of CLIENTS.entries()) {
        const calls = CALLS[level]!;
        const agents = await authorize(setup, clients, `r${run}c${clients}`);
        const pay = await prepareBurst(setup, PAY, agents, clients, calls, `r${run}c${clients}`);
        const memo = await prepareBurst(setup, MEMO, null, clients, calls, `r${run}c${clients}`);
        // Alternate which goes first, so neither always meets a fresher (or more loaded) server.
        if (run % 2 === 0) {
          results[level]!.pay.push(await burst(setup, PAY, pay));
          results[level]!.memo.push(await burst(setup, MEMO, memo));
        } else {
          results[level]!.memo.push(await burst(setup, MEMO, memo));
          results[level]!.pay.push(await burst(setup, PAY, pay));
        }
        const show = (b: Burst) =>
          `p50 ${b.p50.toFixed(1)} p99 ${b.p99.toFixed(1)} ms, ${b.perSecond.toFixed(1)}/s; server p50 ${b.beforeSettleP50.toFixed(1)} + settle ${b.settleP50.toFixed(1)} + ${b.afterSettleP50.toFixed(1)} ms; ` +
          `main thread ${(100 * b.mainBusy).toFixed(0)}% (${b.mainMsPerCall.toFixed(1)} ms/call); Tempo tx ${b.tempo.count} exec p50 ${b.tempo.execP50.toFixed(1)}, Base tx ${b.base.count} exec p50 ${b.base.execP50.toFixed(1)}`;
        process.stderr.write(
          `agent-pay run ${run + 1}/${runs}, ${clients} clients:\n  agent/pay   ${show(results[level]!.pay.at(-1)!)}\n  memo/decode ${show(results[level]!.memo.at(-1)!)}\n`,
        );
      }
    }

    const rows: Row[] = [];
    const m = (bursts: Burst[], pick: (b: Burst) => number) => median(bursts.map(pick));
    for (const [level, clients] of CLIENTS.entries()) {
      const { pay, memo } = results[level]!;
      const payP99 = m(pay, (b) => b.p99);
      const memoP99 = m(memo, (b) => b.p99);
      const who = `${clients} client${clients === 1 ? '' : 's'}`;
      const target = clients === 100 ? `; target p99 < ${TARGET_P99_MS} ms` : '';
      const verdict = clients === 100 ? (payP99 < TARGET_P99_MS ? ' (target met)' : ' (target not met)') : '';
      if (clients === 100) {
        // 100 calls at once on one main thread cannot all finish before the sum of their CPU time on it.
        const floor = m(pay, (b) => b.mainMsPerCall) * clients;
        checkTarget('POST /api/mpp/agent/pay p99 at 100 clients', payP99, { below: TARGET_P99_MS }, 'ms', `a floor of ${floor.toFixed(0)} ms on this machine: ${clients} calls x ${m(pay, (b) => b.mainMsPerCall).toFixed(1)} ms of main-thread CPU each`);
      }
      rows.push([
        `POST /api/mpp/agent/pay ($0.05 fee rail B, $0.01 from the treasury on Tempo) p50 / p99 ms at ${who}, ${CALLS[level]} calls${target}`,
        `${m(pay, (b) => b.p50).toFixed(0)} / ${payP99.toFixed(0)}${verdict}`,
        `POST /api/mpp/memo/decode (same gate, rail B $0.01) p50 / p99 ${m(memo, (b) => b.p50).toFixed(0)} / ${memoP99.toFixed(0)}`,
        (payP99 / memoP99).toFixed(2),
      ]);
      const payRate = m(pay, (b) => b.perSecond);
      const memoRate = m(memo, (b) => b.perSecond);
      rows.push([`POST /api/mpp/agent/pay calls/s at ${who}`, payRate.toFixed(1), `memo/decode ${memoRate.toFixed(1)}/s`, (payRate / memoRate).toFixed(2)]);
    }
    // Where the time goes at the highest concurrency (server side), against the same at 1 client.
    const top = results[CLIENTS.length - 1]!;
    const one = results[0]!;
    const most = CLIENTS[CLIENTS.length - 1];
    const split = (bursts: Burst[]) =>
      `${m(bursts, (b) => b.beforeSettleP50).toFixed(0)} / ${m(bursts, (b) => b.settleP50).toFixed(0)} / ${m(bursts, (b) => b.afterSettleP50).toFixed(0)}`;
    rows.push([
      `agent/pay at ${most} clients, where a call's time goes on the server, p50 ms: before the fee settlement (gate verify + claim, then identity proof, spend gates, Tempo transfer) / rail B settlement on Base (group-committed with the settlements queued beside it) / after`,
      split(top.pay),
      `memo/decode ${split(top.memo)}; agent/pay at 1 client ${split(one.pay)}`,
      '',
    ]);
    const busy = (bursts: Burst[]) =>
      `main thread ${(100 * m(bursts, (b) => b.mainBusy)).toFixed(0)}% busy, ${m(bursts, (b) => b.mainMsPerCall).toFixed(1)} ms per call; process CPU ${m(bursts, (b) => b.cpuMsPerCall).toFixed(1)} ms per call`;
    rows.push([
      `server at ${most} clients, agent/pay: main thread (event loop) busy share and busy ms per call; process CPU (all threads) ms per call`,
      busy(top.pay),
      `memo/decode ${busy(top.memo)}`,
      (m(top.pay, (b) => b.mainMsPerCall) / m(top.memo, (b) => b.mainMsPerCall)).toFixed(2),
    ]);
    const calls = CALLS[CLIENTS.length - 1]!;
    rows.push([
      `chain writes at ${most} clients: Tempo transactions per agent/pay call, and one write's execution p50 ms (at 1 client in brackets); each operator's writes run one at a time`,
      `${(m(top.pay, (b) => b.tempo.count) / calls).toFixed(2)} per call, ${m(top.pay, (b) => b.tempo.execP50).toFixed(1)} (${m(one.pay, (b) => b.tempo.execP50).toFixed(1)})`,
      `Base fee settlement write p50 ${m(top.memo, (b) => b.base.execP50).toFixed(1)} (${m(one.memo, (b) => b.base.execP50).toFixed(1)}) under memo/decode, ${m(top.pay, (b) => b.base.execP50).toFixed(1)} (${m(one.pay, (b) => b.base.execP50).toFixed(1)}) under agent/pay`,
      '',
    ]);
    return rows;
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await agentPayFigures(Number(process.env.BENCH_RUNS ?? 3));
  process.stdout.write(`${os.cpus().length} x ${os.cpus()[0]?.model}\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
}
