import type { Address as SolanaAddress, Signature } from '@solana/kit';
import { keccak256, stringToHex, zeroHash, type Address, type Hex } from 'viem';
import { isNonceTaken } from '../chains/evm/connection.js';
import type { EvmTokenChain } from '../chains/evm/token-chain.js';
import type { SignedSolanaTransaction, SolanaChain } from '../chains/solana/solana-chain.js';
import type { Db } from '../db/client.js';
import type { CardCredits, RefundCard } from './card/credit.js';
import type { PaymentTrace } from './trace.js';
import { holdingLease, markRefunded, recordRefundAttempt, startRefund, takeOverRefund, type PaymentRow } from './store.js';

export type RefundOutcome = { state: 'refunded'; reference: string } | { state: 'pending'; reference: string | null };

export interface RefundRails {
  /** Rail A fees came to the service's Tempo wallet; a refund is a memo-tagged transfer back. */
  tempo: EvmTokenChain;
  /** Rail B fees came to the service's Base wallet. */
  base: EvmTokenChain;
  /** Rail C fees came to the service's Solana wallet. */
  solana: SolanaChain;
  /** The card processor's refund of a charge (absent: no card rail). */
  refundCard?: RefundCard | undefined;
  /** Card credits: a failed call's draw goes back to its credit. */
  cardCredits?: CardCredits | undefined;
}

/** An EVM refund recorded before it was broadcast. */
type EvmAttempt = { hash: Hex; raw: Hex };
/** A Solana refund recorded before it was sent. */
type SolanaAttempt = { signature: string; wire: string; lastValidBlockHeight: string };

/**
 * Gives a collected fee back to its payer: on chain from the service wallet that received it
 * (rails A, B, C), or through the card processor. Exactly once: the transaction is recorded on the
 * payment before it is sent, and a later attempt (after a crash, by another instance) first looks
 * that one up, resends the same bytes while they can still land, and signs a new one only when the
 * recorded one never can. One worker at a time: a refund runs under the payment's lease.
 */
export class PaymentRefunds {
  constructor(
    private readonly db: Db,
    private readonly rails: RefundRails,
    private readonly leaseSeconds: number,
  ) {}

  /**
   * Refunds a settled payment: for the request whose call failed (it holds the payment), or as
   * the reconciler for one never served (`abandoned`: only while nobody holds it). Null when the
   * payment was resolved or taken by someone else first.
   */
  async start(paymentId: string, holder: 'request' | 'abandoned', httpStatus: number | null, reason: string): Promise<RefundOutcome | null> {
    const row = await startRefund(this.db, paymentId, httpStatus, this.leaseSeconds, holder);
    return row && this.underLease(row, reason);
  }

  /** Finishes a refund whose worker died (its lease lapsed); null when another one holds it. */
  async resume(paymentId: string): Promise<RefundOutcome | null> {
    const row = await takeOverRefund(this.db, paymentId, this.leaseSeconds);
    return row && this.underLease(row, (row.httpStatus ?? 0) >= 500 ? `the call answered ${row.httpStatus}` : 'settled but never served');
  }

  /** One refund attempt of a payment being refunded (the caller holds it); refunded once it landed. */
  async refund(row: PaymentRow, reason: string): Promise<RefundOutcome> {
    const outcome = await this.attempt(row);
    if (outcome.state === 'refunded') await markRefunded(this.db, row, outcome.reference, reason);
    return outcome;
  }

  private underLease(row: PaymentRow, reason: string): Promise<RefundOutcome> {
    return holdingLease(this.db, row.id, this.leaseSeconds, () => this.refund(row, reason));
  }

  private attempt(row: PaymentRow): Promise<RefundOutcome> {
    if (row.rail === 'card') return this.refundCard(row);
    if (!row.payer) throw new Error(`payment ${row.id} names no payer to refund`);
    if (row.rail === 'C') return this.refundSolana(row, row.payer as SolanaAddress);
    const chain = row.rail === 'A' ? this.rails.tempo : this.rails.base;
    // Tempo's token carries a memo naming the payment; Base's USDC has none.
    const memo = row.rail === 'A' ? keccak256(stringToHex(`refund:${row.id}`)) : zeroHash;
    return this.refundEvm(row, chain, row.payer as Address, memo);
  }

  private async refundCard(row: PaymentRow): Promise<RefundOutcome> {
    if ((row.trace as PaymentTrace | null)?.kind === 'card-credit') {
      if (!this.rails.cardCredits) throw new Error(`payment ${row.id} drew on a card credit, and there are none here`);
      return { state: 'refunded', reference: await this.rails.cardCredits.returnDraw(row.proofKey) };
    }
    const paymentIntent = row.reference ?? (row.trace as { paymentIntent?: string } | null)?.paymentIntent;
    if (!paymentIntent || !this.rails.refundCard) throw new Error(`payment ${row.id} has no card charge to refund`);
    await this.rails.refundCard(paymentIntent); // idempotent at the processor (keyed by the charge)
    return { state: 'refunded', reference: paymentIntent };
  }

  private async refundEvm(row: PaymentRow, chain: EvmTokenChain, payer: Address, memo: Hex): Promise<RefundOutcome> {
    const earlier = row.refundAttempt as EvmAttempt | null;
    if (earlier) {
      const { connection } = chain;
      let receipt = await connection.receipt(earlier.hash);
      if (!receipt) {
        // The same bytes again: they land with their nonce, or that nonce went to another
        // transaction meanwhile (or to them: look once more) and they never can.
        const error = await connection.rebroadcast(earlier.raw).then(() => null, (failure: unknown) => failure);
        receipt = await connection.receipt(earlier.hash);
        if (!receipt && !isNonceTaken(error)) return { state: 'pending', reference: earlier.hash };
      }
      if (receipt?.status === 'success') return { state: 'refunded', reference: earlier.hash };
      // Reverted, or never able to land: sign a new refund.
    }
    const written = await chain.transfer(payer, row.amount, memo, {
      beforeBroadcast: async (signed) => {
        if (!(await recordRefundAttempt(this.db, row.id, signed.hash, { ...signed } satisfies EvmAttempt))) {
          throw new Error(`payment ${row.id} is no longer being refunded`);
        }
      },
    });
    return { state: 'refunded', reference: written.txHash };
  }

  private async refundSolana(row: PaymentRow, payer: SolanaAddress): Promise<RefundOutcome> {
    const { solana } = this.rails;
    const earlier = row.refundAttempt as SolanaAttempt | null;
    if (earlier) {
      const signature = earlier.signature as Signature;
      const status = await solana.status(signature);
      if (status.state === 'landed') return { state: 'refunded', reference: signature };
      if (status.state === 'unknown' && (await solana.blockHeight()) <= BigInt(earlier.lastValidBlockHeight)) {
        await solana.resend({ signature, wire: earlier.wire, lastValidBlockHeight: BigInt(earlier.lastValidBlockHeight) });
        return { state: 'pending', reference: signature };
      }
      // Failed, or its blockhash expired unlanded: it never can land; sign a new one.
    }
    const record = async (signed: SignedSolanaTransaction) => {
      const attempt: SolanaAttempt = { signature: signed.signature, wire: signed.wire, lastValidBlockHeight: signed.lastValidBlockHeight.toString() };
      if (!(await recordRefundAttempt(this.db, row.id, signed.signature, attempt))) throw new Error(`payment ${row.id} is no longer being refunded`);
    };
    const { signature } = await solana.transfer(payer, row.amount, `refund ${row.id}`, { beforeSend: record });
    return { state: 'refunded', reference: signature };
  }
}
