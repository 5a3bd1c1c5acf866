import { AppError, notFound } from '../../errors.js';
import type { Caller } from '../../http/context.js';
import type { PaidCallerResolver } from '../../http/paid-caller.js';
import type { Logger } from '../../log.js';
import { holderOf, type CardCreditRow, type CardCredits } from '../../payments/card/credit.js';
import type { EmployersService } from '../employers/index.js';

/**
 * Who may see and refund a card credit (the rules of the credit itself are in
 * src/payments/card/credit.ts): its holder, by the identity headers of the paid calls that drew on
 * it, and the owner of an employer it was billed to. Anyone else's credit answers like a missing one.
 */
export class CardCreditAccess {
  constructor(
    private readonly deps: { credits: CardCredits | undefined; employers: EmployersService; paidCallers: PaidCallerResolver; log: Logger },
  ) {}

  /** The caller's credits, newest first (an agent that lost a `Payment-Credit` header finds them here). */
  async allHeldBy(headers: Headers, page: { page: number; limit: number }) {
    const holder = await this.holder(headers);
    if (!this.deps.credits) return { rows: [], total: 0 };
    return this.deps.credits.heldBy(holder, { offset: (page.page - 1) * page.limit, limit: page.limit });
  }

  async heldBy(headers: Headers, id: string): Promise<CardCreditRow> {
    const credit = await this.deps.credits?.findHeld(await this.holder(headers), id);
    if (!credit) throw notFound('Card credit');
    return credit;
  }

  /**
   * The caller as a holder: the identity headers its paid calls sent, or a signed-in person's
   * bearer (the same identity-provider token as X-Identity-Token).
   */
  private async holder(headers: Headers): Promise<string> {
    const bearer = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '')?.[1];
    const identity = headers.has('x-identity-token') || headers.has('x-agent-key') || !bearer ? headers : new Headers({ 'X-Identity-Token': bearer });
    const holder = holderOf(await this.deps.paidCallers.resolve(identity));
    if (holder === null) throw new AppError('UNAUTHENTICATED', 'Send X-Identity-Token or X-Agent-Key: card credits are shown to the caller that holds them.', { field: 'X-Identity-Token' });
    return holder;
  }

  async billedTo(caller: Caller, employerId: string, page: { page: number; limit: number }) {
    await this.deps.employers.ownedEmployer(caller, employerId);
    if (!this.deps.credits) return { rows: [], total: 0 };
    return this.deps.credits.billedTo(employerId, { offset: (page.page - 1) * page.limit, limit: page.limit });
  }

  async billed(caller: Caller, employerId: string, id: string): Promise<CardCreditRow> {
    await this.deps.employers.ownedEmployer(caller, employerId);
    const credit = await this.deps.credits?.findBilled(employerId, id);
    if (!credit) throw notFound('Card credit');
    return credit;
  }

  /**
   * Sends the remainder back to the card. A processor that does not answer leaves it `refunding`:
   * the payments reconciler finishes it with the same refund key.
   */
  async refund(credit: CardCreditRow): Promise<CardCreditRow> {
    const credits = this.deps.credits!;
    try {
      const refunded = await credits.refundRemainder(credit);
      if (!refunded) throw new AppError('CREDIT_EMPTY', `Nothing is left of card credit ${credit.id} to refund.`);
      return refunded;
    } catch (error) {
      if (error instanceof AppError) throw error;
      this.deps.log.error({ err: error, creditId: credit.id }, 'card credit refund not finished; the reconciler retries it');
      return (await credits.find(credit.id))!;
    }
  }
}
