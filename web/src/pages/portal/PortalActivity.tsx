import { useCallback, useEffect, useState } from 'react';
import { api, type Schema } from '../../lib/api';
import { Empty, ErrorState, Loading } from '../../components/States';
import { formatDate, shortAddress } from '../../lib/format';
import { formatUsd } from '../../lib/money';
import { StatePill } from '../../components/DataTable';
import { EmployeePicker, recordLabel, useEmployeeChoice } from './components/EmployeePicker';
import { usePageTitle } from '../../company';
import { Link } from 'react-router';
import { portalPayslipPath } from './PortalPayslips';

type ActivityType = Schema<'ActivityCard'>['type'];

/** One card of `GET /api/portal/activity`. */
type ActivityCard = Schema<'ActivityCard'> & { details: { direction?: 'in' | 'out'; employee_id?: string } };

type ActivityPage = Omit<Schema<'ActivityPage'>, 'activity'> & { activity: ActivityCard[] };

const PAGE = 20;
const TITLES: Record<ActivityType, string> = {
  payroll_payment: 'Salary payment',
  advance: 'Advance',
  offramp: 'Cash-out to bank',
  virtual_inflow: 'Deposit received',
};
const DESTINATIONS: Record<string, string> = { ach: 'US bank (ACH)', sepa: 'Euro bank (SEPA)', spei: 'Mexican bank (SPEI)', pix: 'Brazil (PIX)' };

const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/** `/portal/activity`: payroll payments, advances, cash-outs and deposits, newest first, a page at a time. */
export function PortalActivity() {
  usePageTitle('Activity');
  const { ids, employeeId, choose } = useEmployeeChoice({ allowAll: true });
  const [cards, setCards] = useState<ActivityCard[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<Error | null>(null);
  const [generation, setGeneration] = useState(0);

  const load = useCallback(
    async (before: string | null, replace: boolean, isCurrent: () => boolean = () => true) => {
      setLoading(true);
      setError(null);
      try {
        const params = new URLSearchParams({ limit: String(PAGE) });
        if (before) params.set('before', before);
        if (employeeId) params.set('employeeId', employeeId);
        const page = await api<ActivityPage>(`/api/portal/activity?${params.toString()}`);
        if (!isCurrent()) return;
        setCards((current) => (replace ? page.activity : [...current, ...page.activity]));
        setCursor(page.next_cursor);
        setDone(page.next_cursor === null);
      } catch (reason) {
        if (isCurrent()) setError(reason instanceof Error ? reason : new Error(String(reason)));
      } finally {
        if (isCurrent()) setLoading(false);
      }
    },
    [employeeId],
  );

  useEffect(() => {
    let live = true;
    setCards([]);
    setCursor(null);
    setDone(false);
    void load(null, true, () => live);
    return () => {
      live = false;
    };
  }, [load, generation]);

  return (
    <>
      <h1>Activity</h1>
      <div className="ap-panel-head">
        <EmployeePicker ids={ids} employeeId={employeeId} onChoose={choose} allowAll />
        <button type="button" className="button secondary" onClick={() => setGeneration((n) => n + 1)} disabled={loading}>
          Refresh
        </button>
      </div>
      {ids.length === 0 ? (
        <Empty>You are not on an employer's payroll yet.</Empty>
      ) : cards.length === 0 && error ? (
        <ErrorState error={error} onRetry={() => setGeneration((n) => n + 1)} />
      ) : cards.length === 0 && loading ? (
        <Loading />
      ) : cards.length === 0 ? (
        <Empty>No activity yet. Salary payments, advances, cash-outs and deposits show here.</Empty>
      ) : (
        <>
          <ol className="ap-activity" aria-label="Activity, newest first">
            {cards.map((card) => (
              <ActivityItem key={`${card.type}:${card.id}`} card={card} recordName={ids.length > 1 && card.details.employee_id ? recordLabel(ids, card.details.employee_id) : null} />
            ))}
          </ol>
          {error && <ErrorState error={error} onRetry={() => void load(cursor, false)} />}
          {!done && !error && (
            <button type="button" className="button secondary ap-more" onClick={() => void load(cursor, false)} disabled={loading}>
              {loading ? 'Loading…' : 'Load more'}
            </button>
          )}
          {done && <p className="muted ap-end">That is everything.</p>}
        </>
      )}
    </>
  );
}

function ActivityItem({ card, recordName }: { card: ActivityCard; recordName: string | null }) {
  const d = card.details;
  const incoming = d.direction !== 'out';
  const status = str(d.status);
  const txHash = str(d.tx_hash);
  const runId = card.type === 'payroll_payment' ? str(d.run_id) : null;
  const employeeId = str(d.employee_id);
  const lines: string[] = [];
  if (card.type === 'offramp') {
    const destination = str(d.destination_type);
    if (destination) lines.push(`To ${DESTINATIONS[destination] ?? destination}`);
    const failure = str(d.failure_reason);
    if (failure) lines.push(failure);
  }
  if (card.type === 'payroll_payment') {
    const reason = str(d.reason);
    if (reason) lines.push(reason);
    const chain = str(d.chain);
    if (chain) lines.push(`On ${chain === 'tempo' ? 'Tempo' : chain === 'solana' ? 'Solana' : chain}`);
  }
  if (card.type === 'virtual_inflow') {
    const sender = str(d.sender_address);
    if (sender) lines.push(`From ${shortAddress(sender)}`);
  }
  return (
    <li className={`card ap-activity-card ap-activity-${card.type}`} data-testid="activity-card" data-type={card.type}>
      <div className="ap-activity-main">
        <div>
          <h2 className="ap-activity-title">
            {runId && employeeId ? <Link to={portalPayslipPath(runId, employeeId)}>{TITLES[card.type]}</Link> : (TITLES[card.type] ?? card.type)}
          </h2>
          <p className="muted">
            <time dateTime={card.occurred_at}>{formatDate(card.occurred_at)}</time>
            {recordName && <> · {recordName}</>}
          </p>
        </div>
        <p className={incoming ? 'ap-amount ap-amount-in' : 'ap-amount ap-amount-out'}>
          <span className="ap-sr-only">{incoming ? 'Received' : 'Sent'} </span>
          <span aria-hidden="true">{incoming ? '+' : '−'}</span>
          {formatUsd(card.amount)}
        </p>
      </div>
      {(status || lines.length > 0 || txHash) && (
        <p className="ap-activity-extra">
          {status && <StatePill state={status} />} {lines.join(' · ')}
          {txHash && (
            <>
              {' '}
              <span className="muted">
                Transaction{' '}
                <code className="ap-mono" title={txHash}>
                  {shortAddress(txHash)}
                </code>
              </span>
            </>
          )}
        </p>
      )}
    </li>
  );
}
