import { useEffect, useId, useState } from 'react';
import { Link } from 'react-router';
import { api, type Schema } from '../../../lib/api';

export type RunWarning = Schema<'PayrollRunWarning'>;

/** The server's warnings for the run as drafted (POST .../payroll/checks): a period already paid, recent payments, outliers. */
export function useRunWarnings(employerId: string, body: unknown): { warnings: RunWarning[] | null; error: Error | null } {
  const [state, setState] = useState<{ warnings: RunWarning[] | null; error: Error | null }>({ warnings: null, error: null });
  const key = JSON.stringify(body);
  useEffect(() => {
    let live = true;
    setState({ warnings: null, error: null });
    api<Schema<'PayrollRunChecks'>>(`/api/employers/${employerId}/payroll/checks`, { method: 'POST', body: JSON.parse(key) as unknown })
      .then((found) => live && setState({ warnings: found.warnings, error: null }))
      .catch((reason: unknown) => live && setState({ warnings: null, error: reason instanceof Error ? reason : new Error(String(reason)) }));
    return () => {
      live = false;
    };
  }, [employerId, key]);
  return state;
}

/** The warnings, each with a link to the run it is about, and the owner's explicit confirmation to go on. */
export function RunWarningsPanel({ warnings, error, confirmed, onConfirm }: { warnings: RunWarning[] | null; error: Error | null; confirmed: boolean; onConfirm: (confirmed: boolean) => void }) {
  const id = useId();
  if (error) return <p className="field-error">The run could not be checked for duplicates and outliers: {error.message}</p>;
  if (!warnings) return <p className="muted">Checking for an already paid period, recent payments and unusual amounts…</p>;
  if (warnings.length === 0) return <p>✓ No overlap with a paid period, no recent payment to these employees, no unusual amount.</p>;
  return (
    <div className="core-warning" role="region" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`} className="core-h3">
        Look at {warnings.length === 1 ? 'this' : `these ${warnings.length}`} before paying
      </h3>
      <ul data-testid="run-warnings">
        {warnings.map((w, index) => (
          <li key={`${w.code}-${w.employee_id ?? ''}-${w.run_id ?? ''}-${index}`}>
            {w.message} {w.run_id && <Link to={`/dashboard/payroll/${w.run_id}`}>See that run</Link>}
          </li>
        ))}
      </ul>
      <label className="run-warning-confirm">
        <input type="checkbox" checked={confirmed} onChange={(e) => onConfirm(e.target.checked)} /> I have checked {warnings.length === 1 ? 'this' : 'these'} and want to pay this run
      </label>
    </div>
  );
}
