import { formatUsd } from '../../../lib/money';
import type { Treasury } from '../../../lib/api';

/** Available, locked and total treasury balances. */
export function TreasuryStats({ treasury }: { treasury: Treasury }) {
  return (
    <dl className="grid core-stats">
      <div>
        <dt className="muted">Available</dt>
        <dd className="stat">{formatUsd(treasury.available_usd)}</dd>
      </div>
      <div>
        <dt className="muted">Locked</dt>
        <dd className="stat">{formatUsd(treasury.locked_usd)}</dd>
      </div>
      <div>
        <dt className="muted">Total</dt>
        <dd className="stat">{formatUsd(treasury.total_usd)}</dd>
      </div>
    </dl>
  );
}
