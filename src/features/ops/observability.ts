import type { Chains } from '../../chains/index.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import { HttpMetrics } from '../../http/metrics.js';
import { BusinessMetrics } from './business-metrics.js';
import { DependencyHealth, dependencyProbes } from './dependencies.js';

/** One app's metrics registry (HTTP and business) and the health of its outside systems. */
export interface Observability {
  http: HttpMetrics;
  business: BusinessMetrics;
  /** Absent without chains (tests that run none). */
  health: DependencyHealth | undefined;
}

export function createObservability(deps: {
  config: Config;
  database: Database;
  chains?: Chains | undefined;
  /** Node process metrics (off in tests, where many apps share one process). */
  processMetrics?: boolean | undefined;
}): Observability {
  const http = new HttpMetrics({ processMetrics: deps.processMetrics ?? false });
  const health = deps.chains && new DependencyHealth({ probes: dependencyProbes(deps.config, deps.chains) });
  const business = new BusinessMetrics({ registry: http.registry, database: deps.database, health });
  if (deps.chains) {
    // Tempo and Base may share one ledger (one signing key): watch each ledger once.
    for (const ledger of new Set([deps.chains.tempo.connection.nonces, deps.chains.base.connection.nonces])) {
      ledger.watch((key, waitSeconds) => business.chainWriteSigned(key.chain, key.address, waitSeconds));
    }
  }
  return { http, business, health };
}
