import { Link } from 'react-router';
import { shortAddress } from '../../../lib/format';
import { formatBaseUnits } from '../../../lib/money';
import type { StepProps } from './PayrollChooseStep';
import { PreflightError } from './PreflightError';

/** Step 3 of the payroll wizard: sign the prepared call with the owner's wallet, or let the agent wallet send it. */
export function PayrollSubmitStep({ signsItself, adminWallet, draft, headingRef }: Omit<StepProps, 'employees' | 'employerId'> & { adminWallet: string | null }) {
  const { chosen, total, prepared, txHash, setTxHash, busy, submitError, names } = draft;
  // The owner's wallet sends the call itself: submitting needs its transaction's hash first.
  const needsHash = signsItself && !/^0x[0-9a-fA-F]{64}$/.test(txHash.trim());
  return (
    <form className="card" onSubmit={(e) => void draft.submit(e)} noValidate>
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
        <button type="button" className="button secondary" onClick={() => draft.setStep(signsItself ? 0 : 1)} disabled={busy}>
          Back
        </button>
        <button type="submit" className="button" disabled={busy || needsHash} aria-describedby={needsHash ? 'submit-needs-hash' : undefined}>
          Submit payroll
        </button>
        {needsHash && !busy && (
          <span id="submit-needs-hash" className="muted">
            Paste the transaction hash (0x and 64 hex digits) to submit.
          </span>
        )}
        {busy && (
          <span role="status">
            <span className="spinner" aria-hidden="true" /> Submitting…
          </span>
        )}
      </div>
    </form>
  );
}
