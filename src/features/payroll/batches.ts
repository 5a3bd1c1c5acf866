import { randomUUID } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { ChainRevertError, isNonceTaken } from '../../chains/evm/connection.js';
import { PAYROLL_GAS_PER_NEW_RECIPIENT, payrollBatchCapacityAt, type PayrollTransfer, type TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database } from '../../db/client.js';
import { crashPoint } from '../../faults.js';
import * as store from './store.js';

export const INSUFFICIENT_TREASURY_REASON = 'treasury available balance too low';

/** Where one batch stands after a step: paid, refused (nothing of it paid), or still on its way. */
type BatchOutcome = 'confirmed' | 'refused' | 'pending';

/**
 * Pays a submitted run's Tempo items in as many batch transactions as the gas limit needs, in
 * order, each batch with its own state (payroll_batches). Every step is a compare-and-set, and a
 * batch's signed bytes are recorded before they are broadcast, so any number of executors (the
 * execute call, the reconciler on every instance, a restart after kill -9) converge on each batch
 * paid once: a batch never signed is signed by whoever claims it, a signed one is only ever
 * rebroadcast as the same bytes. A refused batch stops the run: the later batches are not sent.
 */
export class RunBatches {
  constructor(
    private readonly deps: {
      database: Database;
      tempo: TempoChain;
      accountId: (employerId: string) => Promise<bigint>;
      /** An operator's cap on recipients per batch, under what the gas limit allows. */
      maxRecipients?: number | undefined;
    },
  ) {}

  /**
   * Moves the run's batches as far as they go now: plans them (an agent run, once), settles the
   * signed ones from the chain, sends the unsigned ones, and stops at the first batch that is not
   * confirmed. `claimStaleMs`: how old another executor's claim on an unsigned batch must be before
   * it is taken over; `send: false` signs nothing (it stops at the first unsigned batch). A revert
   * is handled (the batch refused); any other chain error is thrown (the outcome is unknown: a
   * later call settles it).
   */
  async advance(run: store.RunRow, claimStaleMs: number, { send = true } = {}): Promise<void> {
    for (const batch of await this.plan(run)) {
      if (batch.status === 'confirmed') continue;
      if (batch.status === 'failed' || (batch.status === 'pending' && !send)) return;
      const outcome = batch.status === 'submitted' ? await this.settleSigned(run, batch, claimStaleMs, send) : await this.send(run, batch, claimStaleMs);
      if (outcome !== 'confirmed') return;
    }
  }

  /** The run's batches; an agent run's Tempo items are split into them first if they are not yet. */
  private async plan(run: store.RunRow): Promise<store.BatchRow[]> {
    const { database, tempo } = this.deps;
    const batches = await store.batchesOfRun(database.db, run.id);
    if (batches.length > 0 || run.submittedBy !== 'agent') return batches;
    const items = await store.unbatchedTempoItems(database.db, run.id);
    if (items.length === 0) return [];
    const fits = await tempo.payrollBatchCapacity(await this.deps.accountId(run.employerId), items.map(transferOf)).catch((error: unknown) => {
      if (!(error instanceof ChainRevertError)) throw error;
      // The chain refuses even a sample (e.g. the treasury cannot pay it): sized without one, the first batch is refused below.
      return payrollBatchCapacityAt(PAYROLL_GAS_PER_NEW_RECIPIENT);
    });
    const capacity = Math.min(fits, this.deps.maxRecipients ?? fits);
    await database.transaction((tx) => store.planBatches(tx.db, run.id, capacity));
    return store.batchesOfRun(database.db, run.id);
  }

