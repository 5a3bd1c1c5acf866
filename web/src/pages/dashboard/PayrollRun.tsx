import { useEmployerId } from '../../session';
import { useEffect, useState, type FormEvent } from 'react';
import { api, type PayrollRun as PayrollRunRecord, type Payslip, type Team, type Transaction } from '../../lib/api';
import { DataTable } from '../../components/DataTable';
import { PayslipPage, payslipColumns } from '../../components/Payslip';
import { Link, useParams } from 'react-router';
import { Async, Empty, ErrorState, Loading } from '../../components/States';
import { formatDate, formatDay, shortAddress } from '../../lib/format';
import { formatUsd, toUnits } from '../../lib/money';
import { formatPeriod } from '../../lib/schedule';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { decodeMemo, recordHashMatches, type DecodedMemo } from './components/memo';
import { StatusPill } from './components/StatusPill';
import { useRun, type LoadedRun } from './components/useRun';
import { usePageTitle } from '../../company';

/** Which wallet signed the run's batch (`submitted_by`): the owner's own, or the service's on the owner's or their agent's request. */
const SIGNERS: Record<'owner' | 'agent', string> = { owner: 'Your admin wallet', agent: "The service's payroll wallet" };

/** /dashboard/payroll/:runId: the run's status (polled every 3 s until final) and each payment. */
export function PayrollRun() {
  usePageTitle('Payroll run');
  const employerId = useEmployerId();
  const { runId = '' } = useParams();
  const loaded = useRun(employerId, runId);
  const team = useApi<Team>(employerId ? `/api/employers/${employerId}/team?limit=500` : null);
  if (!employerId) return <NeedsEmployer title="Payroll run" />;
  const back = (
    <p>
      <Link to="/dashboard/payroll">← Payroll</Link>
    </p>
  );
  if (!loaded.loaded) {
    return (
      <>
        {back}
        <h1>Payroll run</h1>
        <Loading label="Loading the run…" />
      </>
    );
  }
  if (loaded.error && !loaded.run) {
    return (
      <>
        {back}
        <h1>Payroll run</h1>
        <ErrorState error={loaded.error} onRetry={loaded.reload} />
      </>
    );
  }
  const { run, items } = loaded;
  if (!run) {
    return (
      <>
        {back}
        <h1>Payroll run not found</h1>
        <Empty>There is no payroll run with this id for your company.</Empty>
      </>
    );
  }
  const names = new Map(team.data?.employees.map((e) => [e.id, e.full_name]));

  return (
    <>
      {back}
      <h1>Payroll run</h1>
      <RunStatus employerId={employerId} run={run} loaded={loaded} />
      {run.batches.length > 1 && <RunBatches run={run} />}
      {/* Keyed by status: read again as the run moves (submitted -> confirmed). */}
      <RunPayslips key={run.status} employerId={employerId} run={run} />
      <RunPayments items={items} names={names} />
    </>
  );
}

const PAYSLIP_COLUMNS = payslipColumns(
  [{ key: 'name', label: 'Employee', value: (s) => s.employee_name ?? s.employee_id, render: (s) => s.employee_name ?? shortAddress(s.employee_id) }],
  (s) => `/dashboard/payroll/${s.run_id}/payslips/${s.employee_id}`,
);

/** One payslip per employee once the run is sent (a draft pays nothing, so it has none). */
function RunPayslips({ employerId, run }: { employerId: string; run: PayrollRunRecord }) {
  const payslips = useApi<{ payslips: Payslip[] }>(run.status === 'draft' ? null : `/api/employers/${employerId}/payroll/runs/${run.id}/payslips`);
  return (
    <section className="card" aria-labelledby="payslips-heading">
      <h2 id="payslips-heading">Payslips</h2>
      {run.status === 'draft' ? (
        <Empty>Payslips appear once the run is submitted.</Empty>
      ) : (
        <Async loaded={payslips} label="Loading the payslips…">
          {({ payslips: rows }) =>
            rows.length === 0 ? <Empty>No payslips for this run.</Empty> : <DataTable scroll="core" caption="Payslips, one per employee" columns={PAYSLIP_COLUMNS} rows={rows} rowKey={(s) => s.employee_id} tools={{ name: 'payslips' }} />
          }
        </Async>
      )}
    </section>
  );
}

