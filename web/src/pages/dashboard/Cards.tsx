import { useEmployerId } from '../../session';
import { ConfirmButton } from '../../components/ConfirmButton';
import { useState } from 'react';
import { api, ApiError, type Employee, type Schema, type Team } from '../../lib/api';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { useApi, type Loaded } from '../../hooks';
import { errorText, NoEmployer, Pill } from './components/common';
import { usePageTitle } from '../../company';

type CardStatus = Schema<'EmployeeCard'>;
type KycLink = Schema<'KycLink'>;

const KYC_LABELS: Record<string, string> = {
  not_started: 'Not started',
  incomplete: 'Incomplete',
  under_review: 'Under review',
  approved: 'Approved',
  rejected: 'Rejected',
};

function kycTone(status: string): 'ok' | 'warn' | 'err' | undefined {
  if (status === 'approved') return 'ok';
  if (status === 'rejected') return 'err';
  if (status === 'not_started') return undefined;
  return 'warn';
}

function cardTone(status: string): 'ok' | 'warn' | 'err' | undefined {
  if (status === 'active') return 'ok';
  if (['frozen', 'suspended', 'inactive'].includes(status)) return 'err';
  return 'warn';
}

/** Cards: every active employee's card status; issue a card (KYC approved) after a confirmation. */
export function Cards() {
  usePageTitle('Cards');
  const employerId = useEmployerId();
  return (
    <>
      <h1>Cards</h1>
      <p className="muted">Spending cards for employees, funded from their wallet. An employee needs an approved identity check (KYC) before a card can be issued.</p>
      {employerId ? <CardList employerId={employerId} /> : <NoEmployer />}
    </>
  );
}

function CardList({ employerId }: { employerId: string }) {
  const team = useApi<Team>(`/api/employers/${employerId}/team?limit=500`);
  return (
    <Async loaded={team}>
      {(data) =>
        data.employees.length === 0 ? (
          <Empty>No employees yet. Add people on the Team page, then issue their cards here.</Empty>
        ) : (
          <div className="table-wrap">
            <table className="more-table">
              <caption className="more-sr">Employees and their cards</caption>
              <thead>
                <tr>
                  <th scope="col">Employee</th>
                  <th scope="col">Identity check</th>
                  <th scope="col">Card</th>
                  <th scope="col">Issued</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {data.employees.map((employee) => (
                  <CardRow key={employee.id} employee={employee} />
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Async>
  );
}

function CardCell({ loaded }: { loaded: Loaded<CardStatus> }) {
  const card = loaded.data?.card ?? null;
  if (loaded.error) return <span className="field-error">Could not load: {loaded.error.message}</span>;
  if (!loaded.data) return <span className="muted">Loading…</span>;
  if (!card) return <span className="muted">No card</span>;
  return (
    <span>
      <Pill tone={cardTone(card.status)}>{card.status}</Pill> {card.last4 ? <span aria-label={`ending ${card.last4}`}>•••• {card.last4}</span> : null}
    </span>
  );
}

function CardRow({ employee }: { employee: Employee }) {
  const loaded = useApi<CardStatus>(`/api/employees/${employee.id}/card`);
  const [kyc, setKyc] = useState<KycLink | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const kycStatus = kyc?.kyc_status ?? employee.kyc_status;
  const card = loaded.data?.card ?? null;

  const issue = async () => {
    setMessage(null);
    try {
      const result = await api<CardStatus>(`/api/employees/${employee.id}/card`, { method: 'POST' });
      setMessage({ ok: true, text: result.card ? `Card ending ${result.card.last4 ?? '····'} is ${result.card.status}.` : 'Card requested.' });
      loaded.reload();
    } catch (reason) {
      const text = reason instanceof ApiError && reason.code === 'KYC_NOT_APPROVED' ? 'The identity check is not approved yet: send the KYC link and try again once it is approved.' : errorText(reason);
      setMessage({ ok: false, text });
    }
  };
  const startKyc = async () => {
    setBusy(true);
    setMessage(null);
    try {
      setKyc(await api<KycLink>(`/api/employees/${employee.id}/kyc`, { method: 'POST' }));
    } catch (reason) {
      setMessage({ ok: false, text: errorText(reason) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <tr>
      <th scope="row" data-label="Employee">
        <span>
          {employee.full_name}
          <span className="muted more-small more-block">{employee.email}</span>
        </span>
      </th>
      <td data-label="Identity check">
        <span>
          <Pill tone={kycTone(kycStatus)}>{KYC_LABELS[kycStatus] ?? kycStatus}</Pill>
          {kyc && (
            <span className="more-small more-block">
              <a href={kyc.kyc_link} target="_blank" rel="noreferrer noopener">
                Open KYC link for {employee.full_name}
              </a>
              {kyc.expires_at && <span className="muted"> (expires {formatDate(kyc.expires_at)})</span>}
            </span>
          )}
        </span>
      </td>
      <td data-label="Card">
        <CardCell loaded={loaded} />
      </td>
      <td data-label="Issued">{card ? formatDate(card.created_at) : '—'}</td>
      <td data-label="Action">
        <div className="stack">
          {card && <span className="muted">Issued</span>}
          {loaded.error && (
            <button type="button" className="button secondary" onClick={loaded.reload}>
              Try again
            </button>
          )}
          {loaded.data && !card && kycStatus === 'approved' && (
            <ConfirmButton
              label={`Issue card to ${employee.full_name}`}
              className="button"
              question={
                <>
                  Issue a card to <strong>{employee.full_name}</strong>? The card spends from their wallet.
                </>
              }
              confirmLabel="Issue card"
              onConfirm={issue}
            />
          )}
          {loaded.data && !card && kycStatus !== 'approved' && (
            <>
              <button type="button" className="button" disabled={busy} onClick={() => void startKyc()}>
                {busy ? 'Working…' : kyc ? 'Refresh identity check' : 'Start identity check'}
              </button>
              <span className="muted">A card can be issued once the identity check is approved.</span>
            </>
          )}
          {message && (
            <p role={message.ok ? 'status' : 'alert'} className={message.ok ? 'more-ok' : 'field-error'}>
              {message.text}
            </p>
          )}
        </div>
      </td>
    </tr>
  );
}
