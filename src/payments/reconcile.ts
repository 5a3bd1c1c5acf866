import type { ServiceClock } from '../clock/clock.js';
import type { Db } from '../db/client.js';
import type { CardCredits } from './card/credit.js';
import type { Logger } from '../log.js';
import type { PaymentRailAdapter } from './gate.js';
import type { PaymentRefunds } from './refunds.js';
import { resolvePayment, stalePayments, type PaymentRow } from './store.js';
import type { PaymentTrace } from './trace.js';

/** A payment settled but never served this long is refunded (its proof may come back until then). */
export const UNSERVED_REFUND_SECONDS = 3600;
/** A payment whose outcome the chain has not told after this long is reported every round. */
const STUCK_AFTER_MS = 15 * 60_000;

export interface ReconcileCounts {
  settled: number;
  voided: number;
  refunded: number;
  pending: number;
}

/**
 * Resolves every fee payment no request is answering any more (the `payments-reconcile` job, every
 * minute and at start-up), from the chain or the card processor:
 * - a claim or an unknown outcome whose lease lapsed: `settled` when the money moved (its proof can
 *   then be served once, see the gate), `voided` when it never can, left alone while it still could;
 * - a payment settled but not served for `unservedSeconds`, and a refund whose worker died: refunded.
 * Every decision is a compare-and-set with an audit entry; instances never resolve one row twice.
 */
export class PaymentReconciler {
  constructor(
    private readonly deps: {
      db: Db;
      /** The service clock: how long a payment has been stuck is measured on it. */
      clock: Pick<ServiceClock, 'nowMs'>;
      adapters: PaymentRailAdapter[];
      refunds: PaymentRefunds;
      /** Card credit refunds whose worker died are finished each round too. */
      cardCredits?: CardCredits | undefined;
      unservedSeconds?: number;
      log: Logger;
    },
  ) {}

  async run(limit = 100): Promise<ReconcileCounts> {
    const counts: ReconcileCounts = { settled: 0, voided: 0, refunded: 0, pending: 0 };
    const stale = await stalePayments(this.deps.db, { unservedSeconds: this.deps.unservedSeconds ?? UNSERVED_REFUND_SECONDS, limit });
    for (const row of stale) {
      try {
        const outcome = row.status === 'claimed' || row.status === 'unknown' ? await this.resolve(row) : await this.refund(row);
        counts[outcome] += 1;
      } catch (error) {
        counts.pending += 1;
        this.deps.log.error({ err: error, paymentId: row.id, status: row.status }, 'payment not reconciled; tried again next round');
      }
    }
    counts.refunded += await this.resumeCreditRefunds();
    return counts;
  }

  private async resumeCreditRefunds(): Promise<number> {
    try {
      return (await this.deps.cardCredits?.resumeRefunds()) ?? 0;
    } catch (error) {
      this.deps.log.error({ err: error }, 'card credit refund not finished; tried again next round');
      return 0;
    }
  }

  /** A claim or an unknown outcome: did the money move? */
  private async resolve(row: PaymentRow): Promise<keyof ReconcileCounts> {
    const adapter = this.deps.adapters.find((a) => a.rails.includes(row.rail === 'card' ? 'A' : row.rail));
    if (!adapter || !row.trace) throw new Error(`no way to look payment ${row.id} up (rail ${row.rail}, trace ${row.trace ? 'kept' : 'missing'})`);
    const found = await adapter.lookup(row.trace as PaymentTrace, row.reference);
    if (found.state === 'pending') {
      if (this.deps.clock.nowMs() - row.createdAt.getTime() > STUCK_AFTER_MS) {
        this.deps.log.warn({ paymentId: row.id, rail: row.rail, reference: row.reference }, 'fee payment outcome still unknown; a person must resolve it (docs/operations.md)');
      }
      return 'pending';
    }
    if (found.state === 'landed') {
      return (await resolvePayment(this.deps.db, row, 'settled', { reference: found.reference, reason: 'the money moved; its request never answered' })) ? 'settled' : 'pending';
    }
    return (await resolvePayment(this.deps.db, row, 'voided', { reason: found.reason })) ? 'voided' : 'pending';
  }

  /** A settlement never served, or a refund left unfinished. */
  private async refund(row: PaymentRow): Promise<keyof ReconcileCounts> {
    const { refunds } = this.deps;
    const outcome = row.status === 'settled' ? await refunds.start(row.id, 'abandoned', row.httpStatus, 'settled but never served') : await refunds.resume(row.id);
    return outcome?.state === 'refunded' ? 'refunded' : 'pending';
  }
}
