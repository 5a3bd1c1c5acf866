import { defineComplianceJobs } from '../features/compliance/jobs.js';
import type { EvmConnection } from '../chains/evm/connection.js';
import type { Database } from '../db/client.js';
import { defineAgentJobs } from '../features/agents/jobs.js';
import { defineBridgeJobs } from '../features/bridge/jobs.js';
import { defineEmailJobs } from '../features/email/jobs.js';
import { defineEscrowJobs } from '../features/escrow/jobs.js';
import type { BusinessEvents } from '../features/ops/business-metrics.js';
import { definePayrollJobs } from '../features/payroll/jobs.js';
import { defineReputationJobs } from '../features/reputation/jobs.js';
import { defineTreasuryJobs } from '../features/treasury/jobs.js';
import { defineVirtualAddressJobs } from '../features/virtual-addresses/jobs.js';
import { defineWagesJobs } from '../features/wages/jobs.js';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.js';
import type { EmailTransport } from '../providers/email/transport.js';
import type { PaymentReconciler } from '../payments/reconcile.js';
import type { Services } from '../services.js';
import type { JobRunner } from './runner.js';

/** What the platform's own jobs work on, beside the services. */
export interface JobSettings {
  database: Database;
  /** Where queued emails go: the outbox in local mode, SMTP in live mode (createEmailTransport). */
  email: EmailTransport;
  /** How long a submitted payroll run is left to its executor before reconciling (default 60). */
  payrollStaleSeconds?: number | undefined;
  paymentReconciler?: PaymentReconciler | undefined;
  /** The EVM signers whose nonces the watcher keeps free of gaps. */
  evmConnections?: EvmConnection[] | undefined;
  /** Metrics: what the reconcilers resolved. */
  events?: Pick<BusinessEvents, 'reconciled'> | undefined;
  /** Where `refresh-sanctions` downloads the SDN list (unset: no refresh). */
  sanctionsSdnUrl?: string | undefined;
}

/** Every durable job and schedule of the service: the platform's and each feature's. */
export function defineJobs(jobs: JobRunner, services: Services, settings: JobSettings): void {
  definePlatformJobs(jobs, settings);
  const { database, events } = settings;
  defineEmailJobs(jobs, { database, transport: settings.email });
  const on = services.onChain;
  if (!on) return;
  definePayrollJobs(jobs, { payroll: on.payroll, staleSeconds: settings.payrollStaleSeconds, events });
  defineWagesJobs(jobs, { wages: on.wages });
  defineBridgeJobs(jobs, { bridge: on.bridge });
  defineReputationJobs(jobs, { reputation: on.reputation });
  defineAgentJobs(jobs, { database, agentPay: on.agentPay, events });
  defineEscrowJobs(jobs, { escrow: on.escrow, events });
  defineVirtualAddressJobs(jobs, { indexer: on.inflowIndexer });
  defineTreasuryJobs(jobs, { history: on.treasuryHistory });
  defineComplianceJobs(jobs, { compliance: on.compliance, sdnUrl: settings.sanctionsSdnUrl });
}

/** The jobs no feature owns: idempotency-key expiry, chain nonces, fee-payment reconciliation. */
export function definePlatformJobs(jobs: JobRunner, settings: Omit<JobSettings, 'email'>): void {
  jobs.define({
    name: 'purge-idempotency-keys',
    schedule: '17 * * * *',
    async handle(_data, { log }) {
      const deleted = await purgeExpiredIdempotencyKeys(settings.database.db);
      if (deleted > 0) log.info({ deleted }, 'expired idempotency keys purged');
    },
  });
  for (const connection of settings.evmConnections ?? []) {
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
  const { paymentReconciler } = settings;
  if (paymentReconciler) {
    jobs.define({
      name: 'payments-reconcile',
      schedule: '* * * * *',
      async handle(_data, { log }) {
        const counts = await paymentReconciler.run();
        for (const outcome of ['settled', 'voided', 'refunded'] as const) settings.events?.reconciled('payments', outcome, counts[outcome]);
        if (counts.settled + counts.voided + counts.refunded > 0) log.info(counts, 'fee payments reconciled');
      },
    });
  }
}
