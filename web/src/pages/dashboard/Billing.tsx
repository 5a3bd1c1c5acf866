import { useEmployerId } from '../../session';
import { useState } from 'react';
import { Link } from 'react-router';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { formatUsdExact } from '../../lib/money';
import { useApi } from '../../hooks';
import { Pager } from '../../components/Pager';
import { StackedTable, type Column } from '../../components/DataTable';
import { Hex, NoEmployer, Pill } from './components/common';
import { RAIL_NAMES } from './components/openapi';
import type { Schema } from '../../lib/api';
import { usePageTitle } from '../../company';

type Receipts = Schema<'MppReceipts'>;
type Sessions = Schema<'MppSessions'>;

const LIMIT = 25;
const railName = (rail: string) => RAIL_NAMES[rail] ?? (rail === 'card' ? 'Card' : rail);

const RECEIPT_COLUMNS: Column<Receipts['receipts'][number]>[] = [
  { key: 'when', label: 'When', render: (r) => formatDate(r.created_at) },
  { key: 'route', label: 'Route', className: 'more-mono', render: (r) => r.route },
  { key: 'rail', label: 'Rail', render: (r) => railName(r.rail) },
  { key: 'amount', label: 'Amount', num: true, render: (r) => formatUsdExact(r.amount_usd) },
  { key: 'status', label: 'Status', render: (r) => <Pill tone={statusTone(r.status)}>{r.status}</Pill> },
  { key: 'payer', label: 'Payer', render: (r) => <Hex value={r.payer} /> },
  { key: 'reference', label: 'Reference', render: (r) => <Hex value={r.reference} /> },
];

const SESSION_COLUMNS: Column<Sessions['sessions'][number]>[] = [
  { key: 'channel', label: 'Channel', render: (s) => <Hex value={s.channel_id} /> },
  { key: 'route', label: 'Route', className: 'more-mono', render: (s) => s.route },
  { key: 'status', label: 'Status', render: (s) => <Pill tone={statusTone(s.status)}>{s.status}</Pill> },
  { key: 'deposit', label: 'Deposit', num: true, render: (s) => formatUsdExact(s.deposit_usd) },
  { key: 'accepted', label: 'Accepted', num: true, render: (s) => formatUsdExact(s.accepted_usd) },
  { key: 'spent', label: 'Spent', num: true, render: (s) => formatUsdExact(s.spent_usd) },
  { key: 'settled', label: 'Settled', num: true, render: (s) => formatUsdExact(s.settled_usd) },
  { key: 'opened', label: 'Opened', render: (s) => formatDate(s.opened_at) },
  { key: 'last', label: 'Last activity', render: (s) => formatDate(s.closed_at ?? s.updated_at) },
  { key: 'payer', label: 'Payer', render: (s) => <Hex value={s.payer} /> },
];

/** Billing: the receipts of paid calls made on the employer's behalf, and its MPP sessions. */
export function Billing() {
  usePageTitle('Billing');
  const employerId = useEmployerId();
  return (
    <>
      <p className="more-breadcrumb">
        <Link to="/dashboard/settings">Settings</Link> / Billing
      </p>
      <h1>Billing</h1>
      {employerId ? (
        <>
          <ReceiptsSection employerId={employerId} />
          <SessionsSection employerId={employerId} />
        </>
      ) : (
        <NoEmployer />
      )}
    </>
  );
}

function statusTone(status: string): 'ok' | 'warn' | 'err' | undefined {
  if (['settled', 'closed', 'paid'].includes(status)) return 'ok';
  if (['failed', 'refunded', 'error'].includes(status)) return 'err';
  if (['pending', 'open', 'closing'].includes(status)) return 'warn';
  return undefined;
}

function ReceiptsSection({ employerId }: { employerId: string }) {
  const [page, setPage] = useState(1);
  const loaded = useApi<Receipts>(`/api/employers/${employerId}/mpp-receipts?page=${page}&limit=${LIMIT}`);
  return (
    <section className="card" aria-labelledby="receipts-heading">
      <h2 id="receipts-heading">MPP receipts</h2>
      <p className="muted">Paid API calls made on your behalf (by you, your agent key or your agents), newest first.</p>
      <Async loaded={loaded}>
        {(data) => (
          <>
            {data.totals.length > 0 && (
              <ul className="grid more-plain-list" aria-label="Settled totals per rail">
                {data.totals.map((t) => (
                  <li key={t.rail} className="more-stat-box">
                    <span className="muted">{railName(t.rail)}</span>
                    <span className="stat">{formatUsdExact(t.amount_usd)}</span>
                    <span className="muted">
                      {t.count} {t.count === 1 ? 'payment' : 'payments'}
                    </span>
                  </li>
                ))}
              </ul>
            )}
            {data.receipts.length === 0 ? (
              <Empty>No paid calls yet. Receipts appear here once an API call is paid for this employer.</Empty>
            ) : (
              <StackedTable caption={`MPP receipts, page ${data.page}`} columns={RECEIPT_COLUMNS} rows={data.receipts} rowKey={(r) => r.id} />
            )}
            <Pager page={data.page} limit={data.limit} total={data.total} onPage={setPage} label="Receipts" />
          </>
        )}
      </Async>
    </section>
  );
}

function SessionsSection({ employerId }: { employerId: string }) {
  const [page, setPage] = useState(1);
  const loaded = useApi<Sessions>(`/api/employers/${employerId}/mpp-sessions?page=${page}&limit=${LIMIT}`);
  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">MPP sessions</h2>
      <p className="muted">Payment channels opened for per-tick and per-session routes, most recently active first.</p>
      <Async loaded={loaded}>
        {(data) =>
          data.sessions.length === 0 ? (
            <Empty>No MPP sessions yet.</Empty>
          ) : (
            <>
              <StackedTable caption={`MPP sessions, page ${data.page}`} columns={SESSION_COLUMNS} rows={data.sessions} rowKey={(s) => s.channel_id} />
              <Pager page={data.page} limit={data.limit} total={data.total} onPage={setPage} label="Sessions" />
            </>
          )
        }
      </Async>
    </section>
  );
}
