import { useEmployerId } from '../../session';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { Async } from '../../components/States';
import { formatDate, shortAddress } from '../../lib/format';
import { formatUsd, normaliseAmountInput, toUnits, UNITS } from '../../lib/money';
import { useApi, type Loaded } from '../../hooks';
import { BalanceHistoryCard, balanceHistoryPath, type BalanceHistoryData } from './components/BalanceHistory';
import { NeedsEmployer } from './components/CreateCompany';
import { fundTreasuryFromFaucet } from './components/faucet';
import { StatusPill } from './components/StatusPill';
import type { Column } from '../../components/DataTable';
import { PaymentsCard, paymentDate, type Transaction } from './components/TeamMemberSections';
import { TreasuryStats } from './components/TreasuryStats';
import type { DevNetwork, Team, Transactions, Treasury as TreasuryBalances, YieldSummary } from '../../lib/api';
import { usePageTitle } from '../../company';

/** /dashboard/treasury: balances, yield, recent payments, deposit; the faucet in local mode. */
export function Treasury() {
  usePageTitle('Treasury');
  const employerId = useEmployerId();
  if (!employerId) return <NeedsEmployer title="Treasury" />;
  return <TreasuryFor employerId={employerId} />;
}

function TreasuryFor({ employerId }: { employerId: string }) {
  const treasury = useApi<TreasuryBalances>(`/api/employers/${employerId}/treasury`);
  const yieldSummary = useApi<YieldSummary>('/api/yield');
  const devChains = useApi<{ networks: DevNetwork[] }>('/api/dev/chains'); // 404 outside local mode
  const history = useApi<BalanceHistoryData>(balanceHistoryPath(employerId));
  const refresh = () => {
    treasury.reload();
    yieldSummary.reload();
    history.reload();
  };

  return (
    <>
      <div className="row core-space-between">
        <h1>Treasury</h1>
        <Link className="button core-link-button" to="/dashboard/treasury/deposit">
          Deposit
        </Link>
      </div>

      <section className="card" aria-labelledby="balances-heading">
        <h2 id="balances-heading">Balances</h2>
        <Async loaded={treasury} label="Reading the treasury from the chain…">
          {(treasuryData) => (
            <>
              <TreasuryStats treasury={treasuryData} />
              <p className="muted core-break">
                Account #{treasuryData.employer_account_id} on Tempo, holding <code title={treasuryData.token}>{shortAddress(treasuryData.token)}</code>.
              </p>
            </>
          )}
        </Async>
      </section>

      <BalanceHistoryCard history={history} />

      {devChains.data && treasury.data && <FaucetForm accountId={treasury.data.employer_account_id} onFunded={refresh} />}

      <YieldSection yieldSummary={yieldSummary} />
      <RecentPayments employerId={employerId} />
    </>
  );
}

/** The blended APY, a year's projected yield, and the sources the balance is allocated to. */
function YieldSection({ yieldSummary }: { yieldSummary: Loaded<YieldSummary> }) {
  return (
    <section className="card" aria-labelledby="yield-heading">
      <h2 id="yield-heading">Yield</h2>
      <Async loaded={yieldSummary}>
        {(yieldSummaryData) => (
          <>
            <dl className="grid core-stats">
              <div>
                <dt className="muted">Blended APY</dt>
                <dd className="stat">{yieldSummaryData.apy_percent.toFixed(2)}%</dd>
              </div>
              <div>
                <dt className="muted">Projected yearly yield</dt>
                <dd className="stat">{formatUsd(yieldSummaryData.projected_annual_yield_usd)}</dd>
              </div>
            </dl>
            <div className="table-wrap core-scroll">
              <table>
                <caption className="core-caption">Yield sources and your allocation</caption>
                <thead>
                  <tr>
                    <th scope="col">Source</th>
                    <th scope="col" className="num">
                      APY
                    </th>
                    <th scope="col" className="num">
                      Allocation
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {yieldSummaryData.sources.map((s) => (
                    <tr key={s.name}>
                      <td>{s.name.replace(/-/g, ' ')}</td>
                      <td className="num">{(s.apy_bps / 100).toFixed(2)}%</td>
                      <td className="num">{(s.allocation_bps / 100).toFixed(2)}%</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Async>
    </section>
  );
}

/** The latest payments out of the treasury, each linking to its run. */
function RecentPayments({ employerId }: { employerId: string }) {
  const transactions = useApi<Transactions>('/api/transactions?limit=10');
  const team = useApi<Team>(`/api/employers/${employerId}/team?limit=500`);
  const names = new Map(team.data?.employees.map((e) => [e.id, e.full_name]));
  const columns: Column<Transaction>[] = [
    { key: 'date', label: 'Date', value: paymentDate, render: (t) => <Link to={`/dashboard/payroll/${t.payroll_run_id}`}>{formatDate(paymentDate(t))}</Link> },
    { key: 'to', label: 'To', value: (t) => names.get(t.employee_id) ?? t.wallet_address, render: (t) => names.get(t.employee_id) ?? <code>{shortAddress(t.wallet_address)}</code> },
    { key: 'amount', label: 'Amount', num: true, value: (t) => t.amount_usd, render: (t) => formatUsd(t.amount_usd) },
    { key: 'status', label: 'Status', value: (t) => t.status, render: (t) => <StatusPill status={t.status} /> },
  ];
  return <PaymentsCard headingId="treasury-tx-heading" transactions={transactions} columns={columns} empty="No payments from the treasury yet." />;
}

const FAUCET_MAX = 1_000_000n * UNITS;

/** Local mode: mint test tokens and deposit them into the treasury account (see components/faucet.ts). */
function FaucetForm({ accountId, onFunded }: { accountId: string; onFunded: () => void }) {
  const [amount, setAmount] = useState('1000');
  const [error, setError] = useState<string | null>(null);
  const [progress, setProgress] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(null);
    const clean = normaliseAmountInput(amount);
    const units = toUnits(clean);
    if (units === null || units === 0n || units > FAUCET_MAX) {
      setError('Enter an amount more than 0 and at most 1,000,000, with at most 6 decimal places.');
      document.getElementById('faucet-amount')?.focus();
      return;
    }
    setBusy(true);
    try {
      await fundTreasuryFromFaucet(accountId, clean, setProgress);
      setDone(`Deposited ${formatUsd(clean)} into the treasury.`);
      onFunded();
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };

  return (
    <section className="card" aria-labelledby="faucet-heading">
      <h2 id="faucet-heading">Test funds (local mode)</h2>
      <p className="muted">Mints the local chain&apos;s test stablecoin and deposits it into this treasury. Only available on a local server.</p>
      <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate>
        <label htmlFor="faucet-amount">Amount (USD)</label>
        <input
          id="faucet-amount"
          inputMode="decimal"
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'faucet-error' : undefined}
        />
        <button type="submit" className="button" disabled={busy}>
          Fund from faucet
        </button>
      </form>
      {progress && (
        <p role="status">
          <span className="spinner" aria-hidden="true" /> {progress}
        </p>
      )}
      {done && (
        <p className="core-notice" role="status">
          {done}
        </p>
      )}
      {error && (
        <p id="faucet-error" className="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