/** /dashboard/payroll/:runId/payslips/:employeeId: one employee's payslip of the run. */
export function PayrollRunPayslip() {
  usePageTitle('Payslip');
  const { runId = '', employeeId = '' } = useParams();
  return <PayslipPage employeeId={employeeId} runId={runId} back={<Link to={`/dashboard/payroll/${runId}`}>← Payroll run</Link>} />;
}

/** The run's status, its figures, and (for a draft) where the owner records the signed transaction. */
function RunStatus({ employerId, run, loaded }: { employerId: string; run: PayrollRunRecord; loaded: LoadedRun }) {
  return (
    <section className="card" aria-labelledby="run-status-heading">
      <h2 id="run-status-heading" className="row">
        Status{' '}
        <span aria-live="polite" data-testid="run-status">
          <StatusPill status={run.status} />
        </span>
      </h2>
      {!loaded.final && (
        <p className="muted" role="status">
          <span className="spinner" aria-hidden="true" /> {run.status === 'draft' ? 'Waiting for the signed transaction.' : 'Waiting for the chain; this page refreshes every 3 seconds.'}
        </p>
      )}
      {run.failure_reason && (
        <p className="field-error" role="alert">
          {run.status === 'partially_paid' ? 'Partly paid; the rest was not sent' : 'Failed'}: {run.failure_reason}
        </p>
      )}
      {loaded.error && <p className="field-error">Refreshing failed: {loaded.error.message}</p>}
      {run.status === 'draft' && <RecordHash employerId={employerId} runId={run.id} onDone={loaded.reload} />}
      <dl className="core-details">
        <dt>Total</dt>
        <dd>{formatUsd(run.total_amount_usd)}</dd>
        <dt>Recipients</dt>
        <dd>{run.recipient_count}</dd>
        <dt>Pay period</dt>
        <dd>{formatPeriod(run.pay_period_start, run.pay_period_end)}</dd>
        <dt>Pay date</dt>
        <dd>{formatDay(run.pay_date)}</dd>
        <dt>Signed by</dt>
        <dd>{run.submitted_by ? SIGNERS[run.submitted_by] : 'Not signed yet'}</dd>
        <dt>Created</dt>
        <dd>{formatDate(run.created_at)}</dd>
        <dt>Submitted</dt>
        <dd>{formatDate(run.submitted_at)}</dd>
        <dt>Finalised</dt>
        <dd>{formatDate(run.finalized_at)}</dd>
        <dt>{run.batches.length > 1 ? 'First transaction' : 'Transaction'}</dt>
        <dd className="core-break">{run.tx_hash ? <code>{run.tx_hash}</code> : '—'}</dd>
        <dt>Block</dt>
        <dd>{run.block_number ?? '—'}</dd>
        <dt>Run id</dt>
        <dd className="core-break">
          <code>{run.id}</code>
        </dd>
      </dl>
    </section>
  );
}

