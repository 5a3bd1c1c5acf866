import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditLog } from './tables.js';

export interface AuditEntry {
  actorUserId: string | null;
  actorKind: 'user' | 'admin' | 'agent' | 'system';
  action: string;
  employerId?: string | null;
  targetType?: string;
  targetId?: string;
  details?: Record<string, unknown>;
  requestId?: string | null;
}

/** Appends to the audit log; call it inside the transaction that made the change. */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values(entry);
}

/** The details of an employer's `action` entry whose `details[key]` is `value` (the first, if several). */
export async function findAuditDetails(db: Db, query: { employerId: string; action: string; key: string; value: string }): Promise<Record<string, unknown> | null> {
  const [row] = await db
    .select({ details: auditLog.details })
    .from(auditLog)
    .where(and(eq(auditLog.employerId, query.employerId), eq(auditLog.action, query.action), sql`${auditLog.details}->>${query.key} = ${query.value}`))
    .limit(1);
  return (row?.details as Record<string, unknown> | undefined) ?? null;
}
