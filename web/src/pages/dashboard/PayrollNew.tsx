import { useEmployerId } from '../../session';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, newIdempotencyKey } from '../../lib/api';
import { ErrorState, Loading } from '../../components/States';
import { shortAddress } from '../../lib/format';
import { formatBaseUnits, formatUsd, fromUnits, monthlyUnits, normaliseAmountInput, toUnits } from '../../lib/money';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { CsvImport, type CsvItem } from './components/CsvImport';
import { PreflightError } from './components/PreflightError';
import { StatusPill } from './components/StatusPill';
import type { ComplianceSummary, Employee, Employer, PayrollRun, Team, Treasury } from './components/types';

/** Why payroll cannot pay this employee now (the server's own rules), or null. */
function unpayableReason(e: Employee): string | null {
  if (e.status !== 'active') return 'removed';
  if (e.payroll_paused) return 'payroll paused';
  if (e.manual_review_status === 'pending') return 'new wallet awaiting your review';
  if (e.manual_review_status === 'rejected') return 'wallet rejected in review';
  if (!e.wallet_address) return 'no wallet address';
  return null;
}

interface Line {
  selected: boolean;
  amount: string;
}

interface Prepared {
  payroll_run_id: string;
  total_amount_usd: string;
  recipient_count: number;
  calldata: { chain_id: number; to: string; data: string; function: string };
}

/** /dashboard/payroll/new: choose (or import) → preview with pre-flight checks → submit. */
export function PayrollNew() {
  const employerId = useEmployerId();
  if (!employerId) return <NeedsEmployer title="New payroll run" />;
  return <PayrollNewFor employerId={employerId} />;
}

function PayrollNewFor({ employerId }: { employerId: string }) {
  const team = useApi<Team>(`/api/employers/${employerId}/team?limit=500`);
  const [employer, setEmployer] = useState<Employer | null>(null);
  const [employerError, setEmployerError] = useState<Error | null>(null);
  useEffect(() => {
    // No GET /api/employers/{id}: the create-or-return POST answers the caller's employer (the body is ignored when one exists).
    let live = true;
    api<Employer>('/api/employers', { method: 'POST', body: { name: 'existing employer' } })
      .then((e) => live && setEmployer(e))
      .catch((reason: Error) => live && setEmployerError(reason));
    return () => {
      live = false;
    };
  }, []);

  return (
    <>
      <p>
        <Link to="/dashboard/payroll">← Payroll</Link>
      </p>
      <h1>New payroll run</h1>
      {team.error || employerError ? (
        <ErrorState error={(team.error ?? employerError)!} onRetry={team.reload} />
      ) : !team.data || !employer ? (
        <Loading />
      ) : (
        <Wizard employerId={employerId} employees={team.data.employees} signsItself={employer.admin_wallet !== null && employer.id === employerId} adminWallet={employer.admin_wallet} />
      )}
    </>
  );
}

const STEPS = ['Choose who is paid', 'Preview and checks', 'Sign and submit'];

