import { useEmployerId } from '../../session';
import { Link } from 'react-router';
import { Async, Empty, ErrorState, Loading } from '../../components/States';
import { formatDate, formatDay } from '../../lib/format';
import { formatBaseUnits, formatUsd, monthlyUnits, toUnits } from '../../lib/money';
import { useApi, type Loaded } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { PayrollCostsCard } from './components/PayrollCosts';
import { RunwayChart } from './components/RunwayChart';
import { StatusPill } from './components/StatusPill';
import { TreasuryStats } from './components/TreasuryStats';
import type { Runs, Team, Transactions, Treasury } from '../../lib/api';
import { useCompany, usePageTitle } from '../../company';
import { formatPeriod, type ExpectedPay } from '../../lib/schedule';

/** /dashboard: the treasury at a glance, the next payroll, recent activity and the runway. */
export function Overview() {
  usePageTitle('Overview');
  const employerId = useEmployerId();
  if (!employerId) return <NeedsEmployer title="Overview" />;
  return <OverviewFor employerId={employerId} />;
}

function OverviewFor({ employerId }: { employerId: string }) {
  const treasury = useApi<Treasury>(`/api/employers/${employerId}/treasury`);
  const team = useApi<Team>(`/api/employers/${employerId}/team?limit=500`);
  const runs = useApi<Runs>(`/api/employers/${employerId}/payroll/runs?limit=5`);
  const transactions = useApi<Transactions>('/api/transactions?limit=5');

  const payable = team.data?.employees.filter((e) => e.status === 'active' && !e.payroll_paused) ?? [];
  const monthly = payable.reduce((sum, e) => sum + monthlyUnits(e.annual_salary_usd), 0n);
  const inFlight = runs.data?.runs.find((r) => r.status === 'draft' || r.status === 'submitted');
  const lastConfirmed = runs.data?.runs.find((r) => r.status === 'confirmed');
  const names = new Map(team.data?.employees.map((e) => [e.id, e.full_name]));

  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="treasury-heading" className="card">
        <div className="row core-space-between">
          <h2 id="treasury-heading">Treasury</h2>
          <Link to="/dashboard/treasury">Treasury details</Link>
        </div>
        <Async loaded={treasury} label="Loading the treasury…">
          {(treasuryData) => (
            <TreasuryStats treasury={treasuryData} />
          )}
        </Async>
      </section>

      <div className="grid core-two">
        <section aria-labelledby="next-heading" className="card">
          <h2 id="next-heading">Next payroll</h2>
          {runs.error || team.error ? (
            <ErrorState error={(runs.error ?? team.error)!} onRetry={() => (runs.reload(), team.reload())} />
          ) : !runs.data || !team.data ? (
            <Loading />
          ) : inFlight ? (
            <div className="stack">
              <NextPayDate employerId={employerId} monthly={monthly} activeCount={payable.length} />
              <p>
                A run of {formatUsd(inFlight.total_amount_usd)} to {inFlight.recipient_count} {inFlight.recipient_count === 1 ? 'person' : 'people'} is <StatusPill status={inFlight.status} />.
              </p>
              <Link to={`/dashboard/payroll/${inFlight.id}`}>Open the run</Link>
            </div>
          ) : (
            <div className="stack">
              <NextPayDate employerId={employerId} monthly={monthly} activeCount={payable.length} />
              <p className="muted">{lastConfirmed ? `Last paid ${formatDate(lastConfirmed.finalized_at ?? lastConfirmed.created_at)}.` : 'No payroll has been paid yet.'}</p>
              <Link className="button core-link-button" to="/dashboard/payroll/new">
                New payroll run
              </Link>
            </div>
          )}
        </section>

        <section aria-labelledby="runway-heading" className="card">
          <h2 id="runway-heading">Runway</h2>
          {treasury.error || team.error ? (
            <ErrorState error={(treasury.error ?? team.error)!} onRetry={() => (treasury.reload(), team.reload())} />
          ) : !treasury.data || !team.data ? (
            <Loading />
          ) : (
            <RunwayChart availableUnits={toUnits(treasury.data.available_usd) ?? 0n} monthlyUnits={monthly} />
          )}
        </section>
      </div>

      <PayrollCostsCard employerId={employerId} />

      <RecentActivity runs={runs} transactions={transactions} names={names} />
    </>
  );
}

