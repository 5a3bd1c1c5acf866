import { useEmployerId } from '../../session';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { formatUsdExact, usdToUnits } from '../../lib/money';
import { useApi } from '../../hooks';
import { Pager } from '../../components/Pager';
import { StackedTable, type Column } from '../../components/DataTable';
import { errorText, Hex, NoEmployer, Pill } from './components/common';
import { RAIL_NAMES } from './components/openapi';
import { api, ApiError, type Schema } from '../../lib/api';
import { usePageTitle } from '../../company';

type Receipts = Schema<'MppReceipts'>;
type Sessions = Schema<'MppSessions'>;
type Credits = Schema<'CardCredits'>;
type Credit = Schema<'CardCredit'>;

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

/** The credit columns; `action` is the row's refund button (it needs the section's state). */
const creditColumns = (action: (c: Credit) => ReactNode): Column<Credit>[] => [
  { key: 'bought', label: 'Bought', render: (c) => formatDate(c.created_at) },
  { key: 'route', label: 'Route', className: 'more-mono', render: (c) => c.route },
  { key: 'status', label: 'Status', render: (c) => <Pill tone={creditTone(c.status)}>{c.status}</Pill> },
  { key: 'funded', label: 'Top-up', num: true, render: (c) => formatUsdExact(c.funded_usd) },
  { key: 'drawn', label: 'Drawn', num: true, render: (c) => formatUsdExact(c.drawn_usd) },
  { key: 'left', label: 'Left', num: true, render: (c) => formatUsdExact(c.remaining_usd) },
  { key: 'refunded', label: 'Refunded', num: true, render: (c) => formatUsdExact(c.refunded_usd) },
  { key: 'charge', label: 'Card charge', render: (c) => <Hex value={c.payment_intent} /> },
  { key: 'action', label: 'Refund', render: action },
];

/** Billing: the receipts of paid calls made on the employer's behalf, its MPP sessions and its card credits. */
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
          <CreditsSection employerId={employerId} />
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

/** Open and refunding credits hold money, as an open session does; refunded is a credit's normal end, not a failure as a refunded receipt is. */
const creditTone = (status: Credit['status']): 'ok' | 'warn' => (status === 'refunded' ? 'ok' : 'warn');

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

function CreditsSection({ employerId }: { employerId: string }) {
  const [page, setPage] = useState(1);
  const loaded = useApi<Credits>(`/api/employers/${employerId}/card-credits?page=${page}&limit=${LIMIT}`);
  const refund = useCreditRefund(employerId, loaded.reload);
  const columns = creditColumns((c) =>
    c.status === 'open' && usdToUnits(c.remaining_usd) > 0n ? (
      <button type="button" className="button secondary" disabled={refund.busy !== null} onClick={() => void refund.send(c)}>
        {refund.busy === c.id ? 'Refunding…' : `Refund ${formatUsdExact(c.remaining_usd)}`}
      </button>
    ) : null,
  );
  return (
    <section className="card" aria-labelledby="credits-heading">
      <h2 id="credits-heading">Card credit</h2>
      <p className="muted">
        Where a paid call costs less than the card processor&apos;s $0.50 minimum, paying by card buys a $0.50 credit that later calls draw on; what is left can go back to the card.
      </p>
      {refund.notice && (
        <p className="core-notice" role="status">
          {refund.notice}
        </p>
      )}
      {refund.error && (
        <p className="field-error" role="alert">
          {refund.error}
        </p>
      )}
      <Async loaded={loaded}>
        {(data) =>
          data.credits.length === 0 ? (
            <Empty>No card credits yet.</Empty>
          ) : (
            <>
              <StackedTable caption={`Card credits, page ${data.page}`} columns={columns} rows={data.credits} rowKey={(c) => c.id} />
              <Pager page={data.page} limit={data.limit} total={data.total} onPage={setPage} label="Card credits" />
            </>
          )
        }
      </Async>
    </section>
  );
}

/** Sends a credit's remainder back to its card, one at a time; the list reloads after, whatever the answer. */
function useCreditRefund(employerId: string, reload: () => void) {
  const [busy, setBusy] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const send = async (credit: Credit) => {
    setBusy(credit.id);
    setNotice(null);
    setError(null);
    try {
      const after = await api<Credit>(`/api/employers/${employerId}/card-credits/${credit.id}/refund`, { method: 'POST' });
      // 202 (`refunding`): the processor has not confirmed yet; the service finishes the refund.
      setNotice(after.status === 'refunding' ? `Refund on its way: ${formatUsdExact(credit.remaining_usd)} goes back to the card once the processor confirms it.` : `Refunded ${formatUsdExact(after.refunded_usd)} to the card.`);
    } catch (reason) {
      setError(reason instanceof ApiError && reason.code === 'CREDIT_EMPTY' ? 'Nothing is left of this credit to refund: a call drew it, or it went back to the card already.' : errorText(reason));
    } finally {
      setBusy(null);
      reload();
    }
  };
  return { busy, notice, error, send };
}
