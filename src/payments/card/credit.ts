import { and, desc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import type { PaidCaller, PaidCallerResolver } from '../../http/paid-caller.js';
import { formatUsd } from '../../money.js';
import type { SettlementOutcome, VerifiedPayment, Verification } from '../gate.js';
import { routeName, type PaidRoute } from '../prices.js';
import { cardCreditDraws, cardCredits, payments } from '../tables.js';

/**
 * Card credit (docs/decisions.md, "Card credit"): where a route's price is below the card
 * processor's minimum charge, the card offer is a top-up of the minimum. The call that pays it
 * draws its own fee from the credit; later calls by the same holder draw the rest with
 * `Payment-Credit: <credit id>`; the holder (or the employer owner it is billed to) can send the
 * remainder back to the card. Every balance change is a compare-and-set here, and every draw is
 * keyed by its payment, so a draw happens once and a failed call's draw comes back once.
 */

export type CardCreditRow = typeof cardCredits.$inferSelect;
type Page = { offset: number; limit: number };
type CreditPage = { rows: CardCreditRow[]; total: number };

/** A part of a card charge to give back, in the processor's minor unit, under its own idempotency key. */
export interface CardRefundPart {
  cents: bigint;
  key: string;
}

/** The card processor's refund (`CardRail.refund`). */
export type RefundCard = (paymentIntentId: string, part?: CardRefundPart) => Promise<void>;

/** Request header naming the credit a call draws on. */
export const CREDIT_HEADER = 'Payment-Credit';
/** Response header with what is left after a draw. */
export const CREDIT_REMAINING_HEADER = 'Payment-Credit-Remaining';

const BASE_UNITS_PER_CENT = 10_000n;
/** A remainder refund left unfinished this long (its worker died) is taken over. */
const STALE_REFUND_SECONDS = 60;

/** Who may draw on a credit: the person (X-Identity-Token) or the employer's agent (X-Agent-Key) behind a paid call. */
export function holderOf(caller: PaidCaller): string | null {
  if (caller.kind === 'user') return `user:${caller.caller.userId}`;
  if (caller.kind === 'agent_key') return `employer:${caller.employerId}`;
  return null;
}

export class CardCredits {
  constructor(
    private readonly db: Db,
    private readonly paidCallers: PaidCallerResolver,
    private readonly refundCard: RefundCard | undefined,
  ) {}

  /** The holder behind a request's identity headers; null when there is none or it does not verify. */
  async holderFor(headers: Headers): Promise<string | null> {
    return this.paidCallers.resolve(headers).then(holderOf, () => null);
  }

  /** Records what a top-up charge bought (once per charge: a second call returns the same credit). */
  async fund(topUp: { paymentIntent: string; network: string; route: PaidRoute; holder: string; amount: bigint }): Promise<CardCreditRow> {
    const [created] = await this.db
      .insert(cardCredits)
      .values({ paymentIntent: topUp.paymentIntent, network: topUp.network, route: routeName(topUp.route), holder: topUp.holder, funded: topUp.amount, remaining: topUp.amount })
      .onConflictDoNothing({ target: cardCredits.paymentIntent })
      .returning();
    if (created) return created;
    const [existing] = await this.db.select().from(cardCredits).where(eq(cardCredits.paymentIntent, topUp.paymentIntent));
    return existing!;
  }

  /**
   * A call paid from a credit: the named credit must be the caller's, bought on this route, and
   * hold the price (checked again when it is drawn, by compare-and-set).
   */
  async verifyDraw(route: PaidRoute, creditId: string, request: Request, proofKey: string): Promise<Verification> {
    const credit = await this.find(creditId);
    const holder = await this.holderFor(request.headers);
    // Someone else's credit answers like a missing one.
    if (!credit || holder === null || credit.holder !== holder) return { ok: false, reason: `no card credit ${creditId} for this caller (send its holder's X-Identity-Token or X-Agent-Key)` };
    if (credit.route !== routeName(route)) return { ok: false, reason: `card credit ${creditId} pays for ${credit.route} only` };
    if (credit.status !== 'open' || credit.remaining < route.price) {
      return { ok: false, reason: `card credit ${creditId} holds ${formatUsd(credit.status === 'open' ? credit.remaining : 0n)} USD, less than ${formatUsd(route.price)}; pay again to top it up` };
    }
    return { ok: true, payment: this.drawPayment(credit, route, proofKey, {}) };
  }

  /** The fee of one call as a draw on a credit; `receiptHeaders` go with it (a top-up's card receipt). */
  drawPayment(credit: CardCreditRow, route: PaidRoute, proofKey: string, receiptHeaders: Record<string, string>): VerifiedPayment {
    return {
      rail: 'card',
      network: credit.network,
      proofKey,
      payer: null,
      asset: 'usd',
      trace: { kind: 'card-credit', creditId: credit.id, paymentIntent: credit.paymentIntent, drawKey: proofKey },
      settle: () => this.draw(credit, proofKey, route.price, receiptHeaders),
    };
  }

  /** Takes `amount` off the credit for the payment `proofKey`, once; refused when the credit no longer holds it. */
  private async draw(credit: CardCreditRow, proofKey: string, amount: bigint, receiptHeaders: Record<string, string>): Promise<SettlementOutcome> {
    const remaining = await this.db
      .transaction(async (tx) => {
        const [drawn] = await tx.insert(cardCreditDraws).values({ proofKey, creditId: credit.id, amount }).onConflictDoNothing().returning();
        if (drawn) {
          const [left] = await tx
            .update(cardCredits)
            .set({ remaining: sql`${cardCredits.remaining} - ${amount}`, updatedAt: clockNow })
            .where(and(eq(cardCredits.id, credit.id), eq(cardCredits.status, 'open'), sql`${cardCredits.remaining} >= ${amount}`))
            .returning({ remaining: cardCredits.remaining });
          if (!left) throw new Undone(); // rolls the draw back
          return left.remaining;
        }
        // This payment drew already (its settlement retried): what is left now is its answer.
        const [current] = await tx.select({ remaining: cardCredits.remaining }).from(cardCredits).where(eq(cardCredits.id, credit.id));
        return current!.remaining;
      })
      .catch(undone(null));
    if (remaining === null) return { state: 'refused', reason: `card credit ${credit.id} no longer holds ${formatUsd(amount)} USD` };
    const headers = { ...receiptHeaders, [CREDIT_HEADER]: credit.id, [CREDIT_REMAINING_HEADER]: formatUsd(remaining) };
    const receipt = { method: 'card-credit', credit_id: credit.id, payment_intent: credit.paymentIntent, amount: formatUsd(amount), remaining: formatUsd(remaining) };
    return { state: 'settled', reference: credit.paymentIntent, payer: null, headers, receipt };
  }

  /** Whether the payment `proofKey` drew on its credit (the reconciler's lookup: a draw is one transaction, done or not). */
  async drew(proofKey: string): Promise<boolean> {
    const [row] = await this.db.select({ proofKey: cardCreditDraws.proofKey }).from(cardCreditDraws).where(eq(cardCreditDraws.proofKey, proofKey));
    return row !== undefined;
  }

  /**
   * Gives a failed call's draw back, once: to the credit while it is open, else to the card (the
   * remainder went back already). Returns the refund's reference.
   */
  async returnDraw(proofKey: string): Promise<string> {
    const [draw] = await this.db.select().from(cardCreditDraws).where(eq(cardCreditDraws.proofKey, proofKey));
    if (!draw) throw new Error(`payment ${proofKey} drew on no card credit`);
    const credit = (await this.find(draw.creditId))!;
    const returned = await this.db
      .transaction(async (tx) => {
        const [marked] = await tx
          .update(cardCreditDraws)
          .set({ returnedAt: clockNow })
          .where(and(eq(cardCreditDraws.proofKey, proofKey), isNull(cardCreditDraws.returnedAt)))
          .returning();
        if (!marked) return true; // returned before
        const [open] = await tx
          .update(cardCredits)
          .set({ remaining: sql`${cardCredits.remaining} + ${draw.amount}`, updatedAt: clockNow })
          .where(and(eq(cardCredits.id, credit.id), eq(cardCredits.status, 'open')))
          .returning({ id: cardCredits.id });
        if (!open) throw new Undone(); // the credit is closed: the draw goes to the card instead
        return true;
      })
      .catch(undone(false));
    if (returned) return `credit:${credit.id}`;
    // Keyed by the draw: a retry after a crash is the same refund at the processor.
    await this.toCard(credit, draw.amount, `refund_${credit.paymentIntent}_draw_${draw.proofKey}`);
    await this.db.update(cardCreditDraws).set({ returnedAt: clockNow }).where(eq(cardCreditDraws.proofKey, proofKey));
    return credit.paymentIntent;
  }

  /**
   * Sends what is left of a credit back to its card: open -> refunding (the remainder taken, so no
   * draw can spend it) -> refunded once the processor took the refund. Refunding again returns the
   * credit as it is; null when there is nothing left to refund.
   */
  async refundRemainder(credit: CardCreditRow): Promise<CardCreditRow | null> {
    const [taken] = await this.db
      .update(cardCredits)
      .set({ status: 'refunding', refunded: sql`${cardCredits.refunded} + ${cardCredits.remaining}`, remaining: 0n, updatedAt: clockNow })
      .where(and(eq(cardCredits.id, credit.id), eq(cardCredits.status, 'open'), sql`${cardCredits.remaining} > 0`))
      .returning();
    if (taken) return this.finishRefund(taken);
    const current = (await this.find(credit.id))!;
    if (current.status === 'open') return null;
    return current.status === 'refunding' ? this.finishRefund(current) : current;
  }

  /** Refunds whose worker died (the reconciler's round): finished with the same processor key. */
  async resumeRefunds(): Promise<number> {
    const stale = await this.db
      .select()
      .from(cardCredits)
      .where(and(eq(cardCredits.status, 'refunding'), lt(cardCredits.updatedAt, sql`${clockNow} - make_interval(secs => ${STALE_REFUND_SECONDS})`)));
    for (const credit of stale) await this.finishRefund(credit);
    return stale.length;
  }

  private async finishRefund(credit: CardCreditRow): Promise<CardCreditRow> {
    // Keyed by the credit: every attempt is the same refund at the processor.
    await this.toCard(credit, credit.refunded, `refund_${credit.paymentIntent}_remainder`);
    const [done] = await this.db
      .update(cardCredits)
      .set({ status: 'refunded', refundedAt: clockNow, updatedAt: clockNow })
      .where(and(eq(cardCredits.id, credit.id), eq(cardCredits.status, 'refunding')))
      .returning();
    return done ?? (await this.find(credit.id))!;
  }

  private async toCard(credit: CardCreditRow, amount: bigint, key: string): Promise<void> {
    if (!this.refundCard) throw new Error(`no card processor to refund credit ${credit.id}`);
    if (amount % BASE_UNITS_PER_CENT !== 0n) throw new Error(`card credit ${credit.id}: ${amount} base units is not whole cents`);
    await this.refundCard(credit.paymentIntent, { cents: amount / BASE_UNITS_PER_CENT, key });
  }

  async find(id: string): Promise<CardCreditRow | null> {
    const [row] = await this.db.select().from(cardCredits).where(eq(cardCredits.id, id));
    return row ?? null;
  }

  /** A holder's credits, newest first. */
  heldBy(holder: string, page: Page): Promise<CreditPage> {
    return this.list(eq(cardCredits.holder, holder), page);
  }

  /** A holder's credit by id; another holder's answers like a missing one. */
  async findHeld(holder: string, id: string): Promise<CardCreditRow | null> {
    const credit = await this.find(id);
    return credit?.holder === holder ? credit : null;
  }

  /** The credits billed to an employer: those any of whose calls were made for it, newest first. */
  billedTo(employerId: string, page: Page): Promise<CreditPage> {
    return this.list(inArray(cardCredits.id, this.billedIds(employerId)), page);
  }

  /** One page of credits, newest first, with the count of all that match. */
  private async list(where: SQL, page: Page): Promise<CreditPage> {
    const [rows, [total]] = await Promise.all([
      this.db.select().from(cardCredits).where(where).orderBy(desc(cardCredits.createdAt), desc(cardCredits.id)).limit(page.limit).offset(page.offset),
      this.db.select({ total: sql<number>`count(*)::int` }).from(cardCredits).where(where),
    ]);
    return { rows, total: total?.total ?? 0 };
  }

  /** A credit billed to an employer, by id; any other answers like a missing one. */
  async findBilled(employerId: string, id: string): Promise<CardCreditRow | null> {
    const [row] = await this.db.select().from(cardCredits).where(and(eq(cardCredits.id, id), inArray(cardCredits.id, this.billedIds(employerId))));
    return row ?? null;
  }

  /** Ids of the credits any of whose calls were made for the employer. */
  private billedIds(employerId: string) {
    return this.db
      .selectDistinct({ id: cardCreditDraws.creditId })
      .from(cardCreditDraws)
      .innerJoin(payments, eq(payments.proofKey, cardCreditDraws.proofKey))
      .where(eq(payments.employerId, employerId));
  }
}

/** Thrown inside a transaction to roll it back on purpose. */
class Undone extends Error {}

/** Turns a deliberate rollback into `value`; any other failure goes on. */
const undone =
  <T>(value: T) =>
  (error: unknown): T => {
    if (error instanceof Undone) return value;
    throw error;
  };
