import { openDatabase, type Database } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { createTestDatabaseTarget } from './database.js';

/**
 * Two handles on one fresh, migrated database, as two instances have: two pools on the same
 * PostgreSQL database with TEST_DATABASE_URL; on in-memory PGlite (one process, one database) the
 * same handle twice.
 */
export async function openSharedDatabase(): Promise<{ first: Database; second: Database; close(): Promise<void> }> {
  const target = await createTestDatabaseTarget();
  const first = await openDatabase({ url: target.url, dataDir: null });
  await migrate(first);
  const second = target.url ? await openDatabase({ url: target.url, dataDir: null }) : first;
  return {
    first,
    second,
    async close() {
      if (second !== first) await second.close();
      await first.close();
      await target.drop();
    },
  };
}
