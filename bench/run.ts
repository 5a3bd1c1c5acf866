/**
 * `npm run bench`: runs every benchmark against the local service (started as `npm start` does, in
 * its own process) and writes BENCHMARKS.md. Each figure is the median of several runs; where
 * there is a reference it is measured in the same run and given as a ratio. Loopback only;
 * every load run is bounded in time.
 *
 * BENCH_ONLY=agent-pay,payments (any of start, http, chains, payments, payroll, streams,
 * agent-pay, mining, cluster) runs only those and prints their table without writing BENCHMARKS.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { createScratchDatabase } from '../test/support/database.js';
import { agentPayFigures } from './agent-pay.js';
import { chainFigures } from './chains.js';
import { clusterFigures } from './cluster.js';
import { paymentFigures } from './payments.js';
import { payrollFigures } from './payroll.js';
import { streamFigures } from './streams.js';
import { saltMiningFigures } from './salt-mining.js';
import { checkTarget, targetChecks } from './targets.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 20;
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECTIONS = ['start', 'http', 'chains', 'payments', 'payroll', 'streams', 'agent-pay', 'mining', 'cluster'];
const ONLY = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const unknown = ONLY?.filter((name) => !SECTIONS.includes(name)) ?? [];
if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown ${unknown.join(', ')} (known: ${SECTIONS.join(', ')})`);
const want = (section: string) => !ONLY || ONLY.includes(section);

interface Service {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts the service and returns once /healthz answers, with the time that took. */
async function startService(env: Record<string, string>): Promise<{ service: Service; readyMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error('service did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const readyMs = performance.now() - started;
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { service: { child, base, stop }, readyMs };
}

async function load(options: autocannon.Options) {
  const result = await autocannon({ connections: CONNECTIONS, duration: LOAD_SECONDS, ...options });
  const failures = result.non2xx + result.errors + result.timeouts;
  if (failures > 0) throw new Error(`${options.url}: ${failures} failed requests`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

async function ownerToken(base: string): Promise<string> {
  const res = await fetch(`${base}/api/dev/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sub: 'demo-owner' }),
  });
  return ((await res.json()) as { token: string }).token;
}

/** Authenticated, validated JSON POST: create-or-return of an employer the caller already owns. */
function employerPost(base: string, token: string): autocannon.Options {
  return {
    url: `${base}/api/employers`,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Co' }),
  };
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'bench-'));
const lines: string[] = [];
const row = (figure: string, value: string, reference: string, ratio: string) =>
  lines.push(`| ${figure} | ${value} | ${reference} | ${ratio} |`);

// 1. Cold start to ready: a fresh data directory (database created), then restarts of it.
if (want('start')) {
  const coldStarts: number[] = [];
  const warmStarts: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = tmp();
    const cold = await startService({ DATA_DIR: dir });
    coldStarts.push(cold.readyMs);
    await cold.service.stop();
    const warm = await startService({ DATA_DIR: dir });
    warmStarts.push(warm.readyMs);
    await warm.service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  checkTarget('cold start to ready, fresh data dir (PGlite)', median(coldStarts), { below: 15000 }, 'ms');
  row('cold start to ready, fresh data dir (PGlite), ms', median(coldStarts).toFixed(0), 'target < 15000', (median(coldStarts) / 15000).toFixed(2));
  row('restart to ready, existing data dir (PGlite), ms', median(warmStarts).toFixed(0), '', '');
}

// 2. HTTP: an authenticated transactional POST against the bare liveness route, same server.
async function httpFigures(label: string, env: Record<string, string>) {
  const { service } = await startService(env);
  try {
    const token = await ownerToken(service.base);
    const reference: number[] = [];
    const post: { rps: number; p50: number; p99: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      reference.push((await load({ url: `${service.base}/healthz` })).rps);
      post.push(await load(employerPost(service.base, token)));
    }
    const postRps = median(post.map((p) => p.rps));
    row(`GET /healthz, req/s (${label})`, median(reference).toFixed(0), '', '');
    row(
      `POST /api/employers create-or-return (JWT, validation, 2 reads), req/s (${label})`,
      postRps.toFixed(0),
      `GET /healthz ${median(reference).toFixed(0)}`,
      (postRps / median(reference)).toFixed(3),
    );
    row(`POST /api/employers p50 / p99 latency, ms (${label})`, `${median(post.map((p) => p.p50))} / ${median(post.map((p) => p.p99))}`, '', '');
    return postRps;
  } finally {
    await service.stop();
  }
}

if (want('http')) {
  const pgliteDir = tmp();
  const pgliteRps = await httpFigures('PGlite', { DATA_DIR: pgliteDir });
  fs.rmSync(pgliteDir, { recursive: true, force: true });

  if (await postgresReachable()) {
    const database = await createScratchDatabase(POSTGRES_URL);
    const dir = tmp();
    try {
      const postgresRps = await httpFigures('PostgreSQL', { DATA_DIR: dir, DATABASE_URL: database.url });
      row('POST /api/employers, PGlite against PostgreSQL', pgliteRps.toFixed(0), `PostgreSQL ${postgresRps.toFixed(0)}`, (pgliteRps / postgresRps).toFixed(3));
    } finally {
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } else {
    lines.push(`| PGlite against PostgreSQL | not measured: no server at ${POSTGRES_URL} | | |`);
  }
}

const figures: [string, () => Promise<[string, string, string, string][]>][] = [
  ['chains', () => chainFigures(RUNS)],
  ['payments', () => paymentFigures(RUNS)],
  ['agent-pay', () => agentPayFigures(RUNS)],
  ['payroll', () => payrollFigures(RUNS)],
  ['streams', () => streamFigures()],
  ['mining', () => saltMiningFigures(RUNS)],
  // Needs PostgreSQL: several instances share one database.
  ['cluster', async () => ((await postgresReachable()) ? clusterFigures(POSTGRES_URL, RUNS) : [['paid calls/s, 1 vs 3 instances', 'skipped', `no PostgreSQL at ${POSTGRES_URL}`, '']])],
];
for (const [section, gather] of figures) {
  if (want(section)) for (const [figure, value, reference, ratio] of await gather()) row(figure, value, reference, ratio);
}

const cpus = os.cpus();
const report = `# Benchmarks

Written by \`npm run bench\` (bench/run.ts); do not edit by hand.

- Date: ${new Date().toISOString()}
- Machine: ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}
- Node ${process.version}; ${RUNS} runs per figure (median); load: ${CONNECTIONS} connections for ${LOAD_SECONDS} s per run, loopback, load generator in a separate process from the service

## Targets

${targetChecks.filter((t) => t.met).length} of ${targetChecks.length} targets met.${
  targetChecks.some((t) => !t.met) ? ` Not met: ${targetChecks.filter((t) => !t.met).map((t) => `${t.figure} (${t.gap})`).join('; ')}.` : ''
}

| figure | target | measured | met | by how much |
|---|---|---|---|---|
${targetChecks.map((t) => `| ${t.figure} | ${t.goal} | ${t.measured} | ${t.met ? 'yes' : '**no**'} | ${t.gap} |`).join('\n')}

## All figures

| figure | value | reference (same run) | ratio |
|---|---|---|---|
${lines.join('\n')}
`;
// A partial run (BENCH_ONLY) must not replace the full record.
if (!ONLY) fs.writeFileSync('BENCHMARKS.md', report);
process.stdout.write(report);
