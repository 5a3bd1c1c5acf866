import { lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { agentSignatureReplays } from '../../db/schema.js';

/**
 * The replay store of identity proofs (spec 5.2): a signature is accepted once. The insert is the
 * compare-and-set: of two requests carrying one signature, exactly one inserts its hash.
 * Rows are kept until the signature's timestamp has left the window (then it is refused as stale anyway).
 */
export function signatureClaimer(db: Db, agentIdentifier: string) {
  return async (signatureHash: string, expiresAt: Date): Promise<boolean> => {
    const inserted = await db
      .insert(agentSignatureReplays)
      .values({ signatureHash, agentIdentifier, expiresAt })
      .onConflictDoNothing()
      .returning({ signatureHash: agentSignatureReplays.signatureHash });
    return inserted.length > 0;
  };
}

/** Deletes signatures whose window has closed; run by a job. Returns how many went. */
export async function purgeExpiredSignatures(db: Db): Promise<number> {
  const deleted = await db
    .delete(agentSignatureReplays)
    .where(lt(agentSignatureReplays.expiresAt, sql`now()`))
    .returning({ signatureHash: agentSignatureReplays.signatureHash });
  return deleted.length;
}
