import type { JobRunner } from '../../jobs/runner.js';
import type { ReputationService } from './service.js';

const ROUND_SIZE = 25;
// Rounds continue while they claim a full batch, for at most this long: a burst drains in one
// run, and the run ends well before pg-boss presumes it dead (300 s).
const RUN_BUDGET_MS = 60_000;

/** Writes queued reputation artifacts on chain every minute (spec 6). */
export function defineReputationJobs(jobs: JobRunner, deps: { reputation: ReputationService }): void {
  jobs.define({
    name: 'process-reputation-writes',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const deadline = Date.now() + RUN_BUDGET_MS;
      const total = { written: 0, retried: 0, failed: 0 };
      let full: boolean;
      do {
        const round = await deps.reputation.processDue(ROUND_SIZE);
        total.written += round.written;
        total.retried += round.retried;
        total.failed += round.failed;
        // A retried row is pushed ahead, so another round cannot pick it up again: a full round
        // means more may be due, a short one that the queue is drained (or taken by another worker).
        full = round.written + round.retried + round.failed === ROUND_SIZE;
      } while (full && Date.now() < deadline);
      if (total.written + total.retried + total.failed > 0) log.info(total, 'reputation writes processed');
      if (total.failed > 0) log.warn({ failed: total.failed }, 'reputation writes given up; see the failed writes');
    },
  });
}
