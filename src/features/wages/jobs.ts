import type { JobRunner } from '../../jobs/runner.js';
import type { WagesService } from './service.js';

/**
 * Stops, every minute, the salary streams a change queued to stop that nobody has stopped yet: the
 * request that queued them stops them at once, so this finishes what a crash or a chain error left.
 */
export function defineWagesJobs(jobs: JobRunner, deps: { wages: WagesService }): void {
  jobs.define({
    name: 'salary-stream-stops',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const round = await deps.wages.stopStreams();
      if (round.stopped + round.retried + round.failed > 0) log.info(round, 'salary stream stops processed');
      if (round.failed > 0) log.warn({ failed: round.failed }, 'salary stream stops given up; see stream_stops');
    },
  });
}
