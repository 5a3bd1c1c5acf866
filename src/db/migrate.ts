import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './client.js';
import { DATA_REPAIRS, type DataRepair } from './repairs.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Serialises start-up migrations across instances sharing one PostgreSQL server.
const MIGRATION_LOCK_ID = 4_217_845_301;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
  /** What each data repair applied now reported: rows changed, values it left for a person. */
  repaired: { name: string; changed: number; refused: string[] }[];
}

/**
 * Applies the SQL files of src/db/migrations in name order, then the data repairs of
 * src/db/repairs.ts, each once, all in one transaction.
 * Running it again changes nothing. A file whose content changed after it was applied is refused:
 * an applied migration is history, and a new change needs a new file.
 */
export async function migrate(database: Database, dir = MIGRATIONS_DIR, repairs: DataRepair[] = DATA_REPAIRS): Promise<MigrationResult> {
  const files = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  return database.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query('SELECT name, checksum FROM schema_migrations');
    const known = new Map(rows.map((row) => [String(row.name), String(row.checksum)]));
    const result: MigrationResult = { applied: [], alreadyApplied: [], repaired: [] };
    for (const name of files) {
      const sql = fs.readFileSync(`${dir}/${name}`, 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const appliedChecksum = known.get(name);
      if (appliedChecksum !== undefined) {
        if (appliedChecksum !== checksum) {
          throw new Error(`migration ${name} was changed after it was applied; add a new migration instead`);
        }
        result.alreadyApplied.push(name);
        continue;
      }
      for (const statement of sql.split('--> statement-breakpoint')) {
        if (statement.trim()) await tx.query(statement);
      }
      await tx.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [name, checksum]);
      result.applied.push(name);
    }
    // Data repairs (src/db/repairs.ts): once each, after the schema they read.
    for (const repair of repairs) {
      if (known.has(repair.name)) continue;
      result.repaired.push({ name: repair.name, ...(await repair.run(tx)) });
      await tx.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [repair.name, 'repair']);
    }
    return result;
  });
}