/** A run paid in several transactions: how many are paid, and each batch's state and transaction. */
function RunBatches({ run }: { run: PayrollRunRecord }) {
  const paid = run.batches.filter((b) => b.status === 'confirmed');
  const paidRecipients = paid.reduce((sum, b) => sum + b.recipient_count, 0);
  return (
    <section className="card" aria-labelledby="run-batches-heading" data-testid="run-batches">
      <h2 id="run-batches-heading">Transactions</h2>
      <div className="more-progress">
        <progress max={run.batches.length} value={paid.length} aria-label="Batches paid" />
        <p>
          {paid.length} of {run.batches.length} transactions paid: {paidRecipients} of {run.recipient_count} people.
        </p>
      </div>
      <div className="table-wrap core-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col" className="num">
                People
              </th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col">Status</th>
              <th scope="col">Transaction</th>
            </tr>
          </thead>
          <tbody>
            {run.batches.map((batch) => (
              <tr key={batch.seq}>
                <td>{batch.seq + 1}</td>
                <td className="num">{batch.recipient_count}</td>
                <td className="num">{formatUsd(batch.total_amount_usd)}</td>
                <td>
                  <StatusPill status={batch.status} />
                  {batch.failure_reason && <span className="muted"> {batch.failure_reason}</span>}
                </td>
                <td>{batch.tx_hash ? <code title={batch.tx_hash}>{shortAddress(batch.tx_hash)}</code> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Each payment of the run, with its wallet, transaction and memo. */
function RunPayments({ items, names }: { items: Transaction[]; names: Map<string, string> }) {
  return (
    <section className="card" aria-labelledby="items-heading">
      <h2 id="items-heading">Payments</h2>
      {items.length === 0 ? (
        <Empty>No payments found for this run.</Empty>
      ) : (
        <ul className="core-items">
          {items.map((item) => (
            <li key={item.id} className="core-item">
              <div className="row core-space-between">
                <strong>{names.get(item.employee_id) ?? shortAddress(item.employee_id)}</strong>
                <span>
                  {formatUsd(item.amount_usd)} <StatusPill status={item.status} />
                </span>
              </div>
              <p className="muted core-break">
                {item.chain === 'tempo' ? 'Tempo' : 'Solana'} wallet <code>{item.wallet_address}</code>
                {item.tx_hash && (
                  <>
                    {' '}
                    · tx <code title={item.tx_hash}>{shortAddress(item.tx_hash)}</code>
                  </>
                )}
              </p>
              {item.reason && <p className="field-error">{item.reason}</p>}
              {item.memo && (
                <details>
                  <summary>Memo</summary>
                  <MemoView item={item} />
                </details>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The raw memo and its fields, decoded in the browser (the layout is public; the decode route is paid). */
function MemoView({ item }: { item: Transaction }) {
  const [decoded, setDecoded] = useState<(DecodedMemo & { bound: boolean | null }) | null>(null);
  useEffect(() => {
    let live = true;
    void (async () => {
      const result = await decodeMemo(item.memo!);
      const bound = result.fields ? await recordHashMatches(result.fields, item.payroll_run_id, item.employee_id, toUnits(item.amount_usd) ?? 0n) : null;
      if (live) setDecoded({ ...result, bound });
    })();
    return () => {
      live = false;
    };
  }, [item]);
  return (
    <div className="core-memo">
      <p className="core-break">
        Raw: <code>{item.memo}</code>
      </p>
      {!decoded ? (
        <Loading label="Decoding…" />
      ) : !decoded.fields ? (
        <p className="muted">These 32 bytes are not one of our payroll memos.</p>
      ) : (
        <dl className="core-details">
          <dt>Type</dt>
          <dd>
            {decoded.fields.type} (version {decoded.fields.version})
          </dd>
          <dt>Pay period</dt>
          <dd>{decoded.fields.pay_period_start || decoded.fields.pay_period_end ? `${decoded.fields.pay_period_start ?? '…'} – ${decoded.fields.pay_period_end ?? '…'}` : 'none'}</dd>
          <dt>Employer tag</dt>
          <dd>
            <code>{decoded.fields.employer_tag}</code>
          </dd>
          <dt>Employee tag</dt>
          <dd>
            <code>{decoded.fields.employee_tag}</code>
          </dd>
          <dt>Cost-centre tag</dt>
          <dd>{decoded.fields.cost_centre_tag ? <code>{decoded.fields.cost_centre_tag}</code> : 'none'}</dd>
          <dt>Record hash</dt>
          <dd className="core-break">
            <code>{decoded.fields.record_hash}</code>{' '}
            {decoded.bound === true ? '(matches this payment)' : decoded.bound === false ? '(does not match this payment)' : ''}
          </dd>
          <dt>Checksum</dt>
          <dd>{decoded.checksumValid === true ? 'valid' : 'not checked (needs a secure context)'}</dd>
        </dl>
      )}
    </div>
  );
}

/** A draft run (owner-signed treasury): record the hash of the batch transaction sent from the admin wallet. */
function RecordHash({ employerId, runId, onDone }: { employerId: string; runId: string; onDone: () => void }) {
  const [hash, setHash] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const valid = /^0x[0-9a-fA-F]{64}$/.test(hash.trim());
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api(`/api/employers/${employerId}/payroll/${runId}/submit`, { method: 'POST', body: { tx_hash: hash.trim() } });
      onDone();
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate>
      <label htmlFor="draft-tx-hash">Transaction hash of the signed batch</label>
      <input id="draft-tx-hash" value={hash} onChange={(e) => setHash(e.target.value)} placeholder="0x…" autoComplete="off" spellCheck={false} aria-describedby={error ? 'draft-tx-error' : undefined} />
      <button type="submit" className="button" disabled={busy || !valid}>
        Record transaction
      </button>
      {error && (
        <p id="draft-tx-error" className="field-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
