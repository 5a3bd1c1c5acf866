import { randomUUID } from 'node:crypto';
import { erc20Abi, parseEventLogs, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA } from '../../../test/support/pay.js';
import { payrollTreasuryAbi } from '../../chains/evm/abis.js';
import { MAX_TRANSACTION_GAS, type TempoChain } from '../../chains/evm/tempo-chain.js';
import { TreasuryService } from '../treasury/service.js';
import { PayrollService } from './service.js';
import * as store from './store.js';

/**
 * Payroll runs larger than one transaction (issue 32): execute splits a run into batches sized to
 * the gas cap, each with its own state, and every employee is paid exactly once on chain, whatever
 * stops the run part-way (a refusal, a second executor, a restart).
 */
let t: TestApp;
let server: LoopbackServer;
let treasury: TreasuryService;

const json = async <T = Record<string, unknown>>(response: Response) => {
  if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
};
const tokenBalance = (owner: Address) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** An employer with `count` employees at fresh wallets (one insert) and `usd` in its treasury. */
async function employerWithStaff(count: number, usd: number) {
  const sub = `batches-${randomUUID().slice(0, 8)}`;
  const token = await t.token(sub, `${sub}@batches.example`);
  const { id } = await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc` } }));
  const { rows } = await t.database.pool.query<{ id: string; wallet_address: Address }>(
    `INSERT INTO employees (employer_id, email, full_name, wallet_address, cost_centre)
     SELECT $1, 'e' || n || '-' || $3 || '@batches.example', 'Employee ' || n, '0x' || substr(md5($3 || n) || md5(n || $3), 1, 40), 'ENG'
     FROM generate_series(1, $2::int) AS n ORDER BY n RETURNING id, wallet_address`,
    [id, count, sub],
  );
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: String(usd) } });
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), BigInt(usd) * 1_000_000n);
  return { token, id, staff: rows };
}

/** Prepares a draft paying each employee `amountOf(index)` USD. */
async function prepare(owner: { token: string; id: string; staff: { id: string }[] }, amountOf: (index: number) => string) {
  const items = owner.staff.map((e, i) => ({ employee_id: e.id, amount_usd: amountOf(i) }));
  return json<{ payroll_run_id: string; items: { employee_id: string; wallet_address: Address; amount_usd: string; memo: Hex }[] }>(
    await t.request('POST', `/api/employers/${owner.id}/payroll`, { token: owner.token, body: { items } }),
  );
}

const runOf = async (owner: { token: string; id: string }, runId: string) => {
  const { runs } = await json<{ runs: { id: string; status: string; batches: { seq: number; status: string; recipient_count: number; tx_hash: string | null; failure_reason: string | null }[] }[] }>(
    await t.request('GET', `/api/employers/${owner.id}/payroll/runs?limit=100`, { token: owner.token }),
  );
  return runs.find((run) => run.id === runId)!;
};

const payroll = (tempo: TempoChain = t.chains!.tempo, batchMaxRecipients?: number) =>
  new PayrollService({ database: t.database, employers: t.services.employers, treasury, tempo, screen: null, batchMaxRecipients });

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('a run larger than one transaction', () => {
  it('pays 2,000 employees in several batch transactions, each under the gas cap, every employee exactly once', async () => {
    const owner = await employerWithStaff(2_000, 20_000);
    const draft = await prepare(owner, (i) => `${1 + (i % 7)}.000${(i % 9) + 1}`);
    const pay = (await railA(t, server.url, '5')).pay;
    const executed = await json<{ success: boolean; status: string; tx_hash: Hex; tx_hashes: Hex[]; batch_count: number; recipient_count: number }>(
      await pay('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: { 'X-Identity-Token': owner.token } }),
    );
    expect(executed).toMatchObject({ success: true, status: 'confirmed', recipient_count: 2_000 });
    expect(executed.batch_count).toBeGreaterThanOrEqual(4);
    expect(new Set(executed.tx_hashes).size).toBe(executed.batch_count);
    expect(executed.tx_hash).toBe(executed.tx_hashes[0]);

    // On chain: each batch mined under the cap; together they paid every item once, with its memo.
    const paid = new Map<string, number>();
    for (const hash of executed.tx_hashes) {
      const receipt = await t.chains!.tempo.connection.publicClient.getTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      expect(receipt.gasUsed).toBeLessThan(MAX_TRANSACTION_GAS);
      for (const { args } of parseEventLogs({ abi: payrollTreasuryAbi, logs: receipt.logs, eventName: 'PayrollPayment' })) {
        const key = `${args.recipient.toLowerCase()}|${args.amount}|${args.memo}`;
        paid.set(key, (paid.get(key) ?? 0) + 1);
      }
    }
    const owed = draft.items.map((i) => `${i.wallet_address.toLowerCase()}|${BigInt(Math.round(Number(i.amount_usd) * 1e6))}|${i.memo}`);
    expect([...paid.values()].every((times) => times === 1)).toBe(true);
    expect([...paid.keys()].sort()).toEqual([...owed].sort());
    const balances = await Promise.all(draft.items.slice(0, 50).map((i) => tokenBalance(i.wallet_address)));
    expect(balances).toEqual(draft.items.slice(0, 50).map((i) => BigInt(Math.round(Number(i.amount_usd) * 1e6))));

    // The API shows each batch: in order, confirmed, their recipients adding up to the run.
    const run = await runOf(owner, draft.payroll_run_id);
    expect(run.status).toBe('confirmed');
    expect(run.batches.map((b) => b.seq)).toEqual([...Array(executed.batch_count).keys()]);
    expect(run.batches.every((b) => b.status === 'confirmed')).toBe(true);
    expect(run.batches.reduce((sum, b) => sum + b.recipient_count, 0)).toBe(2_000);
    expect(run.batches.map((b) => b.tx_hash)).toEqual(executed.tx_hashes);
    const items = await store.itemsOfRun(t.database.db, draft.payroll_run_id);
    expect(items.every((i) => i.status === 'paid' && i.txHash === executed.tx_hashes[i.batchSeq!])).toBe(true);
  });

  it('ends partially_paid when a later batch is refused: the earlier batches paid, the rest failed and not sent', async () => {
    const owner = await employerWithStaff(3, 100);
    const draft = await prepare(owner, () => '20');
    const tempo = t.chains!.tempo;
    const accountId = await treasury.accountId(owner.id);
    // After the first batch mines, the treasury is drained (another spend of the same treasury).
    let batchesSent = 0;
    const draining = new Proxy(tempo, {
      get: (target, key) =>
        key === 'executeBatchPayroll'
          ? async (...args: Parameters<TempoChain['executeBatchPayroll']>) => {
              const mined = await target.executeBatchPayroll(...args);
              if (++batchesSent === 1) {
                const { available } = (await target.treasuryAccount(accountId))!;
                await target.transferFromTreasury(accountId, target.serviceAddress, available, draft.items[0]!.memo);
              }
              return mined;
            }
          : Reflect.get(target, key, target),
    });
    const run = (await store.findRun(t.database.db, draft.payroll_run_id))!;
    const executed = await payroll(draining, 1).execute(run, { userId: null, kind: 'agent' }, 'req-partial');
    expect(executed).toMatchObject({ status: 'partially_paid', recipientCount: 1, batchCount: 3 });
    expect(executed.failureReason).toMatch(/batch 2 of 3: treasury available balance too low/);
    expect(batchesSent).toBe(1);
    const audit = await t.database.pool.query<{ actor_kind: string }>(`SELECT actor_kind FROM audit_log WHERE target_id = $1 AND action = 'payroll.execute_started'`, [
      draft.payroll_run_id,
    ]);
    expect(audit.rows).toEqual([{ actor_kind: 'agent' }]);

    const shown = await runOf(owner, draft.payroll_run_id);
    expect(shown.status).toBe('partially_paid');
    expect(shown.batches.map((b) => b.status)).toEqual(['confirmed', 'failed', 'failed']);
    expect(shown.batches[2]!.failure_reason).toMatch(/^not sent: batch 2 was refused/);
    const items = await store.itemsOfRun(t.database.db, draft.payroll_run_id);
    expect(items.map((i) => [i.batchSeq, i.status]).sort()).toEqual([[0, 'paid'], [1, 'failed'], [2, 'failed']]);
    const balances = await Promise.all(items.map((i) => tokenBalance(i.walletAddress as Address)));
    expect(balances).toEqual(items.map((i) => (i.status === 'paid' ? 20_000_000n : 0n)));
    const { rows } = await t.database.pool.query<{ type: string; title: string }>(`SELECT type, title FROM notifications WHERE employer_id = $1`, [owner.id]);
    expect(rows).toContainEqual({ type: 'payroll_partially_paid', title: 'Payroll partly paid: 1 of 3 people; 2 not paid' });
  });

  it('fails the run, paying nobody, when its first batch is refused', async () => {
    const owner = await employerWithStaff(3, 100);
    const draft = await prepare(owner, () => '20');
    const accountId = await treasury.accountId(owner.id);
    await t.chains!.tempo.transferFromTreasury(accountId, t.chains!.tempo.serviceAddress, 90_000_000n, draft.items[0]!.memo);
    const run = (await store.findRun(t.database.db, draft.payroll_run_id))!;
    await expect(payroll(t.chains!.tempo, 1).execute(run, { userId: null, kind: 'agent' }, 'req-refused')).rejects.toMatchObject({ code: 'INSUFFICIENT_TREASURY' });
    const shown = await runOf(owner, draft.payroll_run_id);
    expect(shown.status).toBe('failed');
    expect(shown.batches.map((b) => b.status)).toEqual(['failed', 'failed', 'failed']);
    expect(await Promise.all(draft.items.map((i) => tokenBalance(i.wallet_address)))).toEqual([0n, 0n, 0n]);
  });
});

describe('several executors on one run', () => {
  it('signs a batch again whose recorded bytes can never mine, but not where signing is not allowed (start-up)', async () => {
    const owner = await employerWithStaff(2, 1_000);
    const draft = await prepare(owner, () => '3');
    const runId = draft.payroll_run_id;
    await store.claimDraft(t.database.db, runId, { submittedBy: 'agent', txHash: null });
    await t.database.transaction((tx) => store.planBatches(tx.db, runId, 2));
    const [batch] = await store.batchesOfRun(t.database.db, runId);
    const token = randomUUID();
    await store.claimBatch(t.database.db, batch!.id, token, new Date(0));
    // Bytes recorded, never sent, and their nonce since taken by another transaction.
    expect(await store.recordBatchBroadcast(t.database.db, batch!, token, `0x${'22'.repeat(32)}`, '0x02')).toBe(true);
    const tempo = t.chains!.tempo;
    const connection = new Proxy(tempo.connection, {
      get: (target, key) =>
        key === 'rebroadcast' ? () => Promise.reject(new Error('nonce too low: next nonce 9, tx nonce 8')) : Reflect.get(target, key, target),
    });
    const nonceTaken = new Proxy(tempo, { get: (target, key) => (key === 'connection' ? connection : Reflect.get(target, key, target)) });

    expect(await payroll(nonceTaken).reconcile(runId, 0, { send: false })).toMatchObject({ status: 'submitted' });
    expect((await store.batchesOfRun(t.database.db, runId)).map((b) => [b.status, b.txHash])).toEqual([['pending', null]]);
    expect(await Promise.all(draft.items.map((i) => tokenBalance(i.wallet_address)))).toEqual([0n, 0n]);

    expect(await payroll(nonceTaken).reconcile(runId, 0)).toMatchObject({ status: 'confirmed' });
    expect(await Promise.all(draft.items.map((i) => tokenBalance(i.wallet_address)))).toEqual([3_000_000n, 3_000_000n]);
  });

  it('sends each batch once when two instances drive the same run at the same time', async () => {
    const owner = await employerWithStaff(7, 1_000);
    const draft = await prepare(owner, (i) => `${i + 1}`);
    await store.claimDraft(t.database.db, draft.payroll_run_id, { submittedBy: 'agent', txHash: null });
    const [one, two] = [payroll(t.chains!.tempo, 2), payroll(t.chains!.tempo, 2)];
    for (let pass = 0; pass < 6; pass++) {
      const states = await Promise.all([one.reconcile(draft.payroll_run_id), two.reconcile(draft.payroll_run_id)]);
      if (states.every((run) => run?.status === 'confirmed')) break;
    }
    const shown = await runOf(owner, draft.payroll_run_id);
    expect(shown.status).toBe('confirmed');
    expect(shown.batches.map((b) => b.recipient_count)).toEqual([2, 2, 2, 1]);
    expect(await Promise.all(draft.items.map((i) => tokenBalance(i.wallet_address)))).toEqual(draft.items.map((_, i) => BigInt(i + 1) * 1_000_000n));
  });

  it('takes over a batch whose executor died after claiming it, before signing', async () => {
    const owner = await employerWithStaff(3, 1_000);
    const draft = await prepare(owner, () => '4');
    const runId = draft.payroll_run_id;
    await store.claimDraft(t.database.db, runId, { submittedBy: 'agent', txHash: null });
    await t.database.transaction((tx) => store.planBatches(tx.db, runId, 2));
    const [first] = await store.batchesOfRun(t.database.db, runId);
    const deadClaim = randomUUID();
    expect(await store.claimBatch(t.database.db, first!.id, deadClaim, new Date(0))).toBe(true);

    // Within the claim's lease nobody else signs it; after it, the reconciler does, and pays everyone once.
    expect(await payroll().reconcile(runId)).toMatchObject({ status: 'submitted' });
    expect(await tokenBalance(draft.items[0]!.wallet_address)).toBe(0n);
    expect(await payroll().reconcile(runId, 0)).toMatchObject({ status: 'confirmed' });
    expect(await Promise.all(draft.items.map((i) => tokenBalance(i.wallet_address)))).toEqual([4_000_000n, 4_000_000n, 4_000_000n]);
    // Were the first executor alive after all, it could not record (so never broadcast) bytes of its own.
    expect(await store.recordBatchBroadcast(t.database.db, first!, deadClaim, `0x${'11'.repeat(32)}`, '0x02')).toBe(false);
  });
});
