import pg from 'pg';
import type { Database } from '../../db/client.js';

// Held for as long as a process runs the embedded chains of a PostgreSQL database.
const CHAIN_JOURNAL_LOCK_ID = 4_217_845_302;

export class ChainJournalTakenError extends Error {
  constructor() {
    super(
      'another running instance runs the embedded chains of this database: two instances with in-process chains would write one chain journal ' +
        'and corrupt it for good. Run the chains once for all instances (npm run devnet) and start each instance with DEVNET_URL.',
    );
    this.name = 'ChainJournalTakenError';
  }
}

/**
 * Claims the database's embedded chain journal for this process, before anything is written to it:
 * a session advisory lock on a connection of its own, released when `release` ends it or the
 * process dies. On PGlite the data directory's lock already keeps a second process out.
 *
 * Should that connection drop, the lock goes with it and another instance could take the journal,
 * so `onLost` hears of it: the process must stop writing (the service and the devnet exit).
 */
export async function claimChainJournal(database: Database, onLost: (error: Error) => void): Promise<{ release(): Promise<void> }> {
  if (database.engine !== 'postgres') return { release: async () => {} };
  const client = new pg.Client(database.connection);
  let held = false;
  const lose = (cause?: Error) => {
    if (!held) return;
    held = false;
    onLost(new Error(`lost this process's claim on the embedded chain journal: its database connection ended (${cause?.message ?? 'closed'})`, { cause }));
  };
  client.on('error', lose).on('end', () => lose());
  await client.connect();
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [CHAIN_JOURNAL_LOCK_ID]);
  if (!rows[0]?.locked) {
    await client.end();
    throw new ChainJournalTakenError();
  }
  held = true;
  return {
    release: () => {
      held = false;
      return client.end();
    },
  };
}
