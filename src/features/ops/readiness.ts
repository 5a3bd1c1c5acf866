import type { EmbeddedChains } from '../../chains/embedded/index.js';
import type { Database } from '../../db/client.js';
import type { ReadinessCheck } from './routes.js';

/** What /readyz checks: the database, and each embedded chain when this process runs them. */
export function readinessChecks(database: Database, chains?: EmbeddedChains): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [{ name: 'database', check: async () => void (await database.pool.query('SELECT 1')) }];
  if (chains) {
    checks.push(
      { name: 'tempo', check: async () => void (await chains.tempo.evm.request({ method: 'eth_blockNumber' })) },
      { name: 'base', check: async () => void (await chains.base.evm.request({ method: 'eth_blockNumber' })) },
      { name: 'solana', check: async () => void chains.solana.latestBlockhash() },
    );
  }
  return checks;
}
