import type { Chains } from '../../chains/index.js';
import type { Database } from '../../db/client.js';
import type { ReadinessCheck } from './routes.js';

/** What /readyz checks: the database, and each chain through its port (embedded or live). */
export function readinessChecks(database: Database, chains?: Chains): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [{ name: 'database', check: async () => void (await database.pool.query('SELECT 1')) }];
  if (chains) {
    checks.push(
      { name: 'tempo', check: async () => void (await chains.tempo.blockNumber()) },
      { name: 'base', check: async () => void (await chains.base.blockNumber()) },
      { name: 'solana', check: async () => void (await chains.solana.blockHeight()) },
    );
  }
  return checks;
}
