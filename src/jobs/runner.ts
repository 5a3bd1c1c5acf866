import { createHash } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import type { Database, Tx } from '../db/client.js';
import type { Logger } from '../log.js';

export interface JobContext {
  jobId: string;
  /** 0 on the first attempt. */
  retryCount: number;
  signal: AbortSignal;
  log: Logger;
}

/**
 * A durable background job. Its work must be idempotent: a job runs at least once, and again
 * after a crash or a failure (with exponential backoff) until it succeeds or exhausts its retries.
 */
export interface JobDefinition<T extends object = object> {
  name: string;
  handle(data: T, context: JobContext): Promise<void>;
  /** Cron expression (UTC); the job is then also enqueued on that schedule, and once at start-up. */
  schedule?: string;
  /** Retries after the first attempt. Default 8. */
  retryLimit?: number;
  /** First retry delay in seconds, doubled each retry (with jitter). Default 2. */
  retryDelaySeconds?: number;
  /** Longest retry delay in seconds. Default 600. */
  retryDelayMaxSeconds?: number;
  /**
   * How long one attempt may run before it is presumed dead (crashed worker) and retried.
   * Default 300. This bounds how soon a job interrupted by a crash runs again after restart.
   */
  expireInSeconds?: number;
}

export interface SendOptions {
  /**
   * Enqueue at most once per key: the job id is derived from it, and a second send with the
   * same key (while the first is retained, 7 days after completion) is a no-op returning null.
   */
  key?: string;
  /** Enqueue inside this transaction: the job exists only if the transaction commits. */
  tx?: Tx;
  startAfterSeconds?: number;
}

export interface JobRunnerOptions {
  /** How often idle workers poll. Default 2 s. */
  pollingIntervalSeconds?: number;
  /** How often expired (crashed) jobs are detected. Default 10 s. */
  superviseIntervalSeconds?: number;
  /** How often due cron schedules are enqueued (schedules have minute granularity). Default 5 s. */
  cronIntervalSeconds?: number;
  /** Run handlers in this process (false: enqueue only). Default true. */
  work?: boolean;
  /** pg-boss's own connection pool (apart from the service's). Default 4. */
  poolMax?: number;
}

/** pg-boss on the service's own database (PGlite or PostgreSQL), wrapped for features. */
export class JobRunner {
  private readonly definitions = new Map<string, JobDefinition>();
  private boss: PgBoss | undefined;

  constructor(
    private readonly database: Database,
    private readonly log: Logger,
    private readonly options: JobRunnerOptions = {},
  ) {}

  define<T extends object>(definition: JobDefinition<T>): void {
    if (this.boss) throw new Error(`job ${definition.name} defined after start`);
    if (this.definitions.has(definition.name)) throw new Error(`job ${definition.name} defined twice`);
    this.definitions.set(definition.name, definition);
  }

  async start(): Promise<void> {
    const supervise = this.options.superviseIntervalSeconds ?? 10;
    const boss = new PgBoss({
      ...this.database.connection,
      schema: 'pgboss',
      max: this.options.poolMax ?? 4,
      superviseIntervalSeconds: supervise,
      monitorIntervalSeconds: supervise,
      cronWorkerIntervalSeconds: this.options.cronIntervalSeconds ?? 5,
      application_name: 'payroll-jobs',
    });
    boss.on('error', (error: Error) => this.log.error({ err: error }, 'job runner error'));
    await boss.start();
    this.boss = boss;

    for (const definition of this.definitions.values()) {
      await boss.createQueue(definition.name, {
        retryLimit: definition.retryLimit ?? 8,
        retryDelay: definition.retryDelaySeconds ?? 2,
        retryBackoff: true,
        retryDelayMax: definition.retryDelayMaxSeconds ?? 600,
        expireInSeconds: definition.expireInSeconds ?? 300,
      });
    }
    // The first send inside a transaction hung on PGlite unless a plain send came first
    // (ARCHITECTURE.md); send and remove one job at boot.
    const [first] = this.definitions.keys();
    if (first) {
      const warmUp = await boss.send(first, {}, { startAfter: 3600 });
      if (warmUp) await boss.deleteJob(first, warmUp);
    }
    if (this.options.work === false) return;
    for (const definition of this.definitions.values()) {
      await boss.work(
        definition.name,
        { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2, batchSize: 1 },
        async ([job]) => {
          if (!job) return;
          const log = this.log.child({ job: definition.name, jobId: job.id, attempt: job.retryCount });
          try {
            await definition.handle(job.data as object, {
              jobId: job.id,
              retryCount: job.retryCount,
              signal: job.signal,
              log,
            });
          } catch (error) {
            log.warn({ err: error }, 'job attempt failed');
            throw error;
          }
        },
      );
      if (definition.schedule) await boss.schedule(definition.name, definition.schedule, {}, { tz: 'UTC' });
    }
    // And once now: what a dead process left half done (a payout, a write) resumes at start-up,
    // not at the next tick. Every scheduled job is idempotent, so an extra run is harmless.
    await this.runScheduledNow();
  }

  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<string | null> {
    if (!this.boss) throw new Error('job runner not started');
    if (!this.definitions.has(name)) throw new Error(`unknown job ${name}`);
    const tx = options.tx;
    return this.boss.send(name, data, {
      ...(options.key ? { id: keyToUuid(name, options.key) } : {}),
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
      ...(tx ? { db: { executeSql: (text: string, values?: unknown[]) => tx.query(text, values) } } : {}),
    });
  }

  /** Runs every scheduled job once now, besides its schedule (at start-up, and after the dev clock moved: what fell due acts at once). */
  async runScheduledNow(): Promise<void> {
    const boss = this.boss;
    if (!boss || this.options.work === false) return;
    for (const definition of this.definitions.values()) {
      if (definition.schedule) await boss.send(definition.name, {});
    }
  }

  /** For admin views and tests: the job's state, or null when unknown. */
  async state(name: string, id: string): Promise<string | null> {
    if (!this.boss) throw new Error('job runner not started');
    const [job] = await this.boss.findJobs(name, { id });
    return job?.state ?? null;
  }

  /** Readiness: throws unless the runner is started and pg-boss answers (reads its queue list). */
  async ping(): Promise<void> {
    if (!this.boss) throw new Error('job runner not started');
    await this.boss.getQueues();
  }

  /**
   * Fetches no more jobs and waits up to `timeoutMs` (at least 1 s: pg-boss's floor) for running
   * ones to finish; those still running then are failed, so they are retried at once (by another
   * instance or after restart) instead of after their expiry. Their idempotency allows the rerun.
   */
  async stop(timeoutMs = 5_000): Promise<void> {
    const boss = this.boss;
    this.boss = undefined;
    await boss?.stop({ graceful: true, close: true, timeout: timeoutMs });
  }
}

/** A stable UUID for (job, key), so the same key always names the same job. */
function keyToUuid(name: string, key: string): string {
  const hex = createHash('sha256').update(`${name}\u0000${key}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