function Wizard({ employerId, employees, signsItself, adminWallet }: { employerId: string; employees: Employee[]; signsItself: boolean; adminWallet: string | null }) {
  const navigate = useNavigate();
  const [step, setStep] = useState(0);
  const [mode, setMode] = useState<'team' | 'csv'>('team');
  const [lines, setLines] = useState<Record<string, Line>>(() =>
    Object.fromEntries(employees.map((e) => [e.id, { selected: unpayableReason(e) === null, amount: fromUnits(monthlyUnits(e.annual_salary_usd)) }])),
  );
  const [periodStart, setPeriodStart] = useState('');
  const [periodEnd, setPeriodEnd] = useState('');
  const [stepError, setStepError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [submitError, setSubmitError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const [prepared, setPrepared] = useState<Prepared | null>(null);
  const [decision, setDecision] = useState<{ key: string; id: string } | null>(null);
  const [txHash, setTxHash] = useState('');
  const headingRef = useRef<HTMLHeadingElement>(null);
  const names = new Map(employees.map((e) => [e.id, e.full_name]));

  useEffect(() => {
    headingRef.current?.focus();
  }, [step]);

  const chosen = employees.filter((e) => lines[e.id]?.selected && unpayableReason(e) === null);
  const amounts = chosen.map((e) => ({ employee: e, units: toUnits(normaliseAmountInput(lines[e.id]!.amount)) }));
  const total = amounts.reduce((sum, a) => sum + (a.units ?? 0n), 0n);
  const items = amounts.map((a) => ({ employee_id: a.employee.id, amount_usd: fromUnits(a.units ?? 0n) }));
  const planKey = JSON.stringify([items, periodStart, periodEnd]);

  const goPreview = (event: FormEvent) => {
    event.preventDefault();
    setStepError(null);
    if (chosen.length === 0) return setStepError('Choose at least one employee to pay.');
    const bad = amounts.find((a) => a.units === null || a.units === 0n);
    if (bad) {
      document.getElementById(`amount-${bad.employee.id}`)?.focus();
      return setStepError(`The amount for ${bad.employee.full_name} must be more than zero, with at most 6 decimal places.`);
    }
    if (periodStart && periodEnd && periodEnd < periodStart) return setStepError('The pay period cannot end before it starts.');
    setSubmitError(null);
    setStep(1);
  };

  const applyCsv = (csvItems: CsvItem[]) => {
    const byId = new Map(csvItems.map((i) => [i.employee_id, i.amount]));
    setLines((current) => Object.fromEntries(Object.entries(current).map(([id, line]) => [id, byId.has(id) ? { selected: true, amount: byId.get(id)! } : { ...line, selected: false }])));
    setMode('team');
    setNotice(`Imported ${csvItems.length} ${csvItems.length === 1 ? 'row' : 'rows'} from the CSV file. Review the amounts below.`);
  };

  /** Owner-signed treasuries: prepare the draft and its calldata (the server's pre-flight runs here). */
  const prepare = async () => {
    setBusy(true);
    setSubmitError(null);
    try {
      const body = { items, ...(periodStart ? { pay_period_start: periodStart } : {}), ...(periodEnd ? { pay_period_end: periodEnd } : {}) };
      setPrepared(await api<Prepared>(`/api/employers/${employerId}/payroll`, { method: 'POST', body, headers: { 'idempotency-key': newIdempotencyKey() } }));
      setStep(2);
    } catch (reason) {
      setSubmitError(reason as Error);
    } finally {
      setBusy(false);
    }
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSubmitError(null);
    try {
      if (signsItself && prepared) {
        const run = await api<PayrollRun>(`/api/employers/${employerId}/payroll/${prepared.payroll_run_id}/submit`, { method: 'POST', body: { tx_hash: txHash.trim() } });
        navigate(`/dashboard/payroll/${run.id}`);
        return;
      }
      // The service's agent wallet executes: record the plan (a decision), then execute it once.
      let current = decision?.key === planKey ? decision : null;
      if (!current) {
        const made = await api<{ decision_id: string }>(`/api/employers/${employerId}/payroll/decisions`, {
          method: 'POST',
          body: { items: items.map((i) => ({ ...i, chain: 'tempo' })) },
          headers: { 'idempotency-key': newIdempotencyKey() },
        });
        current = { key: planKey, id: made.decision_id };
        setDecision(current);
      }
      const done = await api<{ payroll_run_id: string }>('/api/x402/payroll/execute', { method: 'POST', body: { employer_id: employerId, decision_id: current.id } });
      navigate(`/dashboard/payroll/${done.payroll_run_id}`);
    } catch (reason) {
      setSubmitError(reason as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <ol className="core-steps" aria-label="Steps">
        {STEPS.map((label, i) => (
          <li key={label} aria-current={i === step ? 'step' : undefined} className={i === step ? 'core-step-current' : i < step ? 'core-step-done' : ''}>
            <span className="core-step-number" aria-hidden="true">
              {i + 1}
            </span>{' '}
            {label}
          </li>
        ))}
      </ol>

      {step === 0 && (
        <form className="card" onSubmit={goPreview} noValidate>
          <h2 ref={headingRef} tabIndex={-1}>
            Step 1 of 3: choose who is paid
          </h2>
          <div className="row" role="radiogroup" aria-label="How to choose">
            <label className="core-radio">
              <input type="radio" name="source" checked={mode === 'team'} onChange={() => setMode('team')} /> Choose employees
            </label>
            <label className="core-radio">
              <input type="radio" name="source" checked={mode === 'csv'} onChange={() => setMode('csv')} /> Import a CSV
            </label>
          </div>
          {notice && (
            <p className="core-notice" role="status">
              {notice}
            </p>
          )}
          {mode === 'csv' ? (
            <CsvImport employerId={employerId} employees={employees} onApply={applyCsv} />
          ) : employees.length === 0 ? (
            <p>
              You have no employees yet. <Link to="/dashboard/team/add">Add an employee</Link> first.
            </p>
          ) : (
            <>
              <div className="row">
                <button type="button" className="link-button" onClick={() => setLines((c) => Object.fromEntries(employees.map((e) => [e.id, { ...c[e.id]!, selected: unpayableReason(e) === null }])))}>
                  Select everyone payable
                </button>
                <button type="button" className="link-button" onClick={() => setLines((c) => Object.fromEntries(Object.entries(c).map(([id, l]) => [id, { ...l, selected: false }])))}>
                  Select none
                </button>
              </div>
              <div className="table-wrap core-scroll">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Pay</th>
                      <th scope="col">Employee</th>
                      <th scope="col">Amount (USD)</th>
                    </tr>
                  </thead>
                  <tbody>
                    {employees.map((e) => {
                      const reason = unpayableReason(e);
                      const line = lines[e.id]!;
                      return (
                        <tr key={e.id} className={reason ? 'core-row-disabled' : undefined}>
                          <td>
                            <input
                              type="checkbox"
                              className="core-checkbox"
                              id={`pay-${e.id}`}
                              checked={line.selected && !reason}
                              disabled={reason !== null}
                              onChange={(ev) => setLines((c) => ({ ...c, [e.id]: { ...line, selected: ev.target.checked } }))}
                              aria-label={`Pay ${e.full_name}`}
                            />
                          </td>
                          <td>
                            <label htmlFor={`pay-${e.id}`} className="core-inline-label">
                              {e.full_name}
                            </label>
                            <span className="muted core-hint">{reason ? `Cannot be paid: ${reason}` : `${shortAddress(e.wallet_address!)} · ${formatUsd(e.annual_salary_usd)} a year`}</span>
                          </td>
                          <td>
                            <input
                              id={`amount-${e.id}`}
                              className="core-amount"
                              inputMode="decimal"
                              aria-label={`Amount for ${e.full_name} (USD)`}
                              value={line.amount}
                              disabled={reason !== null || !line.selected}
                              onChange={(ev) => setLines((c) => ({ ...c, [e.id]: { ...line, amount: ev.target.value } }))}
                            />
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </>
          )}
          {signsItself && (
          <fieldset className="core-fieldset">
            <legend>Pay period (optional)</legend>
            <div className="row">
              <div>
                <label htmlFor="period-start">Pay period start</label>
                <input id="period-start" type="date" value={periodStart} onChange={(e) => setPeriodStart(e.target.value)} />
              </div>
              <div>
                <label htmlFor="period-end">Pay period end</label>
                <input id="period-end" type="date" value={periodEnd} onChange={(e) => setPeriodEnd(e.target.value)} />
              </div>
            </div>
          </fieldset>
          )}
          {mode === 'team' && (
            <>
              <p>
                <strong>
                  {chosen.length} {chosen.length === 1 ? 'person' : 'people'}, {formatBaseUnits(total)}
                </strong>
              </p>
              {stepError && (
                <p className="field-error" role="alert">
                  {stepError}
                </p>
              )}
              <button type="submit" className="button">
                Continue to preview
              </button>
            </>
          )}
        </form>
      )}

      {step === 1 && (
        <Preview
          employerId={employerId}
          headingRef={headingRef}
          amounts={amounts.map((a) => ({ employee: a.employee, units: a.units ?? 0n }))}
          total={total}
          period={[periodStart, periodEnd]}
          signsItself={signsItself}
          busy={busy}
          error={submitError}
          names={names}
          onBack={() => setStep(0)}
          onNext={() => (signsItself ? void prepare() : (setSubmitError(null), setStep(2)))}
        />
      )}

      {step === 2 && (
        <form className="card" onSubmit={(e) => void submit(e)} noValidate>
          <h2 ref={headingRef} tabIndex={-1}>
            Step 3 of 3: sign and submit
          </h2>
          <p>
            {chosen.length} {chosen.length === 1 ? 'payment' : 'payments'}, {formatBaseUnits(total)} in total, from your treasury on Tempo.
          </p>
          {signsItself && prepared ? (
            <>
              <p>
                Your treasury is administered by your own wallet <code>{shortAddress(adminWallet ?? '')}</code>. Sign and send this call from it, then paste the transaction hash. The draft run is{' '}
                <Link to={`/dashboard/payroll/${prepared.payroll_run_id}`}>saved</Link>.
              </p>
              <dl className="core-details">
                <dt>Chain id</dt>
                <dd>{prepared.calldata.chain_id}</dd>
                <dt>To (treasury contract)</dt>
                <dd className="core-break">
                  <code>{prepared.calldata.to}</code>
                </dd>
                <dt>Function</dt>
                <dd className="core-break">
                  <code>{prepared.calldata.function}</code>
                </dd>
              </dl>
              <label htmlFor="calldata">Calldata</label>
              <textarea id="calldata" readOnly rows={4} value={prepared.calldata.data} className="core-mono" />
              <div>
                <button type="button" className="button secondary" onClick={() => void navigator.clipboard?.writeText(prepared.calldata.data)}>
                  Copy calldata
                </button>
              </div>
              <label htmlFor="tx-hash">Transaction hash</label>
              <input id="tx-hash" value={txHash} onChange={(e) => setTxHash(e.target.value)} placeholder="0x…" autoComplete="off" spellCheck={false} aria-describedby="tx-hash-hint" />
              <p id="tx-hash-hint" className="muted core-hint">
                The 0x-prefixed hash of the transaction you sent.
              </p>
            </>
          ) : (
            <p className="muted">The service&apos;s agent wallet sends the batch in one transaction; each payment carries its memo. You can follow it on the run&apos;s page.</p>
          )}
          {submitError && <PreflightError error={submitError} names={names} />}
          <div className="row">
            <button type="button" className="button secondary" onClick={() => setStep(signsItself ? 0 : 1)} disabled={busy}>
              Back
            </button>
            <button type="submit" className="button" disabled={busy || (signsItself && !/^0x[0-9a-fA-F]{64}$/.test(txHash.trim()))}>
              Submit payroll
            </button>
            {busy && (
              <span role="status">
                <span className="spinner" aria-hidden="true" /> Submitting…
              </span>
            )}
          </div>
        </form>
      )}
    </>
  );
}

function Preview({
  employerId,
  headingRef,
  amounts,
  total,
  period,
  signsItself,
  busy,
  error,
  names,
  onBack,
  onNext,
}: {
  employerId: string;
  headingRef: React.RefObject<HTMLHeadingElement | null>;
  amounts: { employee: Employee; units: bigint }[];
  total: bigint;
  period: [string, string];
  signsItself: boolean;
  busy: boolean;
  error: Error | null;
  names: Map<string, string>;
  onBack: () => void;
  onNext: () => void;
}) {
  const treasury = useApi<Treasury>(`/api/employers/${employerId}/treasury`);
  const compliance = useApi<ComplianceSummary>(`/api/employers/${employerId}/compliance`);
  const screening = new Map(compliance.data?.employees.map((e) => [e.id, e]));
  const available = treasury.data ? (toUnits(treasury.data.available_usd) ?? 0n) : null;
  const short = available !== null && available < total;
  const blocked = amounts.filter((a) => screening.get(a.employee.id)?.blocked_now);
  const problems = (short ? 1 : 0) + blocked.length;

  return (
    <section className="card" aria-labelledby="preview-heading">
      <h2 id="preview-heading" ref={headingRef} tabIndex={-1}>
        Step 2 of 3: preview and checks
      </h2>
      <div className="table-wrap core-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Employee</th>
              <th scope="col">Wallet</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col">Compliance</th>
            </tr>
          </thead>
          <tbody>
            {amounts.map(({ employee, units }) => {
              const screened = screening.get(employee.id);
              return (
                <tr key={employee.id}>
                  <td>{employee.full_name}</td>
                  <td>
                    <code title={employee.wallet_address ?? ''}>{shortAddress(employee.wallet_address ?? '')}</code>
                  </td>
                  <td className="num">{formatBaseUnits(units)}</td>
                  <td>
                    {compliance.error ? (
                      <span className="muted">unknown</span>
                    ) : !compliance.data ? (
                      <span className="muted">checking…</span>
                    ) : screened?.blocked_now ? (
                      <StatusPill status="blocked" />
                    ) : screened?.latest_result ? (
                      <StatusPill status={screened.latest_result} label={screened.latest_result.toLowerCase()} />
                    ) : (
                      <span className="muted">screened on submit</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row" colSpan={2}>
                Total
              </th>
              <td className="num">
                <strong>{formatBaseUnits(total)}</strong>
              </td>
              <td />
            </tr>
          </tfoot>
        </table>
      </div>
      {(period[0] || period[1]) && (
        <p>
          Pay period: {period[0] || '…'} – {period[1] || '…'}
        </p>
      )}

      <h3 className="core-h3">Pre-flight checks</h3>
      <ul className="core-checks">
        <li>
          {treasury.error ? (
            <span className="field-error">Treasury balance could not be read: {treasury.error.message}</span>
          ) : available === null ? (
            'Reading the treasury…'
          ) : short ? (
            <span className="field-error">
              ✗ Insufficient treasury: {formatBaseUnits(available)} available, {formatBaseUnits(total)} required. <Link to="/dashboard/treasury">Fund the treasury</Link>.
            </span>
          ) : (
            <span>✓ Treasury covers it: {formatBaseUnits(available)} available.</span>
          )}
        </li>
        <li>
          {compliance.error ? (
            <span className="muted">Compliance status could not be read ({compliance.error.message}); every wallet is screened on submit.</span>
          ) : !compliance.data ? (
            'Reading compliance status…'
          ) : blocked.length > 0 ? (
            <span className="field-error">
              ✗ Recipient blocked: {blocked.map((b) => `${b.employee.full_name} (${screening.get(b.employee.id)?.blocked_now})`).join(', ')}. Go back and leave them out, or review them in <Link to="/dashboard/compliance">Compliance</Link>.
            </span>
          ) : (
            <span>✓ No recipient is on a blocklist or the sanctions list (checked again on submit).</span>
          )}
        </li>
        <li>✓ Every recipient is payable (active, not paused, wallet recorded and approved).</li>
      </ul>
      {error && <PreflightError error={error} names={names} />}
      <div className="row">
        <button type="button" className="button secondary" onClick={onBack} disabled={busy}>
          Back
        </button>
        <button type="button" className="button" onClick={onNext} disabled={busy || problems > 0}>
          {signsItself ? 'Prepare the transaction' : 'Continue'}
        </button>
        {busy && (
          <span role="status">
            <span className="spinner" aria-hidden="true" /> Checking…
          </span>
        )}
      </div>
    </section>
  );
}
