import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { agentSignatureReplays } from './tables.js';

/**
 * The replay store of identity proofs (spec 5.2): a signature is accepted once. The insert is the
 * compare-and-set: of two requests carrying one signature, exactly one inserts its hash.
 * Rows are kept until the signature's timestamp has left the window (then it is refused as stale anyway).
 * `feePaymentId`: the paid call the signature comes with. The one exception to "once": that same
 * call served again after its answer was lost (the payment gate redeems a settled fee only for the
 * byte-identical request, docs/decisions.md issue 24), whose handler may have spent it before the crash.
 */
export function signatureClaimer(db: Db, agentIdentifier: string, feePaymentId: string | null = null) {
  return async (signatureHash: string, expiresAt: Date): Promise<boolean> => {
    const inserted = await db
      .insert(agentSignatureReplays)
      .values({ signatureHash, agentIdentifier, expiresAt, feePaymentId })
      .onConflictDoNothing()
      .returning({ signatureHash: agentSignatureReplays.signatureHash });
    if (inserted.length > 0 || feePaymentId === null) return inserted.length > 0;
    const [sameCall] = await db
      .select({ signatureHash: agentSignatureReplays.signatureHash })
      .from(agentSignatureReplays)
      .where(and(eq(agentSignatureReplays.signatureHash, signatureHash), eq(agentSignatureReplays.feePaymentId, feePaymentId)));
    return sameCall !== undefined;
  };
}

/** Deletes signatures whose window has closed; run by a job. Returns how many went. */
export async function purgeExpiredSignatures(db: Db): Promise<number> {
  const deleted = await db
    .delete(agentSignatureReplays)
    // Real now(), not clock_now(): expires_at closes a window on the agent's real clock; purging by an
    // advanced service clock would forget signatures a replay could still present in time.
    .where(lt(agentSignatureReplays.expiresAt, sql`now()`))
    .returning({ signatureHash: agentSignatureReplays.signatureHash });
  return deleted.length;
}