  /** Claims an unsigned batch, signs it, records the bytes, broadcasts them and waits for the receipt. */
  private async send(run: store.RunRow, batch: store.BatchRow, claimStaleMs: number): Promise<BatchOutcome> {
    const { database, tempo } = this.deps;
    const token = randomUUID();
    if (!(await store.claimBatch(database.db, batch.id, token, new Date(database.clock.nowMs() - claimStaleMs)))) return 'pending';
    const transfers = (await store.batchItems(database.db, run.id, batch.seq)).map(transferOf);
    try {
      const mined = await tempo.executeBatchPayroll(await this.deps.accountId(run.employerId), transfers, {
        beforeBroadcast: async ({ hash, raw }) => {
          if (!(await store.recordBatchBroadcast(database.db, batch, token, hash, raw))) throw new TakenOver();
          crashPoint('payroll.before-broadcast');
        },
      });
      crashPoint('payroll.after-broadcast');
      return this.confirm(batch, mined);
    } catch (error) {
      if (error instanceof TakenOver) return 'pending'; // these bytes were not broadcast; the other executor sends its own
      if (!(error instanceof ChainRevertError)) throw error;
      return this.refuse(batch, error.errorName === 'InsufficientAvailable' ? INSUFFICIENT_TREASURY_REASON : `batch reverted: ${error.errorName}`);
    }
  }

  /**
   * A batch whose bytes are recorded: confirmed when they mined and paid exactly its items, refused
   * when they reverted or paid something else. Unmined bytes are broadcast again (the same bytes
   * mine once); bytes whose nonce another transaction took can never mine, so the batch is signed
   * again (now if `send`, else by a later call). An owner's transaction (no bytes of ours) waits for the owner.
   */
  private async settleSigned(run: store.RunRow, batch: store.BatchRow, claimStaleMs: number, send: boolean): Promise<BatchOutcome> {
    const { database, tempo } = this.deps;
    const hash = batch.txHash as Hex;
    const receipt = await tempo.connection.receipt(hash);
    if (!receipt) {
      if (!batch.rawTransaction) return 'pending';
      try {
        await tempo.connection.rebroadcast(batch.rawTransaction as Hex);
        return 'pending';
      } catch (error) {
        if (!isNonceTaken(error)) return 'pending';
        if (await tempo.connection.receipt(hash)) return this.settleSigned(run, batch, claimStaleMs, send); // mined since the first read
        if (!(await store.resignBatch(database.db, batch.id, hash)) || !send) return 'pending';
        return this.send(run, { ...batch, status: 'pending', claimToken: null }, claimStaleMs);
      }
    }
    if (receipt.status !== 'success') return this.refuse(batch, 'transaction reverted');
    const accountId = await this.deps.accountId(run.employerId);
    const key = (t: PayrollTransfer) => `${t.recipient.toLowerCase()}|${t.amount}|${(t.memo ?? '').toLowerCase()}`;
    const expected = (await store.batchItems(database.db, run.id, batch.seq)).map(transferOf).map(key).sort();
    const actual = tempo.payrollPaymentsOf(receipt, accountId).map(key).sort();
    const matches = expected.length === actual.length && expected.every((k, i) => k === actual[i]);
    if (!matches) return this.refuse(batch, 'the transaction does not pay this run');
    return this.confirm(batch, { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber });
  }

  private async confirm(batch: store.BatchRow, mined: { txHash: Hex; blockNumber: bigint }): Promise<BatchOutcome> {
    if (await this.deps.database.transaction((tx) => store.confirmBatch(tx.db, batch, mined))) return 'confirmed';
    return this.outcomeOf(batch);
  }

  private async refuse(batch: store.BatchRow, reason: string): Promise<BatchOutcome> {
    if (await this.deps.database.transaction((tx) => store.refuseBatch(tx.db, batch, reason))) return 'refused';
    return this.outcomeOf(batch);
  }

  /** Where a batch another executor moved first stands. */
  private async outcomeOf(batch: store.BatchRow): Promise<BatchOutcome> {
    const current = (await store.batchesOfRun(this.deps.database.db, batch.runId)).find((b) => b.id === batch.id);
    return current?.status === 'confirmed' ? 'confirmed' : current?.status === 'failed' ? 'refused' : 'pending';
  }
}

/** Another executor took the batch over between our claim and our recording its bytes. */
class TakenOver extends Error {}

const transferOf = (item: store.ItemRow): PayrollTransfer => ({ recipient: item.walletAddress as Address, amount: item.amount, memo: item.memo as Hex });
