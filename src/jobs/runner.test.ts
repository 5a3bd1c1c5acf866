import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget } from '../../test/support/database.js';
import { openDatabase, type Database } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../log.js';
import { JobRunner } from './runner.js';

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('job runner', () => {
  let database: Database;
  let jobs: JobRunner;
  let drop: () => Promise<void>;
  const attempts: { name: string; data: unknown; retryCount: number; at: number }[] = [];

  beforeAll(async () => {
    const target = await createTestDatabaseTarget();
    drop = target.drop;
    database = await openDatabase({ url: target.url, dataDir: null });
    await migrate(database);
    jobs = new JobRunner(database, createLogger('silent'), {
      pollingIntervalSeconds: 0.5,
      superviseIntervalSeconds: 1,
      cronIntervalSeconds: 1,
    });
    jobs.define({
      name: 'flaky',
      retryDelaySeconds: 1,
      async handle(data, { retryCount }) {
        attempts.push({ name: 'flaky', data, retryCount, at: Date.now() });
        if (retryCount < 2) throw new Error('transient failure');
      },
    });
    jobs.define({
      name: 'record',
      async handle(data, { retryCount }) {
        attempts.push({ name: 'record', data, retryCount, at: Date.now() });
      },
    });
    jobs.define({
      name: 'scheduled',
      schedule: '* * * * *', // every minute: the finest grain pg-boss schedules
      async handle(data, { retryCount }) {
        attempts.push({ name: 'scheduled', data, retryCount, at: Date.now() });
      },
    });
    await jobs.start();
  });
  afterAll(async () => {
    await jobs.stop();
    await database.close();
    await drop();
  });

  it('retries a failing job with growing delays until it succeeds', async () => {
    const id = await jobs.send('flaky', { n: 1 });
    expect(id).toBeTruthy();
    await until(async () => ((await jobs.state('flaky', id!)) === 'completed' ? true : undefined), 30_000);
    const runs = attempts.filter((a) => a.name === 'flaky');
    expect(runs.map((r) => r.retryCount)).toEqual([0, 1, 2]);
    const [a, b, c] = runs.map((r) => r.at) as [number, number, number];
    expect(b - a).toBeGreaterThanOrEqual(900);
    expect(c - b).toBeGreaterThanOrEqual(900);
  });

  it('runs a job on its cron schedule', async () => {
    await until(async () => (attempts.some((a) => a.name === 'scheduled') ? true : undefined), 70_000);
  }, 80_000);

  it('enqueues once per key', async () => {
    const first = await jobs.send('record', { key: 'k' }, { key: 'once', startAfterSeconds: 3600 });
    const second = await jobs.send('record', { key: 'k' }, { key: 'once', startAfterSeconds: 3600 });
    expect(first).toBeTruthy();
    expect(second).toBeNull();
  });

  it('enqueues inside a transaction only if it commits', async () => {
    const committed = await database.transaction((tx) => jobs.send('record', { tx: 'committed' }, { tx }));
    let rolledBack: string | null = null;
    await database
      .transaction(async (tx) => {
        rolledBack = await jobs.send('record', { tx: 'rolled back' }, { tx });
        throw new Error('abort');
      })
      .catch(() => {});
    await until(async () => ((await jobs.state('record', committed!)) === 'completed' ? true : undefined));
    expect(rolledBack).toBeTruthy();
    expect(await jobs.state('record', rolledBack!)).toBeNull();
    expect(attempts.filter((a) => a.name === 'record').map((a) => a.data)).toEqual([{ tx: 'committed' }]);
  });
});

describe('a job interrupted by a crash', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((child) => child.kill('SIGKILL')));

  function start(mode: string, env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/job-process.ts', mode], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let output = '';
    const said = (word: string) =>
      new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes(word)) resolve();
        });
        child.on('exit', (code) => reject(new Error(`${mode} process exited (${code}) before ${word}`)));
      });
    return { child, said };
  }

  it('runs again after a restart and completes', async () => {
    const target = await createTestDatabaseTarget();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'job-crash-'));
    const env: Record<string, string> = target.url ? { DATABASE_URL: target.url } : { DATA_DIR: dataDir };
    try {
      const crashing = start('crash', env);
      await crashing.said('STARTED');
      crashing.child.kill('SIGKILL'); // no shutdown, no cleanup: the job is left `active`
      await new Promise((resolve) => crashing.child.once('exit', resolve));

      const recovering = start('recover', env);
      await recovering.said('DONE');
      recovering.child.kill('SIGTERM');
      await new Promise((resolve) => recovering.child.once('exit', resolve));

      const database = await openDatabase({ url: target.url, dataDir: target.url ? null : dataDir });
      try {
        const { rows } = await database.pool.query('SELECT job_id, attempt, mode FROM job_probe ORDER BY attempt');
        expect(rows).toHaveLength(2);
        expect(rows[0]).toMatchObject({ attempt: 0, mode: 'crash' });
        expect(rows[1]).toMatchObject({ attempt: 1, mode: 'recover', job_id: rows[0].job_id });
      } finally {
        await database.close();
      }
    } finally {
      await target.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
