import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildApp } from '../../app.js';
import { JobRunner } from '../../jobs/runner.js';
import { createLogger } from '../../log.js';
import { readinessChecks } from './readiness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /readyz', () => {
  it('says which check failed but never what it said', async () => {
    const secret = 'https://rpc.example/v2/SECRET_ALCHEMY_KEY';
    const app = buildApp({
      config: t.config,
      database: t.database,
      log: createLogger('silent'),
      verifyIdentity: t.verifyIdentity,
      devIdentityProvider: null,
      readiness: [
        { name: 'database', check: async () => {} },
        { name: 'jobs', check: () => Promise.reject(new Error(`connect ECONNREFUSED ${secret}`)) },
      ],
    });
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toContain('SECRET_ALCHEMY_KEY');
    expect(text).not.toContain('ECONNREFUSED');
    expect(JSON.parse(text)).toEqual({ status: 'not_ready', checks: { database: { ok: true }, jobs: { ok: false } } });
  });

  it('checks only this instance: the database (and the job runner where one runs), no chains', async () => {
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: { ok: true } } });
  });

  it('stays ready while the database is busy but answering (every pool connection taken, a queue behind them)', async () => {
    // More transactions than the pool has connections (10), each holding its connection 1 s: a fresh
    // `SELECT 1` waits seconds for a connection (on PGlite, whose one session runs one transaction
    // at a time, behind every transaction), as under the fuzz test on a slow machine.
    const workers = t.database.engine === 'pglite' ? 6 : 40;
    const until = Date.now() + 4000;
    const worker = async () => {
      while (Date.now() < until) {
        await t.database.transaction(async (tx) => {
          await tx.query('SELECT 1');
          await sleep(1000);
        });
      }
    };
    const load = Promise.all(Array.from({ length: workers }, worker));
    await sleep(1500);
    const started = Date.now();
    const res = await t.request('GET', '/readyz');
    const waited = Date.now() - started;
    const body = await res.json();
    await load;
    expect({ status: res.status, body }).toEqual({ status: 200, body: { status: 'ready', checks: { database: { ok: true } } } });
    expect(waited).toBeLessThan(2000);
  }, 30_000);

  it('checks the job runner: not ready before it starts, ready once pg-boss answers', async () => {
    const jobs = new JobRunner(t.database, createLogger('silent'), { work: false });
    const [, jobsCheck] = readinessChecks(t.database, jobs);
    expect(jobsCheck!.name).toBe('jobs');
    await expect(jobsCheck!.check()).rejects.toThrow();
    await jobs.start();
    try {
      await expect(jobsCheck!.check()).resolves.toBeUndefined();
    } finally {
      await jobs.stop();
    }
    await expect(jobsCheck!.check()).rejects.toThrow();
  }, 60_000);
});