/** The next scheduled pay date and what it pays: the server's expected pay for the period over the payable employees. */
function NextPayDate({ employerId, monthly, activeCount }: { employerId: string; monthly: bigint; activeCount: number }) {
  const { employer, error, reload } = useCompany();
  const schedule = employer?.pay_schedule ?? null;
  const expected = useApi<ExpectedPay>(schedule ? `/api/employers/${employerId}/payroll/expected` : null);
  if (error) return <ErrorState error={error} onRetry={reload} />;
  if (!employer) return <Loading />;
  if (!schedule) {
    return (
      <>
        <p>
          <span className="stat">{formatBaseUnits(monthly)}</span>
          <br />
          <span className="muted">
            a month for {activeCount} active {activeCount === 1 ? 'employee' : 'employees'}
          </span>
        </p>
        <p>
          No pay schedule yet — <Link to="/dashboard/settings">set one in Settings</Link>.
        </p>
      </>
    );
  }
  if (expected.error) return <ErrorState error={expected.error} onRetry={expected.reload} />;
  if (!expected.data) return <Loading />;
  const payable = expected.data.employees.filter((e) => e.payable).length;
  return (
    <p>
      <span className="muted">Next pay date</span>
      <br />
      <span className="stat" data-testid="next-pay-date">
        {formatDay(schedule.next_pay_date)}
      </span>
      <br />
      <span data-testid="next-pay-amount">{formatUsd(expected.data.total_usd)}</span>{' '}
      <span className="muted">
        for {payable} payable {payable === 1 ? 'employee' : 'employees'}, {formatPeriod(schedule.next_period.start, schedule.next_period.end)}
      </span>
    </p>
  );
}

/** The latest payroll runs and payments side by side. */
function RecentActivity({ runs, transactions, names }: { runs: Loaded<Runs>; transactions: Loaded<Transactions>; names: Map<string, string> }) {
  return (
    <section aria-labelledby="activity-heading" className="card">
      <h2 id="activity-heading">Recent activity</h2>
      <div className="grid core-two">
        <div>
          <h3 className="core-h3">Payroll runs</h3>
          <Async loaded={runs}>
            {(runsData) =>
              runsData.runs.length === 0 ? (
                <Empty>
                  No payroll runs yet. <Link to="/dashboard/payroll/new">Start one</Link>.
                </Empty>
              ) : (
                <ul className="core-list">
                  {runsData.runs.map((run) => (
                    <li key={run.id}>
                      <Link to={`/dashboard/payroll/${run.id}`}>{formatUsd(run.total_amount_usd)}</Link> to {run.recipient_count}{' '}
                      <StatusPill status={run.status} /> <span className="muted">{formatDate(run.created_at)}</span>
                    </li>
                  ))}
                </ul>
              )
            }
          </Async>
        </div>
        <div>
          <h3 className="core-h3">Payments</h3>
          <Async loaded={transactions}>
            {(transactionsData) =>
              transactionsData.transactions.length === 0 ? (
                <Empty>No payments yet.</Empty>
              ) : (
                <ul className="core-list">
                  {transactionsData.transactions.map((t) => (
                    <li key={t.id}>
                      {formatUsd(t.amount_usd)} to {names.get(t.employee_id) ?? 'a former employee'} <StatusPill status={t.status} />{' '}
                      <span className="muted">{formatDate(t.finalized_at ?? t.created_at)}</span>
                    </li>
                  ))}
                </ul>
              )
            }
          </Async>
        </div>
      </div>
    </section>
  );
}
