/**
 * Scale-out: the same paid calls through a round-robin proxy in front of one instance, then three
 * (one PostgreSQL database, one devnet process, shared DATA_DIR), so the scaling is a number. The
 * route is a real `reads` route, GET /api/mpp/treasury/yield-rates, paid on rail B with proofs made
 * beforehand by @x402/evm's client. Loopback only; bounded in count and time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createScratchDatabase } from '../test/support/database.js';
import { startRoundRobinProxy } from '../test/support/round-robin-proxy.js';
import { freePort, startDevnetProcess, startServiceProcess, waitForHealthy, type ServiceProcess } from '../test/support/service-process.js';
import { call, expectAllPaid, median, pool, x402Header, type Row } from './payments.js';

const ROUTE = '/api/mpp/treasury/yield-rates';
const CALLS = Number(process.env.BENCH_CLUSTER_CALLS ?? 400);
const CONCURRENCY = 30;

/** Paid calls/s through a proxy in front of `upstreams`, proofs made first (untimed). */
async function paidThrough(upstreams: string[], runs: number): Promise<{ perSecond: number; p50: number }> {
  const proxy = await startRoundRobinProxy(upstreams);
  try {
    const challenge = await fetch(`${proxy.url}${ROUTE}`);
    await challenge.arrayBuffer();
    const requirement = decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!).accepts.find((r) => r.network === 'eip155:8453')!;
    const account = privateKeyToAccount(generatePrivateKey());
    const funded = await fetch(`${proxy.url}/api/dev/faucet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'eip155:8453', address: account.address, amount: '1000' }),
    });
    if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}`);
    const scheme = new ExactEvmScheme(account);
    const results: { perSecond: number; p50: number }[] = [];
    for (let run = 0; run < runs; run++) {
      const proofs = [];
      for (let i = 0; i < CALLS; i++) proofs.push(x402Header(requirement, (await scheme.createPaymentPayload(2, requirement)).payload));
      const started = performance.now();
      const calls = await pool(proofs, CONCURRENCY, 'cluster paid calls', (headers) => call(`${proxy.url}${ROUTE}`, headers));
      const seconds = (performance.now() - started) / 1000;
      expectAllPaid(`paid calls through ${upstreams.length} instance(s)`, calls);
      results.push({ perSecond: CALLS / seconds, p50: median(calls.map((c) => c.ms)) });
    }
    return { perSecond: median(results.map((r) => r.perSecond)), p50: median(results.map((r) => r.p50)) };
  } finally {
    await proxy.close();
  }
}

export async function clusterFigures(postgresUrl: string, runs: number): Promise<Row[]> {
  const database = await createScratchDatabase(postgresUrl);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cluster-'));
  const devnetDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-devnet-'));
  const devnet = await startDevnetProcess(devnetDir);
  const instances: { process: ServiceProcess; url: string }[] = [];
  const start = async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = startServiceProcess({ PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: database.url, DEVNET_URL: devnet.url, LOG_LEVEL: 'warn' });
    instances.push({ process: child, url });
    await waitForHealthy(url, 90_000);
  };
  try {
    await start();
    const one = await paidThrough([instances[0]!.url], runs);
    await start();
    await start();
    const three = await paidThrough(instances.map((i) => i.url), runs);
    const label = `${CALLS} rail-B paid calls to GET ${ROUTE}, ${CONCURRENCY} at a time, through a round-robin proxy; one PostgreSQL, one devnet process`;
    return [
      [`paid calls/s, 1 instance (${label})`, one.perSecond.toFixed(0), `p50 ${one.p50.toFixed(1)} ms`, '1.00'],
      [`paid calls/s, 3 instances (${label})`, three.perSecond.toFixed(0), `p50 ${three.p50.toFixed(1)} ms; 1 instance ${one.perSecond.toFixed(0)}/s`, (three.perSecond / one.perSecond).toFixed(2)],
    ];
  } finally {
    for (const instance of instances) instance.process.child.kill('SIGTERM');
    await Promise.all(instances.map((i) => i.process.exited));
    devnet.child.kill('SIGTERM');
    await database.drop();
    for (const dir of [dataDir, devnetDir]) fs.rmSync(dir, { recursive: true, force: true });
  }
}
