import { useEmployerId } from '../../session';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, ApiError, type ComplianceSummary as Overview, type Schema } from '../../lib/api';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { useApi } from '../../hooks';
import { BlockedWallets, type Blocklist } from './components/BlockedWallets';
import { errorText, Hex, NoEmployer, Pill } from './components/common';
import { usePageTitle } from '../../company';

type Explanation = Schema<'AiComplianceExplanation'>;
type NextAction = Explanation['actions'][number];

/** Compliance: the summary, each employee's latest screening (with an AI explanation), the blocklist and the audit log. */
export function Compliance() {
  usePageTitle('Compliance');
  const employerId = useEmployerId();
  return (
    <>
      <h1>Compliance</h1>
      {employerId ? <ComplianceBody employerId={employerId} /> : <NoEmployer />}
    </>
  );
}

function ComplianceBody({ employerId }: { employerId: string }) {
  const overview = useApi<Overview>(`/api/employers/${employerId}/compliance`);
  const blocklist = useApi<Blocklist>(`/api/employers/${employerId}/blocklist`);
  const reloadAll = () => {
    overview.reload();
    blocklist.reload();
  };
  return (
    <>
      <Async loaded={overview}>
        {(data) => (
          <>
            <Summary summary={data.summary} sanctions={data.sanctions_list} />
            <Screening employerId={employerId} employees={data.employees} />
          </>
        )}
      </Async>
      <BlockedWallets employerId={employerId} overview={overview.data} blocklist={blocklist} onChanged={reloadAll} />
      <Async loaded={overview}>{(data) => <Events events={data.audit_log} />}</Async>
    </>
  );
}

function Summary({ summary, sanctions }: { summary: Overview['summary']; sanctions: Overview['sanctions_list'] }) {
  const items: [string, number, 'ok' | 'err' | 'warn' | undefined][] = [
    ['Employees', summary.employees, undefined],
    ['Checked', summary.checked, undefined],
    ['Clear', summary.clear, 'ok'],
    ['Blocked', summary.blocked, summary.blocked > 0 ? 'err' : undefined],
    ['Not checked yet', summary.unchecked, summary.unchecked > 0 ? 'warn' : undefined],
    ['Blocklist entries', summary.blocklist_entries, undefined],
  ];
  return (
    <section aria-labelledby="summary-heading" className="card">
      <h2 id="summary-heading">Summary</h2>
      <dl className="grid more-stats">
        {items.map(([label, value, tone]) => (
          <div key={label} className="more-stat-box">
            <dt className="muted">{label}</dt>
            <dd className={`stat${tone ? ` more-tone-${tone}` : ''}`}>{value}</dd>
          </div>
        ))}
      </dl>
      {sanctions && (
        <p className="muted" data-testid="sanctions-list">
          Screened against OFAC's SDN list{sanctions.list_date ? ` of ${sanctions.list_date}` : ''}: {sanctions.entries} wallet addresses, in force since{' '}
          {new Date(sanctions.synced_at).toLocaleString()} ({sanctions.source}).
        </p>
      )}
    </section>
  );
}

