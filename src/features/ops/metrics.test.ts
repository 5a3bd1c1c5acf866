import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { openTestDatabase } from '../../../test/support/database.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, x402 } from '../../../test/support/pay.js';
import { buildApp } from '../../app.js';
import { HttpMetrics } from '../../http/metrics.js';
import { definePlatformJobs } from '../../jobs/definitions.js';
import { JobRunner } from '../../jobs/runner.js';
import { createLogger } from '../../log.js';
import { BusinessMetrics } from './business-metrics.js';
import { DependencyHealth, httpProbe } from './dependencies.js';

const METRICS_TOKEN = 'metrics-token-0123456789';
let t: TestApp;
let server: LoopbackServer;
let admin: string;
beforeAll(async () => {
  t = await startTestApp({ ADMIN_USER_IDS: 'root', METRICS_TOKEN }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  admin = await t.token('root');
}, 120_000);
afterAll(async () => {
  await server.close();
  await t.close();
});

const scrape = async () => {
  const res = await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
};
/** The value of one series, 0 when absent. */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};
/** An app over the test's database with this config change and these outside systems. */
const appWith = (change: Partial<TestApp['config']>, health?: DependencyHealth) => {
  const http = new HttpMetrics({ processMetrics: false });
  return buildApp({
    config: { ...t.config, ...change },
    database: t.database,
    log: createLogger('silent'),
    verifyIdentity: t.verifyIdentity,
    devIdentityProvider: null,
    readiness: [],
    observability: { http, business: new BusinessMetrics({ registry: http.registry, database: t.database, health }), health },
  });
};

describe('GET /metrics access', () => {
  it('asks for METRICS_TOKEN when it is set', async () => {
    const bare = await t.request('GET', '/metrics');
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await t.request('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    expect(await scrape()).toContain('http_requests_total');
  });

  it('is off (404) in live mode without a token, open in local mode without one', async () => {
    expect((await appWith({ mode: 'live', metricsAccess: { kind: 'off' } }).request('/metrics')).status).toBe(404);
    expect((await appWith({ metricsAccess: { kind: 'open' } }).request('/metrics')).status).toBe(200);
  });
});

describe('GET /api/admin?scope=health', () => {
  it('is for platform admins only', async () => {
    expect((await t.request('GET', '/api/admin?scope=health')).status).toBe(401);
    expect((await t.request('GET', '/api/admin?scope=health', { token: await t.token('someone-else') })).status).toBe(403);
  });

  it('answers per chain with its latency', async () => {
    const res = await t.request('GET', '/api/admin?scope=health', { token: admin });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { scope: string; checks: Record<string, unknown> };
    expect(body.scope).toBe('health');
    for (const chain of ['tempo', 'base', 'solana']) expect(body.checks[chain]).toEqual({ ok: true, latency_ms: expect.any(Number) });
    expect(await scrape()).toMatch(/^dependency_up\{dependency="tempo"\} 1$/m);
  });

  it('says why a dependency is down without its error text (no URL, no key)', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const health = new DependencyHealth({
      probes: [
        httpProbe('refused', `http://127.0.0.1:${closedPort}/v2/SECRET_ALCHEMY_KEY`),
        { name: 'silent', probe: () => new Promise(() => {}) },
        { name: 'broken', probe: () => Promise.reject(new Error('bad answer from https://rpc.example/SECRET_ALCHEMY_KEY')) },
      ],
    });
    const app = appWith({ metricsAccess: { kind: 'open' } }, health);
    const res = await app.request('/api/admin?scope=health', { headers: { authorization: `Bearer ${admin}` } });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toMatch(/SECRET|127\.0\.0\.1|rpc\.example/);
    expect(JSON.parse(text).checks).toEqual({
      refused: { ok: false, reason: 'unreachable' },
      silent: { ok: false, reason: 'timeout' },
      broken: { ok: false, reason: 'error' },
    });
    const metrics = await (await app.request('/metrics')).text();
    expect(metrics).toMatch(/^dependency_up\{dependency="refused"\} 0$/m);
    expect(metrics).not.toContain('SECRET');
  }, 20_000);
});

