import type { JobRunner } from '../../jobs/runner.js';
import type { BridgeService } from './service.js';

/** Moves KYC states and open off-ramps on from the provider every minute (its webhooks are not used). */
export function defineBridgeJobs(jobs: JobRunner, deps: { bridge: BridgeService }): void {
  jobs.define({
    name: 'bridge-sync',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const synced = await deps.bridge.syncOpen();
      if (synced.kyc + synced.offramps > 0) log.info(synced, 'bridge states synced');
    },
  });
}
