import type pg from 'pg';
import type { Database } from '../../db/client.js';
import type { JobRunner } from '../../jobs/runner.js';
import type { ReadinessCheck } from './routes.js';

/** A query the pool answered this recently proves the database alive: no probe needed. */
const PROOF_OF_LIFE_MS = 5000;

/**
 * Whether the database answers, without queueing behind the request pool. Under load a probe
 * `SELECT 1` waits for a free connection (on PGlite, behind every open transaction of its one
 * session) and timed out on a busy but working database; so any query the pool answered in the
 * last few seconds counts as proof of life, and only an idle pool is probed (one probe at a time).
 */
export class DatabaseLiveness {
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  private probe: Promise<unknown> | undefined;

  private readonly pool: pg.Pool;

  constructor({ pool }: { pool: pg.Pool }) {
    this.pool = pool;
    // A connection handed back without an error: its query (or transaction) got its answer.
    pool.on('release', (error: Error | undefined) => {
      if (!error) this.lastAnswerAt = Date.now();
    });
  }

  async check(): Promise<void> {
    if (Date.now() - this.lastAnswerAt < PROOF_OF_LIFE_MS) return;
    this.probe ??= this.pool.query('SELECT 1').finally(() => (this.probe = undefined));
    await this.probe;
  }
}

/** What /readyz checks: this instance's own dependencies only (the database, its job runner). */
export function readinessChecks(database: Database, jobs?: JobRunner): ReadinessCheck[] {
  const liveness = new DatabaseLiveness({ pool: database.pool });
  const checks: ReadinessCheck[] = [{ name: 'database', check: () => liveness.check() }];
  if (jobs) checks.push({ name: 'jobs', check: () => jobs.ping() });
  return checks;
}
