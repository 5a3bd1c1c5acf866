import { useEmployerId } from '../../session';
import { useState } from 'react';
import { Link } from 'react-router';
import { DataTable, type Column } from '../../components/DataTable';
import { Async, Empty } from '../../components/States';
import { formatDate, formatDay } from '../../lib/format';
import { formatUsd } from '../../lib/money';
import { formatPeriod } from '../../lib/schedule';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { StatusPill } from './components/StatusPill';
import type { Runs } from '../../lib/api';
import { usePageTitle } from '../../company';

const PAGE_SIZE = 25;


type Run = Runs['runs'][number];

const COLUMNS: Column<Run>[] = [
  {
    key: 'created',
    label: 'Created',
    value: (run) => run.created_at,
    render: (run) => (
      <Link to={`/dashboard/payroll/${run.id}`} aria-label={`Run of ${formatDate(run.created_at)}, ${run.status}`}>
        {formatDate(run.created_at)}
      </Link>
    ),
  },
  { key: 'status', label: 'Status', value: (run) => run.status, render: (run) => <StatusPill status={run.status} /> },
  { key: 'total', label: 'Total', num: true, value: (run) => run.total_amount_usd, render: (run) => formatUsd(run.total_amount_usd) },
  { key: 'people', label: 'People', num: true, value: (run) => run.recipient_count, render: (run) => run.recipient_count },
  { key: 'period', label: 'Pay period', value: (run) => (run.pay_period_start || run.pay_period_end ? `${run.pay_period_start ?? '…'} – ${run.pay_period_end ?? '…'}` : null), render: (run) => formatPeriod(run.pay_period_start, run.pay_period_end) },
  { key: 'pay-date', label: 'Pay date', value: (run) => run.pay_date, render: (run) => formatDay(run.pay_date) },
  { key: 'finalised', label: 'Finalised', value: (run) => run.finalized_at, render: (run) => formatDate(run.finalized_at) },
];

/** /dashboard/payroll: the runs, newest first (refreshed while one is in flight). */
export function Payroll() {
  usePageTitle('Payroll');
  const employerId = useEmployerId();
  const [page, setPage] = useState(1);
  const [refreshMs, setRefreshMs] = useState<number | undefined>(undefined);
  const runs = useApi<Runs>(employerId ? `/api/employers/${employerId}/payroll/runs?page=${page}&limit=${PAGE_SIZE}` : null, { refreshMs });
  const inFlight = runs.data?.runs.some((r) => r.status === 'submitted') ?? false;
  if (inFlight !== (refreshMs !== undefined)) setRefreshMs(inFlight ? 3000 : undefined);
  if (!employerId) return <NeedsEmployer title="Payroll" />;

  return (
    <>
      <div className="row core-space-between">
        <h1>Payroll</h1>
        <Link className="button core-link-button" to="/dashboard/payroll/new">
          New payroll run
        </Link>
      </div>
      <Async loaded={runs}>
        {(data) => {
          if (data.total === 0) {
            return (
              <Empty>
                No payroll runs yet. <Link to="/dashboard/payroll/new">Run your first payroll</Link>.
              </Empty>
            );
          }
          const pages = Math.max(1, Math.ceil(data.total / PAGE_SIZE));
          return (
            <>
              <section className="card" aria-label="Payroll runs">
                <DataTable
                  scroll="core"
                  caption={`${data.total} payroll ${data.total === 1 ? 'run' : 'runs'}`}
                  columns={COLUMNS}
                  rows={data.runs}
                  rowKey={(run) => run.id}
                  tools={{ name: 'payroll runs', paged: pages > 1 }}
                />
              </section>
              {pages > 1 && (
                <nav className="row" aria-label="Pages of runs">
                  <button type="button" className="button secondary" disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
                    Newer
                  </button>
                  <span>
                    Page {page} of {pages}
                  </span>
                  <button type="button" className="button secondary" disabled={page >= pages} onClick={() => setPage((p) => p + 1)}>
                    Older
                  </button>
                </nav>
              )}
            </>
          );
        }}
      </Async>
    </>
  );
}
