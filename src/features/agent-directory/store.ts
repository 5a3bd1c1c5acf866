import { and, desc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { agentRegistrations } from './tables.js';

export type AgentRegistrationRow = typeof agentRegistrations.$inferSelect;

export interface RegistrationValues {
  identifier: string;
  displayName: string;
  description: string | null;
  erc8004AgentId: string | null;
  solanaPublicKey: string | null;
  ownerAddress: string | null;
  capabilities: string[];
  feePaymentId: string;
}

/**
 * Creates the registration of an identifier, or replaces its profile when the identifier is
 * already registered, in one statement (`INSERT ... ON CONFLICT (identifier) DO UPDATE`): of two
 * concurrent registrations of one identifier, one inserts and the other updates. `created` is
 * PostgreSQL's own answer (`xmax = 0` only on a freshly inserted row version).
 */
export async function upsertRegistration(db: Db, values: RegistrationValues): Promise<{ row: AgentRegistrationRow; created: boolean }> {
  const [result] = await db
    .insert(agentRegistrations)
    .values(values)
    .onConflictDoUpdate({
      target: agentRegistrations.identifier,
      set: {
        displayName: sql`excluded.display_name`,
        description: sql`excluded.description`,
        erc8004AgentId: sql`excluded.erc8004_agent_id`,
        solanaPublicKey: sql`excluded.solana_public_key`,
        ownerAddress: sql`excluded.owner_address`,
        capabilities: sql`excluded.capabilities`,
        feePaymentId: sql`excluded.fee_payment_id`,
        updatedAt: clockNow,
      },
    })
    .returning({ ...getTableColumns(agentRegistrations), created: sql<boolean>`(xmax = 0)` });
  if (!result) throw new Error('agent registration upsert returned no row');
  const { created, ...row } = result;
  return { row, created };
}

/**
 * The registration as the upsert of this fee payment left it, if it is still the latest write of
 * its identifier. `created`: that upsert inserted the row (`created_at = updated_at` holds only
 * for an inserted row version: an update sets `updated_at` to a later transaction's `clock_now()`).
 */
export async function findByFeePayment(db: Db, feePaymentId: string): Promise<{ row: AgentRegistrationRow; created: boolean } | null> {
  const [result] = await db
    .select({ ...getTableColumns(agentRegistrations), created: sql<boolean>`(${agentRegistrations.createdAt} = ${agentRegistrations.updatedAt})` })
    .from(agentRegistrations)
    .where(eq(agentRegistrations.feePaymentId, feePaymentId))
    .limit(1);
  if (!result) return null;
  const { created, ...row } = result;
  return { row, created };
}

export async function findById(db: Db, id: string): Promise<AgentRegistrationRow | null> {
  const [row] = await db.select().from(agentRegistrations).where(eq(agentRegistrations.id, id)).limit(1);
  return row ?? null;
}

export async function findByIdentifier(db: Db, identifier: string): Promise<AgentRegistrationRow | null> {
  const [row] = await db.select().from(agentRegistrations).where(eq(agentRegistrations.identifier, identifier)).limit(1);
  return row ?? null;
}

/** A page position: the last row's created_at in microseconds (as PostgreSQL prints it in UTC) and id. */
export interface DirectoryPosition {
  createdAt: string;
  id: string;
}

/**
 * The directory, newest first, keyset-paged over (created_at, id). The position carries created_at
 * at PostgreSQL's full (microsecond) precision: a millisecond JavaScript date would skip rows
 * registered within the same millisecond.
 */
export async function listRegistrations(
  db: Db,
  options: { nameContains: string | null; capability: string | null; limit: number; after: DirectoryPosition | null },
): Promise<Array<AgentRegistrationRow & { position: DirectoryPosition }>> {
  const t = agentRegistrations;
  const { nameContains, capability, after } = options;
  const rows = await db
    .select({
      ...getTableColumns(t),
      positionAt: sql<string>`to_char(${t.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    })
    .from(t)
    .where(
      and(
        nameContains === null ? undefined : sql`strpos(lower(${t.displayName}), lower(${nameContains})) > 0`,
        capability === null ? undefined : sql`${t.capabilities} @> ${JSON.stringify([capability])}::jsonb`,
        after === null ? undefined : sql`(${t.createdAt}, ${t.id}) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`,
      ),
    )
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(options.limit);
  return rows.map(({ positionAt, ...row }) => ({ ...row, position: { createdAt: positionAt, id: row.id } }));
}

/** The newest registration that links this Solana key and an ERC-8004 agent (both proven at registration). */
export async function findLinkedRegistration(db: Db, identity: { solanaPublicKey: string } | { erc8004AgentId: string }): Promise<AgentRegistrationRow | null> {
  const match =
    'solanaPublicKey' in identity
      ? and(eq(agentRegistrations.solanaPublicKey, identity.solanaPublicKey), sql`${agentRegistrations.erc8004AgentId} IS NOT NULL`)
      : and(eq(agentRegistrations.erc8004AgentId, identity.erc8004AgentId), sql`${agentRegistrations.solanaPublicKey} IS NOT NULL`);
  const [row] = await db.select().from(agentRegistrations).where(match).orderBy(desc(agentRegistrations.updatedAt)).limit(1);
  return row ?? null;
}
