import type { Database } from '../../db/client.js';
import type { JobRunner } from '../../jobs/runner.js';
import type { BusinessEvents } from '../ops/index.js';
import type { AgentPayService } from './pay.js';
import { purgeExpiredSignatures } from './signature-replays.js';

/** Settles agent payments a crash left reserved, and forgets identity signatures past their window. */
export function defineAgentJobs(jobs: JobRunner, deps: { database: Database; agentPay: AgentPayService; events?: Pick<BusinessEvents, 'reconciled'> }): void {
  jobs.define({
    name: 'agent-pay-reconcile',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const settled = await deps.agentPay.reconcileStale();
      deps.events?.reconciled('agent_pay', 'paid', settled.paid);
      deps.events?.reconciled('agent_pay', 'released', settled.released);
      if (settled.paid + settled.released > 0) log.info(settled, 'stale agent payments settled');
    },
  });
  jobs.define({
    name: 'purge-agent-signatures',
    schedule: '*/10 * * * *',
    async handle(_data, { log }) {
      const deleted = await purgeExpiredSignatures(deps.database.db);
      if (deleted > 0) log.info({ deleted }, 'expired agent signatures purged');
    },
  });
}