describe('business metrics', () => {
  it('count a paid call by rail and state, its settlement latency and the chain write it took', async () => {
    const before = await scrape();
    const { pay } = await railA(t, server.url);
    expect((await pay('/api/mpp/memo/decode', { method: 'POST', body: { memo: `0x${'ab'.repeat(32)}` } })).status).toBe(200);
    const onBase = await x402(t, server.url, 'B');
    expect((await onBase.pay('/api/mpp/memo/decode', { method: 'POST', body: { memo: `0x${'cd'.repeat(32)}` } })).status).toBe(200);
    const after = await scrape();
    for (const rail of ['A', 'B']) {
      expect(value(after, `payments{rail="${rail}",status="served"}`), rail).toBe(value(before, `payments{rail="${rail}",status="served"}`) + 1);
      expect(value(after, `payment_settlement_seconds_count{rail="${rail}"}`), rail).toBe(value(before, `payment_settlement_seconds_count{rail="${rail}"}`) + 1);
    }
    const writes = (text: string) => [...text.matchAll(/^chain_writes_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(writes(after)).toBeGreaterThan(writes(before));
    expect(after).toMatch(/^chain_nonce_wait_seconds_count\{chain="eip155:\d+",signer="0x[0-9a-fA-F]{40}"\} \d+$/m);
    expect(after).toMatch(/^chain_signer_next_nonce\{chain="eip155:\d+",signer="0x[0-9a-fA-F]{40}"\} [1-9]\d*$/m);
  }, 120_000);

  it('count what the payments reconciler job resolves: a fee settled but never served is refunded', async () => {
    const before = await scrape();
    const { pay } = await railA(t, server.url);
    expect((await pay('/api/mpp/memo/decode', { method: 'POST', body: { memo: `0x${'ef'.repeat(32)}` } })).status).toBe(200);
    // As if its request died after settlement, two hours ago: the reconciler owes the payer a refund.
    const { rows } = await t.database.pool.query(
      `UPDATE payments SET status = 'settled', served_at = NULL, created_at = now() - interval '2 hours', settled_at = now() - interval '2 hours',
            lease_until = now() - interval '2 hours'
        WHERE id = (SELECT id FROM payments WHERE rail = 'A' AND status = 'served' ORDER BY created_at DESC LIMIT 1) RETURNING amount`,
    );
    const jobs = new JobRunner(t.database, createLogger('silent'));
    definePlatformJobs(jobs, { database: t.database, paymentReconciler: t.payments!.reconciler, events: t.observability.business });
    await jobs.start(); // a scheduled job runs once at start-up
    try {
      await expect
        .poll(async () => value(await scrape(), 'reconciler_resolutions_total{reconciler="payments",outcome="refunded"}'), { timeout: 30_000, interval: 500 })
        .toBe(value(before, 'reconciler_resolutions_total{reconciler="payments",outcome="refunded"}') + 1);
    } finally {
      await jobs.stop();
    }
    const after = await scrape();
    expect(value(after, 'payments{rail="A",status="refunded"}')).toBe(value(before, 'payments{rail="A",status="refunded"}') + 1);
    expect(value(after, 'payments_refunded_base_units{rail="A"}')).toBe(value(before, 'payments_refunded_base_units{rail="A"}') + Number(rows[0]!.amount));
  }, 90_000);

  it('count jobs per queue and state from the database', async () => {
    const jobs = new JobRunner(t.database, createLogger('silent'), { work: false });
    jobs.define({ name: 'metrics-probe', handle: async () => {} });
    await jobs.start();
    try {
      await jobs.send('metrics-probe', {});
      await jobs.send('metrics-probe', {});
      expect(value(await scrape(), 'job_queue_jobs{queue="metrics-probe",state="created"}')).toBe(2);
    } finally {
      await jobs.stop();
    }
  }, 60_000);

  it('leave the database gauges empty, not /metrics down, when the database does not answer', async () => {
    const gone = await openTestDatabase();
    await gone.close();
    const http = new HttpMetrics({ processMetrics: false });
    const app = buildApp({
      config: { ...t.config, metricsAccess: { kind: 'open' } },
      database: gone.database,
      log: createLogger('silent'),
      verifyIdentity: t.verifyIdentity,
      devIdentityProvider: null,
      readiness: [],
      observability: { http, business: new BusinessMetrics({ registry: http.registry, database: gone.database }), health: undefined },
    });
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('# TYPE payments gauge');
    expect(text).not.toMatch(/^payments\{/m);
  });

  it('count outbox emails by status', async () => {
    await t.database.pool.query("INSERT INTO email_outbox (to_address, subject, body_text, dedupe_key) VALUES ('a@b.example', 's', 'b', 'metrics-test')");
    expect(value(await scrape(), 'email_outbox{status="queued"}')).toBeGreaterThanOrEqual(1);
  });
});
