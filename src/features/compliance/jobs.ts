import type { JobRunner } from '../../jobs/runner.js';
import type { ComplianceService } from './service.js';

/**
 * `refresh-sanctions` (every 6 hours, with SANCTIONS_SDN_URL; live mode's default is OFAC's):
 * replaces the sanctions list with the current SDN list. A failure keeps the list in force and is
 * logged as an error, counted in `sanctions_list_sync_failing` and shown in the admin overview.
 */
export function defineComplianceJobs(jobs: JobRunner, deps: { compliance: ComplianceService; sdnUrl: string | undefined }): void {
  const { sdnUrl } = deps;
  if (!sdnUrl) return;
  jobs.define({
    name: 'refresh-sanctions',
    schedule: '41 */6 * * *',
    async handle(_data, { log }) {
      const outcome = await deps.compliance.refreshSanctionsList(sdnUrl);
      if (outcome.ok) log.info({ entries: outcome.entries, listDate: outcome.listDate, inserted: outcome.inserted, removed: outcome.removed }, 'sanctions list refreshed');
      else log.error({ error: outcome.error }, 'sanctions list refresh failed; the list in force stays');
    },
  });
}
