import { Link } from 'react-router';
import { LiveAmount } from './Balance';
import type { StreamLookup } from './stream';

/**
 * Advances: what the stream has accrued can be claimed to the wallet early. Gap: the only route
 * is the paid `POST /api/mpp/employee/advance` ($0.50, rail A: an MPP payment from a Tempo
 * wallet); there is no bearer (free) employee route, so the portal explains how to claim instead
 * of offering a button that cannot pay.
 */
export function AdvancePanel({ wallet, lookup }: { wallet: string | null; lookup: StreamLookup | null }) {
  const streaming = lookup?.kind === 'stream' && lookup.stream.active && lookup.stream.ratePerSecond > 0n;
  const body = JSON.stringify({ employeeAddress: wallet ?? '0x…' });
  return (
    <section className="card" aria-labelledby="advance-heading">
      <h2 id="advance-heading">Advance</h2>
      {streaming ? (
        <p>
          Available to claim now: <LiveAmount base={0n} lookup={lookup} className="ap-strong" />
        </p>
      ) : (
        <p className="muted">Salary you have earned but not yet been paid can be claimed to your wallet as an advance.</p>
      )}
      <p>
        An advance is a paid request: <strong>$0.50</strong> per claim, paid from a Tempo wallet (MPP). It cannot be paid from this page yet.
      </p>
      <details className="ap-details">
        <summary>How to claim an advance</summary>
        <p>From an MPP-capable wallet or agent, send your sign-in token as <code>X-Identity-Token</code>:</p>
        <pre className="ap-pre">{`POST /api/mpp/employee/advance\n${body}`}</pre>
        <p className="muted">
          Agents using the MCP server call the <code>svc_employee_advance</code> tool. Claimed advances appear in your <Link to="/portal/activity">activity</Link>.
        </p>
      </details>
    </section>
  );
}
