/**
 * Payroll figures (issues 5 and 32): prepare for 10,000 employees (all seven steps: parse, units,
 * treasury balance, sanctions and TIP-403 checks batched, memos, one transaction, calldata)
 * against the same prepare for 1,000 employees in the same run; and execute, counted in chain
 * transactions and wall time, for 100 recipients (one transaction) and for 10,000 (as many batch
 * transactions as the gas cap needs), with the gas per recipient that sizes a batch.
 *
 * Runs in process on the app the tests build (embedded chains, in-memory PGlite), through
 * `app.request`, so the figure is the route's own time without a network hop.
 */
import { parseEventLogs } from 'viem';
import { payrollTreasuryAbi } from '../src/chains/evm/abis.js';
import { MAX_TRANSACTION_GAS } from '../src/chains/evm/tempo-chain.js';
import { PayrollService } from '../src/features/payroll/service.js';
import { findRun } from '../src/features/payroll/store.js';
import { TreasuryService } from '../src/features/treasury/service.js';
import { startTestApp, type TestApp } from '../test/support/app.js';
import { checkTarget } from './targets.js';

type Row = [string, string, string, string];
const LARGE = 10_000;
const SMALL = 1_000;
const EXECUTED = 100;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function json<T>(response: Response): Promise<T> {
  if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** An employer with `count` active employees (inserted in one statement) and a funded treasury. */
async function employer(t: TestApp, sub: string, count: number): Promise<{ token: string; id: string; employees: string[] }> {
  const token = await t.token(sub);
  const { id } = await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc` } }));
  const { rows } = await t.database.pool.query<{ id: string }>(
    `INSERT INTO employees (employer_id, email, full_name, wallet_address, cost_centre)
     SELECT $1, 'e' || n || '@bench.example', 'Employee ' || n, '0x' || lpad(to_hex(n + 4096), 40, '0'), 'CC-' || (n % 7)
     FROM generate_series(1, $2::int) AS n RETURNING id`,
    [id, count],
  );
  const treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  const funds = BigInt(count) * 2_000_000n * 10n;
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: (funds / 1_000_000n).toString() } });
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), funds);
  return { token, id, employees: rows.map((r) => r.id) };
}

/** Prepares a run paying every employee; its time and its id. */
async function timePrepare(t: TestApp, owner: { token: string; id: string; employees: string[] }): Promise<{ ms: number; runId: string }> {
  const body = { items: owner.employees.map((employee_id) => ({ employee_id, amount_usd: '1.5' })), pay_period_start: '2026-11-01', pay_period_end: '2026-11-30' };
  const started = performance.now();
  const prepared = await json<{ recipient_count: number; payroll_run_id: string }>(await t.request('POST', `/api/employers/${owner.id}/payroll`, { token: owner.token, body }));
  const ms = performance.now() - started;
  if (prepared.recipient_count !== owner.employees.length) throw new Error('prepare returned the wrong run');
  return { ms, runId: prepared.payroll_run_id };
}

/** Executes a prepared run from the agent wallet: its wall time, the chain transactions it took, and the payments they made. */
async function timeExecute(t: TestApp, runId: string) {
  const service = new PayrollService({
    database: t.database,
    employers: t.services.employers,
    treasury: new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers }),
    tempo: t.chains!.tempo,
    screen: null,
  });
  const run = (await findRun(t.database.db, runId))!;
  const client = t.chains!.tempo.connection.publicClient;
  const blockBefore = await client.getBlockNumber();
  const started = performance.now();
  const result = await service.execute(run, { userId: null, kind: 'agent' }, 'bench');
  const ms = performance.now() - started;
  const blockAfter = await client.getBlockNumber();
  let transactions = 0;
  for (let block = blockBefore + 1n; block <= blockAfter; block++) transactions += (await client.getBlock({ blockNumber: block })).transactions.length;
  const receipts = await Promise.all(result.txHashes.map((hash) => client.getTransactionReceipt({ hash })));
  const payments = receipts.reduce((sum, receipt) => sum + parseEventLogs({ abi: payrollTreasuryAbi, logs: receipt.logs, eventName: 'PayrollPayment' }).length, 0);
  const gasUsed = receipts.reduce((sum, receipt) => sum + receipt.gasUsed, 0n);
  return { ms, transactions, payments, gasUsed, batches: result.batchCount };
}

export async function payrollFigures(runs: number): Promise<Row[]> {
  const t = await startTestApp({}, { chains: true });
  try {
    const large = await employer(t, 'bench-large', LARGE);
    const small = await employer(t, 'bench-small', SMALL);
    // Every recipient passes through the TIP-403 check: a blacklist policy that lists no one.
    const { policyId } = await t.chains!.tempo.createPolicy('blacklist', []);
    await t.database.pool.query('UPDATE employers SET tip403_policy_id = $1 WHERE id = ANY($2::uuid[])', [policyId.toString(), [large.id, small.id]]);

    const largeMs: number[] = [];
    const smallMs: number[] = [];
    let largeRunId = '';
    for (let i = 0; i < runs; i++) {
      smallMs.push((await timePrepare(t, small)).ms);
      const prepared = await timePrepare(t, large);
      largeMs.push(prepared.ms);
      largeRunId = prepared.runId;
    }

    // Execute: a prepared run of EXECUTED recipients (one transaction), then one of LARGE (as many as the gas cap needs).
    const executed = await employer(t, 'bench-execute', EXECUTED);
    const draft = await json<{ payroll_run_id: string }>(
      await t.request('POST', `/api/employers/${executed.id}/payroll`, { token: executed.token, body: { items: executed.employees.map((employee_id) => ({ employee_id, amount_usd: '1' })) } }),
    );
    const hundred = await timeExecute(t, draft.payroll_run_id);
    if (hundred.payments !== EXECUTED) throw new Error(`execute paid ${hundred.payments} of ${EXECUTED}`);
    const gasPerRecipient = Number(hundred.gasUsed) / EXECUTED;
    const whole = await timeExecute(t, largeRunId);
    if (whole.payments !== LARGE || whole.transactions !== whole.batches) throw new Error(`execute paid ${whole.payments} of ${LARGE} in ${whole.transactions} transactions, ${whole.batches} batches`);
    const fewest = Math.ceil((LARGE * gasPerRecipient) / Number(MAX_TRANSACTION_GAS));

    checkTarget(`payroll prepare, ${LARGE.toLocaleString('en')} employees`, median(largeMs), { below: 2000 }, 'ms');
    checkTarget(`payroll execute, ${EXECUTED} recipients: chain transactions`, hundred.transactions, { atMost: 1 }, '');
    return [
      [`payroll prepare, ${SMALL.toLocaleString('en')} employees (the same checks), ms`, median(smallMs).toFixed(0), '', ''],
      [
        `payroll prepare, ${LARGE.toLocaleString('en')} employees (TIP-403 policy set; checks batched; one transaction), ms`,
        median(largeMs).toFixed(0),
        `${SMALL.toLocaleString('en')} employees: ${median(smallMs).toFixed(0)} ms; target < 2000`,
        (median(largeMs) / 2000).toFixed(2),
      ],
      [
        `payroll execute, ${EXECUTED} recipients, all paid: chain transactions`,
        String(hundred.transactions),
        `${hundred.ms.toFixed(0)} ms; target 1 transaction`,
        String(hundred.transactions),
      ],
      [
        'payroll batch gas per recipient (bounds one batch: the per-transaction gas cap / this)',
        gasPerRecipient.toFixed(0),
        `gas cap ${MAX_TRANSACTION_GAS}: at most ${Math.floor(Number(MAX_TRANSACTION_GAS) / gasPerRecipient)} recipients per transaction; batches are sized to 80% of it`,
        '',
      ],
      [
        `payroll execute, ${LARGE.toLocaleString('en')} recipients, all paid: chain transactions`,
        String(whole.transactions),
        `fewest possible at the whole gas cap: ${fewest}`,
        (whole.transactions / fewest).toFixed(2),
      ],
      [
        `payroll execute, ${LARGE.toLocaleString('en')} recipients, all paid: wall time, ms`,
        whole.ms.toFixed(0),
        `${EXECUTED} recipients: ${hundred.ms.toFixed(0)} ms (x${LARGE / EXECUTED} the recipients)`,
        (whole.ms / hundred.ms).toFixed(1),
      ],
    ];
  } finally {
    await t.close();
  }
}
