import type { EvmConnection } from '../chains/evm/connection.js';
import type { Database } from '../db/client.js';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.js';
import type { PayrollService } from '../features/payroll/service.js';
import type { PaymentReconciler } from '../payments/reconcile.js';
import type { BusinessEvents } from '../features/ops/business-metrics.js';
import type { JobRunner } from './runner.js';

/** Every durable job and schedule of the service; features add theirs here. */
/** `payrollStaleSeconds`: how long a submitted run is left to its executor before reconciling (default 60). */
export function defineJobs(
  jobs: JobRunner,
  deps: {
    database: Database;
    payroll?: PayrollService;
    payrollStaleSeconds?: number;
    paymentReconciler?: PaymentReconciler;
    /** The EVM signers whose nonces the watcher keeps free of gaps. */
    evmConnections?: EvmConnection[];
    /** Metrics: what the reconcilers resolved. */
    events?: Pick<BusinessEvents, 'reconciled'>;
  },
): void {
  jobs.define({
    name: 'purge-idempotency-keys',
    schedule: '17 * * * *',
    async handle(_data, { log }) {
      const deleted = await purgeExpiredIdempotencyKeys(deps.database.db);
      if (deleted > 0) log.info({ deleted }, 'expired idempotency keys purged');
    },
  });
  for (const connection of deps.evmConnections ?? []) {
    jobs.define({
      name: `chain-nonces-${connection.chain.id}`,
      schedule: '* * * * *',
      async handle(_data, { log }) {
        // A minute gives a write signed just now time to be broadcast by the instance that signed it.
        const counts = await connection.settleNonces(60_000);
        if (counts.rebroadcast + counts.filled > 0) log.warn({ chain: connection.chain.id, ...counts }, 'stalled chain writes recovered');
      },
    });
  }
  const { paymentReconciler } = deps;
  if (paymentReconciler) {
    jobs.define({
      name: 'payments-reconcile',
      schedule: '* * * * *',
      async handle(_data, { log }) {
        const counts = await paymentReconciler.run();
        for (const outcome of ['settled', 'voided', 'refunded'] as const) deps.events?.reconciled('payments', outcome, counts[outcome]);
        if (counts.settled + counts.voided + counts.refunded > 0) log.info(counts, 'fee payments reconciled');
      },
    });
  }
  const { payroll } = deps;
  if (payroll) {
    jobs.define({
      name: 'payroll-reconcile',
      schedule: '* * * * *',
      async handle(_data, { log }) {
        const settled = await payroll.reconcileStale(deps.payrollStaleSeconds === undefined ? undefined : deps.payrollStaleSeconds * 1000);
        deps.events?.reconciled('payroll', 'settled', settled);
        if (settled > 0) log.info({ runs: settled }, 'submitted payroll runs reconciled');
      },
    });
  }
}
