import { useEmployerId } from '../../session';
import { useState } from 'react';
import { Link } from 'react-router';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { formatUsdExact } from '../../lib/money';
import { useApi } from '../../hooks';
import { Pager } from '../../components/Pager';
import { Hex, NoEmployer, Pill } from './components/common';
import { RAIL_NAMES } from './components/openapi';
import type { Schema } from '../../lib/api';

type Receipts = Schema<'MppReceipts'>;
type Sessions = Schema<'MppSessions'>;

const LIMIT = 25;
const railName = (rail: string) => RAIL_NAMES[rail] ?? (rail === 'card' ? 'Card' : rail);

/** Billing: the receipts of paid calls made on the employer's behalf, and its MPP sessions. */
export function Billing() {
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
              <div className="table-wrap">
                <table className="more-table">
                  <caption className="more-sr">MPP receipts, page {data.page}</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Route</th>
                      <th scope="col">Rail</th>
                      <th scope="col" className="num">
                        Amount
                      </th>
                      <th scope="col">Status</th>
                      <th scope="col">Payer</th>
                      <th scope="col">Reference</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.receipts.map((r) => (
                      <tr key={r.id}>
                        <td data-label="When">{formatDate(r.created_at)}</td>
                        <td data-label="Route" className="more-mono">
                          {r.route}
                        </td>
                        <td data-label="Rail">{railName(r.rail)}</td>
                        <td data-label="Amount" className="num">
                          {formatUsdExact(r.amount_usd)}
                        </td>
                        <td data-label="Status">
                          <Pill tone={statusTone(r.status)}>{r.status}</Pill>
                        </td>
                        <td data-label="Payer">
                          <Hex value={r.payer} />
                        </td>
                        <td data-label="Reference">
                          <Hex value={r.reference} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
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
              <div className="table-wrap">
                <table className="more-table">
                  <caption className="more-sr">MPP sessions, page {data.page}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Channel</th>
                      <th scope="col">Route</th>
                      <th scope="col">Status</th>
                      <th scope="col" className="num">
                        Deposit
                      </th>
                      <th scope="col" className="num">
                        Accepted
                      </th>
                      <th scope="col" className="num">
                        Spent
                      </th>
                      <th scope="col" className="num">
                        Settled
                      </th>
                      <th scope="col">Opened</th>
                      <th scope="col">Last activity</th>
                      <th scope="col">Payer</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.sessions.map((s) => (
                      <tr key={s.channel_id}>
                        <td data-label="Channel">
                          <Hex value={s.channel_id} />
                        </td>
                        <td data-label="Route" className="more-mono">
                          {s.route}
                        </td>
                        <td data-label="Status">
                          <Pill tone={statusTone(s.status)}>{s.status}</Pill>
                        </td>
                        <td data-label="Deposit" className="num">
                          {formatUsdExact(s.deposit_usd)}
                        </td>
                        <td data-label="Accepted" className="num">
                          {formatUsdExact(s.accepted_usd)}
                        </td>
                        <td data-label="Spent" className="num">
                          {formatUsdExact(s.spent_usd)}
                        </td>
                        <td data-label="Settled" className="num">
                          {formatUsdExact(s.settled_usd)}
                        </td>
                        <td data-label="Opened">{formatDate(s.opened_at)}</td>
                        <td data-label="Last activity">{formatDate(s.closed_at ?? s.updated_at)}</td>
                        <td data-label="Payer">
                          <Hex value={s.payer} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager page={data.page} limit={data.limit} total={data.total} onPage={setPage} label="Sessions" />
            </>
          )
        }
      </Async>
    </section>
  );
}