function Screening({ employerId, employees }: { employerId: string; employees: Overview['employees'] }) {
  const [explaining, setExplaining] = useState<string | null>(null);
  const [result, setResult] = useState<{ name: string; data?: Explanation; error?: string } | null>(null);

  const explain = async (name: string, wallet: string) => {
    setExplaining(wallet);
    setResult({ name });
    try {
      const data = await api<Explanation>('/api/ai/compliance-explain', { method: 'POST', body: { employerId, walletAddress: wallet } });
      setResult({ name, data });
    } catch (reason) {
      setResult({ name, error: reason instanceof ApiError && reason.code === 'AI_NOT_CONFIGURED' ? 'Explanations need an AI provider key on the server.' : errorText(reason) });
    } finally {
      setExplaining(null);
    }
  };

  return (
    <section aria-labelledby="screening-heading" className="card">
      <h2 id="screening-heading">Employee screening</h2>
      {employees.length === 0 ? (
        <Empty>No employees yet.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="more-table">
            <caption className="more-sr">Each employee's latest compliance check</caption>
            <thead>
              <tr>
                <th scope="col">Employee</th>
                <th scope="col">Wallet</th>
                <th scope="col">Latest result</th>
                <th scope="col">Checked</th>
                <th scope="col">Manual review</th>
                <th scope="col">Blocked now</th>
                <th scope="col">
                  <span className="more-sr">Explain</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {employees.map((e) => (
                <tr key={e.id}>
                  <th scope="row" data-label="Employee">
                    {e.full_name}
                  </th>
                  <td data-label="Wallet">{e.wallet_address ? <Hex value={e.wallet_address} /> : <span className="muted">No wallet</span>}</td>
                  <td data-label="Latest result">
                    {e.latest_result === null ? <Pill>Not checked</Pill> : <Pill tone={e.latest_result === 'CLEAR' ? 'ok' : 'err'}>{e.latest_result === 'CLEAR' ? 'Clear' : 'Blocked'}</Pill>}
                  </td>
                  <td data-label="Checked">{formatDate(e.latest_checked_at)}</td>
                  <td data-label="Manual review">{e.manual_review_status === 'none' ? '—' : <Pill tone={e.manual_review_status === 'approved' ? 'ok' : e.manual_review_status === 'rejected' ? 'err' : 'warn'}>{e.manual_review_status}</Pill>}</td>
                  <td data-label="Blocked now">{e.blocked_now ? <span className="more-tone-err">{e.blocked_now}</span> : 'No'}</td>
                  <td data-label="Explain">
                    {e.wallet_address && (
                      <button type="button" className="button secondary" disabled={explaining !== null} aria-label={`Explain ${e.full_name}'s compliance status`} onClick={() => void explain(e.full_name, e.wallet_address!)}>
                        {explaining === e.wallet_address ? 'Explaining…' : 'Explain'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div aria-live="polite">{result && <ExplanationPanel name={result.name} data={result.data} error={result.error} onClose={() => setResult(null)} />}</div>
    </section>
  );
}

function ExplanationPanel({ name, data, error, onClose }: { name: string; data?: Explanation; error?: string; onClose: () => void }) {
  return (
    <div className="more-panel" role="region" aria-label={`Explanation for ${name}`}>
      <div className="row more-spread">
        <h3>Explanation: {name}</h3>
        <button type="button" className="icon-button" aria-label="Close the explanation" onClick={onClose}>
          ×
        </button>
      </div>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : !data ? (
        <p className="muted">
          <span className="spinner" aria-hidden="true" /> Asking for an explanation…
        </p>
      ) : (
        <>
          <p>
            <Pill tone={data.status === 'CLEARED' ? 'ok' : data.status === 'BLOCKED' ? 'err' : 'warn'}>{data.status === 'CLEARED' ? 'Cleared' : data.status === 'BLOCKED' ? 'Blocked' : 'Unknown'}</Pill>{' '}
            <span className="more-mono more-break">{data.wallet_address}</span>
            {data.checked_at && <span className="muted"> · checked {formatDate(data.checked_at)}</span>}
          </p>
          <p className="more-prewrap">{data.explanation}</p>
          {data.reasons.length > 0 && (
            <>
              <h4>Reasons</h4>
              <ul>
                {data.reasons.map((r, i) => (
                  <li key={i}>{r}</li>
                ))}
              </ul>
            </>
          )}
          {data.recommended_actions.length > 0 && (
            <>
              <h4>Recommended actions</h4>
              <ul>
                {data.recommended_actions.map((r, i) => (
                  <li key={i}>{r}</li>
                ))}
              </ul>
            </>
          )}
          {data.actions.length > 0 && (
            <p className="row" aria-label="Next steps">
              {data.actions.map((action) => (
                <ActionLink key={`${action.kind}-${action.employee_id ?? ''}`} action={action} />
              ))}
            </p>
          )}
          <p className="muted more-small">{data.source === 'model' ? 'Written by an AI model from the screening record.' : 'Written from the screening rules (no AI model).'}</p>
        </>
      )}
    </div>
  );
}

/** An explanation's next step as a link into the web app (the blocklist is further down this page). */
function ActionLink({ action }: { action: NextAction }) {
  switch (action.kind) {
    case 'open_employee':
      return action.employee_id ? (
        <Link className="button secondary" to={`/dashboard/team/${action.employee_id}`}>
          {action.label}
        </Link>
      ) : null;
    case 'run_payroll':
      return (
        <Link className="button secondary" to="/dashboard/payroll/new">
          {action.label}
        </Link>
      );
    case 'review_blocklist':
      return (
        <button type="button" className="button secondary" onClick={() => focusSection('blocked-heading')}>
          {action.label}
        </button>
      );
  }
}

/** Scrolls to a section of this page and moves the keyboard focus to its heading. */
function focusSection(headingId: string) {
  const heading = document.getElementById(headingId);
  if (!heading) return;
  heading.setAttribute('tabindex', '-1');
  heading.scrollIntoView({ behavior: 'smooth', block: 'start' });
  heading.focus({ preventScroll: true });
}

const ACTOR_LABELS: Record<string, string> = { user: 'User', admin: 'Platform admin', agent: 'Agent', system: 'System' };

function Events({ events }: { events: Overview['audit_log'] }) {
  return (
    <section aria-labelledby="events-heading" className="card">
      <h2 id="events-heading">Events</h2>
      <p className="muted">The latest 50 entries of the audit log, newest first.</p>
      {events.length === 0 ? (
        <Empty>No events yet.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="more-table">
            <caption className="more-sr">Compliance and audit events</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">By</th>
                <th scope="col">Target</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id}>
                  <td data-label="When">{formatDate(event.created_at)}</td>
                  <td data-label="Event" className="more-mono">
                    {event.action}
                  </td>
                  <td data-label="By">{ACTOR_LABELS[event.actor_kind] ?? event.actor_kind}</td>
                  <td data-label="Target">{event.target_type ? `${event.target_type}${event.target_id ? ` ${event.target_id.slice(0, 8)}` : ''}` : '—'}</td>
                  <td data-label="Details" className="more-details">
                    {Object.keys(event.details).length === 0 ? '—' : <code className="more-break">{JSON.stringify(event.details)}</code>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
