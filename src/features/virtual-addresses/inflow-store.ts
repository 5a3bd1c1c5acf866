import { and, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { employees, employers, indexerCursors, virtualAddressInflows } from '../../db/schema.js';

export type NewInflow = typeof virtualAddressInflows.$inferInsert;

/** Employers whose virtual master is registered: the masters the inflow indexer watches. */
export function employersWithMasters(db: Db) {
  return db
    .select({ id: employers.id, masterId: employers.virtualMasterId, masterAddress: employers.virtualMasterAddress })
    .from(employers)
    .where(and(isNotNull(employers.virtualMasterId), isNotNull(employers.virtualMasterAddress)))
    .orderBy(employers.id) as Promise<{ id: string; masterId: string; masterAddress: string }[]>;
}

/** Every employee of these employers (removed ones too: their address still routes). */
export function employeesOf(db: Db, employerIds: string[]) {
  if (employerIds.length === 0) return Promise.resolve([]);
  return db.select({ id: employees.id, employerId: employees.employerId }).from(employees).where(inArray(employees.employerId, employerIds));
}

/** The last indexed block of each named cursor that exists. */
export async function readCursors(db: Db, names: string[]): Promise<Map<string, bigint>> {
  if (names.length === 0) return new Map();
  const rows = await db.select().from(indexerCursors).where(inArray(indexerCursors.name, names));
  return new Map(rows.map((row) => [row.name, row.lastBlock]));
}

/** Sets the cursors to `lastBlock`; a cursor never moves back (two overlapping runs stay safe). */
export async function advanceCursors(db: Db, names: string[], lastBlock: bigint): Promise<void> {
  if (names.length === 0) return;
  await db
    .insert(indexerCursors)
    .values(names.map((name) => ({ name, lastBlock })))
    .onConflictDoUpdate({
      target: indexerCursors.name,
      set: { lastBlock: sql`greatest(${indexerCursors.lastBlock}, excluded.last_block)`, updatedAt: new Date() },
    });
}

/** Inserts the inflows once each, by (tx_hash, log_index); answers how many were new. */
export async function insertInflows(db: Db, rows: NewInflow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await db.insert(virtualAddressInflows).values(rows).onConflictDoNothing().returning({ txHash: virtualAddressInflows.txHash });
  return inserted.length;
}
