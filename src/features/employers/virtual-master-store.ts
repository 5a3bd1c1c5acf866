/** The employers' virtual-master columns and the lists the inflow indexer watches (the virtual-addresses feature uses them through index.ts). */
import { and, eq, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { employees, employers } from './tables.js';

/**
 * Queries on the employer's virtual-master columns (spec 2.13), which belong to this feature.
 * Every write is a compare-and-set on `virtual_master_id IS NULL`: once an employer is
 * registered nothing here changes it again.
 */

export type VirtualMasterRow = Pick<
  typeof employers.$inferSelect,
  'id' | 'virtualMasterId' | 'virtualMasterAddress' | 'virtualMasterSalt' | 'virtualMasterTxHash' | 'virtualMasterNextNonce'
>;

const columns = {
  id: employers.id,
  virtualMasterId: employers.virtualMasterId,
  virtualMasterAddress: employers.virtualMasterAddress,
  virtualMasterSalt: employers.virtualMasterSalt,
  virtualMasterTxHash: employers.virtualMasterTxHash,
  virtualMasterNextNonce: employers.virtualMasterNextNonce,
};

const unregistered = (employerId: string) => and(eq(employers.id, employerId), isNull(employers.virtualMasterId));

export async function findVirtualMaster(db: Db, employerId: string): Promise<VirtualMasterRow | null> {
  const rows = await db.select(columns).from(employers).where(eq(employers.id, employerId));
  return rows[0] ?? null;
}

/**
 * Remembers where mining resumes, only ever moving it forward: of two requests finishing in any
 * order, the remembered nonce is the larger of theirs.
 */
export async function advanceNextNonce(db: Db, employerId: string, nextNonce: bigint): Promise<void> {
  await db
    .update(employers)
    .set({ virtualMasterNextNonce: nextNonce, updatedAt: clockNow })
    .where(and(unregistered(employerId), or(isNull(employers.virtualMasterNextNonce), lt(employers.virtualMasterNextNonce, nextNonce))));
}

/**
 * A salt was found: kept before it is broadcast, so a crash between the broadcast and the caching
 * of the result is recovered from it (virtual_master_id still null while the salt is set means
 * "found, registration possibly in flight").
 */
export async function savePendingSalt(db: Db, employerId: string, pending: { address: string; salt: string; nextNonce: bigint }): Promise<void> {
  await db
    .update(employers)
    .set({
      virtualMasterAddress: pending.address,
      virtualMasterSalt: pending.salt,
      virtualMasterTxHash: null,
      virtualMasterNextNonce: sql`GREATEST(COALESCE(${employers.virtualMasterNextNonce}, 0), ${pending.nextNonce.toString()}::numeric)`,
      updatedAt: clockNow,
    })
    .where(unregistered(employerId));
}

/** The registration transaction's hash, recorded after signing and before broadcasting. */
export async function savePendingTxHash(db: Db, employerId: string, salt: string, txHash: string): Promise<void> {
  await db
    .update(employers)
    .set({ virtualMasterTxHash: txHash, updatedAt: clockNow })
    .where(and(unregistered(employerId), eq(employers.virtualMasterSalt, salt)));
}

/** The salt's master id is held by another master: forget the salt (mining goes on after it). */
export async function clearPendingSalt(db: Db, employerId: string, salt: string): Promise<void> {
  await db
    .update(employers)
    .set({ virtualMasterSalt: null, virtualMasterTxHash: null, updatedAt: clockNow })
    .where(and(unregistered(employerId), eq(employers.virtualMasterSalt, salt)));
}

/** Caches the registration; false when the employer was already registered (by a concurrent request). */
export async function saveRegistered(
  db: Db,
  employerId: string,
  registered: { masterId: string; address: string; salt: string; txHash: string | null },
): Promise<boolean> {
  const rows = await db
    .update(employers)
    .set({
      virtualMasterId: registered.masterId,
      virtualMasterAddress: registered.address,
      virtualMasterSalt: registered.salt,
      virtualMasterTxHash: registered.txHash,
      updatedAt: clockNow,
    })
    .where(unregistered(employerId))
    .returning({ id: employers.id });
  return rows.length > 0;
}

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
