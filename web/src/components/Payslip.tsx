import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { download, type Payslip } from '../lib/api';
import { formatUsdExact } from '../lib/money';
import { formatPayDate } from '../lib/schedule';
import { useApi } from '../hooks';
import { StatePill, type Column } from './DataTable';
import { Async } from './States';

/**
 * Payslips for the employer (a run's page) and the employee (the portal): one look, one download.
 * Amounts to the cent, with any sub-cent digits kept (an advance streams by the microdollar), as
 * the PDF prints them: gross less deductions is the net as shown.
 */

const payslipApi = (employeeId: string, runId: string) => `/api/employees/${employeeId}/payslips/${runId}`;

/** The run's pay period as people read it. */
export const period = (slip: Payslip) => (slip.pay_period ? `${slip.pay_period.start ?? '…'} – ${slip.pay_period.end ?? '…'}` : '—');

/** "Download PDF": the PDF is fetched with the bearer and saved under the name the server gives it. */
export function DownloadPayslip({ employeeId, runId, label = 'Download PDF' }: { employeeId: string; runId: string; label?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await download(`${payslipApi(employeeId, runId)}/pdf`, `payslip-${runId.slice(0, 8)}.pdf`);
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="button secondary" onClick={() => void save()} disabled={busy}>
        {busy ? 'Preparing…' : label}
      </button>
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}

/** The columns both payslip tables share; `leading` come first (the employee's name, or the pay date and period), `view` links each row. */
export function payslipColumns(leading: Column<Payslip>[], view: (slip: Payslip) => string): Column<Payslip>[] {
  return [
    ...leading,
    { key: 'gross', label: 'Gross', num: true, value: (s) => Number(s.gross_amount_usd), render: (s) => formatUsdExact(s.gross_amount_usd) },
    { key: 'deductions', label: 'Deductions', num: true, value: (s) => Number(s.advance_deduction_usd), render: (s) => formatUsdExact(s.advance_deduction_usd) },
    { key: 'net', label: 'Net', num: true, value: (s) => Number(s.net_amount_usd), render: (s) => <strong>{formatUsdExact(s.net_amount_usd)}</strong> },
    { key: 'status', label: 'Status', value: (s) => s.status, render: (s) => <StatePill state={s.status} /> },
    {
      key: 'actions',
      label: 'Payslip',
      render: (s) => (
        <span className="row">
          <Link to={view(s)} aria-label={`View the payslip of ${s.employee_name ?? 'this employee'}${s.pay_period ? ` for ${period(s)}` : ''}`}>
            View
          </Link>
          <DownloadPayslip employeeId={s.employee_id} runId={s.run_id} />
        </span>
      ),
    },
  ];
}

/** One payslip, loaded, with its download; `back` leads to where it was opened from. */
export function PayslipPage({ employeeId, runId, back }: { employeeId: string; runId: string; back: ReactNode }) {
  const loaded = useApi<{ payslip: Payslip }>(payslipApi(employeeId, runId));
  return (
    <>
      <p>{back}</p>
      <h1>Payslip</h1>
      <Async loaded={loaded} label="Loading the payslip…">
        {({ payslip }) => <PayslipDetails slip={payslip} />}
      </Async>
    </>
  );
}

function PayslipDetails({ slip }: { slip: Payslip }) {
  return (
    <section className="card" aria-labelledby="payslip-heading" data-testid="payslip">
      <h2 id="payslip-heading" className="row core-space-between">
        <span>
          {slip.employee_name ?? 'Employee'} · {slip.employer_name ?? 'Employer'}
        </span>
        <StatePill state={slip.status} />
      </h2>
      <dl className="core-details">
        <dt>Pay period</dt>
        <dd>{period(slip)}</dd>
        <dt>Pay date</dt>
        <dd>{slip.pay_date ? formatPayDate(slip.pay_date) : 'not paid yet'}</dd>
        <dt>Gross pay</dt>
        <dd>{formatUsdExact(slip.gross_amount_usd)}</dd>
        <dt>Deductions (advances)</dt>
        <dd>{slip.advance_deduction === '0' ? '$0.00' : formatUsdExact(`-${slip.advance_deduction_usd}`)}</dd>
        <dt>Net pay</dt>
        <dd data-testid="payslip-net">
          <strong>{formatUsdExact(slip.net_amount_usd)}</strong>
        </dd>
        <dt>Paid to</dt>
        <dd className="core-break">
          <code>{slip.wallet_address}</code> ({slip.chain === 'tempo' ? 'Tempo' : 'Solana'})
        </dd>
        <dt>Transaction</dt>
        <dd className="core-break">
          {slip.tx_hash ? slip.tx_url ? <a href={slip.tx_url} target="_blank" rel="noreferrer"><code>{slip.tx_hash}</code></a> : <code>{slip.tx_hash}</code> : '—'}
        </dd>
        <dt>Memo</dt>
        <dd className="core-break">{slip.memo ? <code>{slip.memo.memo}</code> : '—'}</dd>
      </dl>
      <DownloadPayslip employeeId={slip.employee_id} runId={slip.run_id} />
    </section>
  );
}
