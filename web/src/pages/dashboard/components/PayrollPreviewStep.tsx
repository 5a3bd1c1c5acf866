import { useState } from 'react';
import { Link } from 'react-router';
import { useApi, type Loaded } from '../../../hooks';
import { shortAddress } from '../../../lib/format';
import { formatBaseUnits, toUnits } from '../../../lib/money';
import type { StepProps } from './PayrollChooseStep';
import { PreflightError } from './PreflightError';
import { RunWarningsPanel, useRunWarnings } from './RunWarnings';
import { StatusPill } from './StatusPill';
import type { ComplianceSummary, Treasury } from '../../../lib/api';
import { formatDay } from '../../../lib/format';
import { formatPeriod } from '../../../lib/schedule';

/** Step 2 of the payroll wizard: the chosen payments beside the treasury balance and compliance status. */
export function PayrollPreviewStep({ employerId, signsItself, draft, headingRef }: Omit<StepProps, 'employees'>) {
  const { total, busy, names, submitError: error } = draft;
  const amounts = draft.amounts.map((a) => ({ employee: a.employee, units: a.units ?? 0n }));
  const period = [draft.periodStart, draft.periodEnd];
  const onBack = () => draft.setStep(0);
  const onNext = () => (signsItself ? void draft.prepare() : draft.goTo(2));
  const treasury = useApi<Treasury>(`/api/employers/${employerId}/treasury`);
  const compliance = useApi<ComplianceSummary>(`/api/employers/${employerId}/compliance`);
  const screening = new Map(compliance.data?.employees.map((e) => [e.id, e]));
  const available = treasury.data ? (toUnits(treasury.data.available_usd) ?? 0n) : null;
  const short = available !== null && available < total;
  const blocked = amounts.flatMap(({ employee }) => {
    const reason = screening.get(employee.id)?.blocked_now;
    return reason ? [{ name: employee.full_name, reason }] : [];
  });
  const problems = (short ? 1 : 0) + blocked.length;
  const checks = useRunWarnings(employerId, draft.checkBody);
  const [confirmed, setConfirmed] = useState(false);
  // Nothing to confirm, or the owner confirmed; a failed check does not stop a run the server checks again.
  const cleared = checks.error !== null || (checks.warnings !== null && (checks.warnings.length === 0 || confirmed));

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
      {(period[0] || period[1]) && <p>Pay period: {formatPeriod(period[0], period[1])}</p>}
      {draft.payDate && <p>Pay date: {formatDay(draft.payDate)}</p>}

      <PreflightChecks treasury={treasury} compliance={compliance} available={available} short={short} total={total} blocked={blocked} />
      <RunWarningsPanel warnings={checks.warnings} error={checks.error} confirmed={confirmed} onConfirm={setConfirmed} />
      {error && <PreflightError error={error} names={names} />}
      <div className="row">
        <button type="button" className="button secondary" onClick={onBack} disabled={busy}>
          Back
        </button>
        <button type="button" className="button" onClick={onNext} disabled={busy || problems > 0 || !cleared}>
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

/** The pre-flight checks the page can make before the server's own: treasury balance, blocked recipients. */
function PreflightChecks({ treasury, compliance, available, short, total, blocked }: {
  treasury: Loaded<Treasury>;
  compliance: Loaded<ComplianceSummary>;
  available: bigint | null;
  short: boolean;
  total: bigint;
  blocked: { name: string; reason: string }[];
}) {
  return (
    <>
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
              ✗ Recipient blocked: {blocked.map((b) => `${b.name} (${b.reason})`).join(', ')}. Go back and leave them out, or review them in <Link to="/dashboard/compliance">Compliance</Link>.
            </span>
          ) : (
            <span>✓ No recipient is on a blocklist or the sanctions list (checked again on submit).</span>
          )}
        </li>
        <li>✓ Every recipient is payable (active, not paused, wallet recorded and approved).</li>
      </ul>
    </>
  );
}
