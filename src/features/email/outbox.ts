import { and, asc, count, desc, eq, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import type { Counted, OffsetPage } from '../../db/paging.js';
import { emailOutbox } from './tables.js';
import { EmailDeliveryError, type EmailMessage, type EmailTransport } from '../../providers/email/transport.js';

export type OutboxRow = typeof emailOutbox.$inferSelect;

/**
 * Queues one email; a dedupe key already queued (whatever its status) is skipped, so an event
 * retried after a crash mails once. True when this call queued it. Pass a transaction's `db` to
 * queue the email only if the caller's change commits.
 */
export async function queueEmail(db: Db, message: EmailMessage & { dedupeKey: string }): Promise<boolean> {
  const inserted = await db
    .insert(emailOutbox)
    .values({
      toAddress: message.to,
      subject: message.subject,
      bodyText: message.text,
      bodyHtml: message.html ?? null,
      dedupeKey: message.dedupeKey,
    })
    .onConflictDoNothing({ target: emailOutbox.dedupeKey })
    .returning({ id: emailOutbox.id });
  return inserted.length > 0;
}

export interface DeliveryOptions {
  /** Rows looked at in this round. Default 50. */
  limit?: number;
  /** Attempts after which a row that still fails is given up ('failed'). Default 8. */
  maxAttempts?: number;
}

export interface DeliveryResult {
  sent: number;
  failed: number;
  /** Left queued for a later round after a temporary failure. */
  retried: number;
}

// The error kept on the row is for admins; the server's reply fits comfortably.
const MAX_ERROR_LENGTH = 1000;

// How long a claimed row is left to the round that claimed it. Far longer than one SMTP send can
// take (each of its steps times out in seconds), so it only expires for a round that crashed.
const CLAIM_LEASE = sql`interval '10 minutes'`;

/**
 * One delivery round over the oldest queued rows. Runs on the pool-level handle: every claim and
 * every result is its own statement, and no transaction stays open across a send (on PGlite it
 * would stall every other query for the length of an SMTP conversation).
 *
 * A round claims each row by a compare-and-set on its attempt count before sending it, so of the
 * rounds that picked the same row, one sends it. The claim also stamps `sent_at` (the table has no
 * lease column): on a queued row it means "a send began then", and other rounds skip the row until
 * the attempt ends or its lease expires. Delivery is still at least once: after a crash (or a lost
 * database connection) between the server accepting a message and the row being marked sent, the
 * row is sent again once its lease expires, under the same Message-ID.
 */
export async function deliverQueuedEmails(db: Db, transport: EmailTransport, options: DeliveryOptions = {}): Promise<DeliveryResult> {
  const maxAttempts = options.maxAttempts ?? 8;
  const result: DeliveryResult = { sent: 0, failed: 0, retried: 0 };
  const rows = await db
    .select()
    .from(emailOutbox)
    .where(
      and(
        eq(emailOutbox.status, 'queued'),
        or(isNull(emailOutbox.sentAt), lt(emailOutbox.sentAt, sql`${clockNow} - ${CLAIM_LEASE}`)),
      ),
    )
    // Oldest first, but rows that have not failed yet before rows waiting for a retry: a message
    // that keeps failing cannot hold up the mail queued after it.
    .orderBy(sql`${emailOutbox.lastError} IS NOT NULL`, asc(emailOutbox.createdAt), asc(emailOutbox.id))
    .limit(options.limit ?? 50);

  for (const row of rows) {
    const [claim] = await db
      .update(emailOutbox)
      .set({ attempts: sql`${emailOutbox.attempts} + 1`, sentAt: clockNow })
      .where(and(eq(emailOutbox.id, row.id), eq(emailOutbox.status, 'queued'), eq(emailOutbox.attempts, row.attempts)))
      .returning({ attempts: emailOutbox.attempts });
    if (!claim) continue; // another round claimed it first

    try {
      await transport.send({ to: row.toAddress, subject: row.subject, text: row.bodyText, html: row.bodyHtml, messageId: row.id });
    } catch (error) {
      const failure =
        error instanceof EmailDeliveryError ? error : new EmailDeliveryError(String(error), { permanent: false, cause: error });
      const lastError = failure.message.slice(0, MAX_ERROR_LENGTH);
      const stillOurs = and(eq(emailOutbox.id, row.id), eq(emailOutbox.status, 'queued'), eq(emailOutbox.attempts, claim.attempts));
      if (failure.serverSide) {
        // The server is down or refuses us, not this message: the attempt does not count (an
        // outage longer than maxAttempts rounds must not fail the queue), and the rest of the
        // round would fail the same way, so it ends here.
        await db
          .update(emailOutbox)
          .set({ attempts: sql`${emailOutbox.attempts} - 1`, sentAt: null, lastError })
          .where(stillOurs);
        result.retried += 1;
        break;
      }
      const giveUp = failure.permanent || claim.attempts >= maxAttempts;
      await db
        .update(emailOutbox)
        .set(giveUp ? { status: 'failed', sentAt: null, lastError } : { sentAt: null, lastError })
        .where(stillOurs);
      if (giveUp) result.failed += 1;
      else result.retried += 1;
      continue;
    }
    // The server accepted it: it is sent, even if a round that took over an expired lease has
    // meanwhile given up on it.
    await db
      .update(emailOutbox)
      .set({ status: 'sent', sentAt: clockNow, lastError: null })
      .where(and(eq(emailOutbox.id, row.id), ne(emailOutbox.status, 'sent')));
    result.sent += 1;
  }
  return result;
}

export interface OutgoingEmail {
  toAddress: string;
  subject: string;
  bodyText: string;
  /** One email per event, whatever the retries. */
  dedupeKey: string;
}

/**
 * Queues emails in the outbox (the email sender delivers queued rows; local mode stops here).
 * A dedupe key already queued is skipped.
 */
export async function queueEmails(db: Db, emails: OutgoingEmail[]): Promise<void> {
  if (emails.length === 0) return;
  await db.insert(emailOutbox).values(emails).onConflictDoNothing({ target: emailOutbox.dedupeKey });
}

// ---- read model of another feature: the admin view ----

/** How many emails are in each status. */
export function outboxCounts(db: Db): Promise<{ status: string; count: number }[]> {
  return db.select({ status: emailOutbox.status, count: count() }).from(emailOutbox).groupBy(emailOutbox.status);
}

/** The outbox newest first. */
export async function outboxPage(db: Db, page: OffsetPage): Promise<Counted<OutboxRow>> {
  const [rows, totals] = await Promise.all([
    db.select().from(emailOutbox).orderBy(desc(emailOutbox.createdAt), desc(emailOutbox.id)).offset(page.offset).limit(page.limit),
    db.select({ total: count() }).from(emailOutbox),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}
