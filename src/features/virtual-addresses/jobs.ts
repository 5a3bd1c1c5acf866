import type { JobRunner } from '../../jobs/runner.js';
import type { VirtualInflowIndexer } from './indexer.js';

/**
 * Every 5 minutes (spec 4.8): index transfers to employers' virtual addresses into
 * `virtual_address_inflows`, once their block is VIRTUAL_INFLOW_CONFIRMATIONS deep. A run scans at
 * most 5,000 blocks per master from its cursor; the writes are idempotent, so a retried or
 * overlapping run adds nothing twice. A reorg that reached indexed blocks takes their rows back.
 */
export function defineVirtualAddressJobs(jobs: JobRunner, deps: { indexer: VirtualInflowIndexer }): void {
  jobs.define({
    name: 'index-virtual-inflows',
    schedule: '*/5 * * * *',
    async handle(_data, { log, signal }) {
      const run = await deps.indexer.indexVirtualInflows({ signal });
      for (const reorg of run.reorgs) log.warn({ ...reorg, forkBlock: reorg.forkBlock.toString() }, 'virtual inflows: a reorg replaced indexed blocks; rows above the fork point were taken back');
      if (run.inserted > 0) log.info({ inserted: run.inserted, unattributed: run.unattributed, head: run.head.toString() }, 'virtual inflows indexed');
    },
  });
}
