import { useState } from 'react';
import { Link } from 'react-router';
import { api, ApiError, newIdempotencyKey, type Schema } from '../../../lib/api';
import { formatDate } from '../../../lib/format';
import { formatBaseUnits } from '../../../lib/money';
import { LiveAmount } from './Balance';
import type { StreamLookup } from './stream';

type Advance = Schema<'AdvanceResult'>;

/** What the employee reads when a claim is refused: the server's sentence, and when to try again after a 429. */
function refusalText(reason: unknown): string {
  if (reason instanceof ApiError && reason.code === 'RATE_LIMITED') return 'You can take one advance a minute. Try again shortly.';
  return reason instanceof Error ? reason.message : String(reason);
}

/**
 * Advances: what the stream has accrued, claimed to the wallet early through the employee's own
 * free route (`POST /api/employees/{id}/advance`, one a minute). The next payroll deducts it.
 */
export function AdvancePanel({ employeeId, lookup, onClaimed }: { employeeId: string; lookup: StreamLookup | null; onClaimed: () => void }) {
  const streaming = lookup?.kind === 'stream' && lookup.stream.active && lookup.stream.ratePerSecond > 0n;
  const [busy, setBusy] = useState(false);
  const [claimed, setClaimed] = useState<Advance | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function claim() {
    setBusy(true);
    setError(null);
    try {
      // One key per click: a retry of this request after a lost answer gets the same claim back.
      const advance = await api<Advance>(`/api/employees/${employeeId}/advance`, { method: 'POST', headers: { 'Idempotency-Key': newIdempotencyKey() } });
      setClaimed(advance);
      onClaimed();
    } catch (reason) {
      setError(refusalText(reason));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="advance-heading">
      <h2 id="advance-heading">Advance</h2>
      {streaming ? (
        <>
          <p>
            Available to claim now: <LiveAmount base={0n} lookup={lookup} className="ap-strong" testId="advance-available" />
          </p>
          <button type="button" className="button" onClick={claim} disabled={busy}>
            {busy ? 'Claiming…' : 'Claim it to my wallet'}
          </button>
          <p className="muted">Free. What you claim is deducted from your next payroll payment.</p>
        </>
      ) : (
        <p className="muted">Salary you have earned but not yet been paid can be claimed to your wallet as an advance once your salary is streaming.</p>
      )}
      {claimed && (
        <p role="status" data-testid="advance-claimed">
          Claimed <strong>{formatBaseUnits(BigInt(claimed.amount))}</strong> to your wallet on {formatDate(claimed.claimed_at)} (transaction{' '}
          <code className="ap-mono" title={claimed.tx_hash}>
            {claimed.tx_hash.slice(0, 10)}…
          </code>
          ). It appears in your <Link to={`/portal/activity?employee=${employeeId}`}>activity</Link>.
        </p>
      )}
      {error && (
        <p role="alert" className="state-error">
          {error}
        </p>
      )}
    </section>
  );
}
