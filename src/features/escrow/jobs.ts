import type { JobRunner } from '../../jobs/runner.js';
import type { BusinessEvents } from '../ops/index.js';
import type { EscrowService } from './service.js';

const ROUND_SIZE = 25;
// Rounds continue while they find a full batch, well within pg-boss's 300 s before it presumes a run dead.
const RUN_BUDGET_MS = 60_000;

/**
 * Every minute: escrows a crash or a lost background step left behind (an interrupted funding, a
 * delivery not judged, a verdict not paid out) and open escrows past their expiry (spec 3.1).
 */
export function defineEscrowJobs(jobs: JobRunner, deps: { escrow: EscrowService; events?: Pick<BusinessEvents, 'reconciled'> }): void {
  jobs.define({
    name: 'escrow-progress',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const deadline = Date.now() + RUN_BUDGET_MS;
      let moved = 0;
      let round: number;
      do {
        round = await deps.escrow.reconcile(ROUND_SIZE);
        moved += round;
      } while (round === ROUND_SIZE && Date.now() < deadline);
      deps.events?.reconciled('escrow', 'advanced', moved);
      if (moved > 0) log.info({ escrows: moved }, 'escrows advanced');
    },
  });
}
