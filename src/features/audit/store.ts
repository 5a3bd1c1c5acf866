import type { Db } from '../../db/client.js';
import { auditLog } from '../../db/schema.js';

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
