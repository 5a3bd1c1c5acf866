import type { JobRunner } from '../../jobs/runner.js';
import type { TreasuryHistory } from './history.js';

/**
 * Hourly: every treasury's balance becomes (or refreshes) today's snapshot. Idempotent: a rerun,
 * or the same job on several instances, rewrites the one (employer, day) row with a later reading.
 */
export function defineTreasuryJobs(jobs: JobRunner, deps: { history: TreasuryHistory }): void {
  jobs.define({
    name: 'treasury-balance-snapshots',
    schedule: '7 * * * *',
    async handle(_data, { log }) {
      const pass = await deps.history.observeAll();
      for (const failure of pass.failed) log.warn({ err: failure.error, employerId: failure.employerId }, 'treasury balance not observed');
      log.debug({ observed: pass.observed, failed: pass.failed.length }, 'treasury balances observed');
    },
  });
}
