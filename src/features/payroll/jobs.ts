import type { JobRunner } from '../../jobs/runner.js';
import type { BusinessEvents } from '../ops/index.js';
import type { PayrollService } from './service.js';

/** `staleSeconds`: how long a submitted run is left to its executor before reconciling (default 60). */
export function definePayrollJobs(
  jobs: JobRunner,
  deps: { payroll: PayrollService; staleSeconds?: number | undefined; events?: Pick<BusinessEvents, 'reconciled'> | undefined },
): void {
  jobs.define({
    name: 'payroll-reconcile',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const settled = await deps.payroll.reconcileStale(deps.staleSeconds === undefined ? undefined : deps.staleSeconds * 1000);
      deps.events?.reconciled('payroll', 'settled', settled);
      if (settled > 0) log.info({ runs: settled }, 'submitted payroll runs reconciled');
    },
  });
}
