import { shortAddress } from '../../../lib/format';
import { formatUsd } from '../../../lib/money';
import { ApiError } from '../../../lib/api';

/** The payroll routes' 422s (and other failures), spelled out: who cannot be paid and why. */
export function PreflightError({ error, names }: { error: Error; names: Map<string, string> }) {
  const details = error instanceof ApiError ? error.details : {};
  const code = error instanceof ApiError ? error.code : null;
  const who = (id: string) => names.get(id) ?? shortAddress(id);
  const title =
    code === 'INSUFFICIENT_TREASURY'
      ? 'The treasury does not cover this run'
      : code === 'RECIPIENT_BLOCKED'
        ? 'Blocked recipients'
        : code === 'EMPLOYEE_NOT_PAYABLE'
          ? 'Employees who cannot be paid now'
          : 'The run was refused';
  const blocked = Array.isArray(details.blocked_wallets) ? (details.blocked_wallets as { employee_id: string; wallet_address: string; reason: string }[]) : [];
  const unpayable = Array.isArray(details.employees) ? (details.employees as { employee_id: string; reason: string }[]) : [];
  return (
    <div className="core-error-box" role="alert">
      <h3 className="core-h3">
        {title}
        {code && <span className="muted"> ({code})</span>}
      </h3>
      <p>{error.message}</p>
      {code === 'INSUFFICIENT_TREASURY' && typeof details.available_usd === 'string' && typeof details.required_usd === 'string' && (
        <p>
          Available {formatUsd(details.available_usd)}, required {formatUsd(details.required_usd)}. Fund the treasury or lower the amounts.
        </p>
      )}
      {blocked.length > 0 && (
        <ul>
          {blocked.map((b) => (
            <li key={b.employee_id}>
              {who(b.employee_id)} (<code>{shortAddress(b.wallet_address)}</code>): {b.reason}
            </li>
          ))}
        </ul>
      )}
      {unpayable.length > 0 && (
        <ul>
          {unpayable.map((u) => (
            <li key={u.employee_id}>
              {who(u.employee_id)}: {u.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
