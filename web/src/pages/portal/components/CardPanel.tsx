import { useState } from 'react';
import { api, type Schema } from '../../../lib/api';
import { Async } from '../../../components/States';
import { formatDate } from '../../../lib/format';
import { useApi } from '../../../hooks';
import { StatePill } from '../../../components/DataTable';

type CardResult = Schema<'EmployeeCard'>;

/** `GET, POST /api/employees/{id}/card`: the card's status, or a request for one. */
export function CardPanel({ employeeId }: { employeeId: string }) {
  const loaded = useApi<CardResult>(`/api/employees/${employeeId}/card`);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const request = async () => {
    setBusy(true);
    setError(null);
    try {
      await api<CardResult>(`/api/employees/${employeeId}/card`, { method: 'POST' });
      loaded.reload();
    } catch (reason) {
      setError(reason instanceof Error ? reason.message : String(reason));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="card-heading">
      <h2 id="card-heading">Card</h2>
      <Async loaded={loaded} label="Reading your card…">
        {(loadedData) =>
          loadedData.card ? (
            <>
              <p className="ap-card-number" aria-label={loadedData.card.last4 ? `Card ending in ${loadedData.card.last4}` : 'Card'}>
                •••• {loadedData.card.last4 ?? '····'}
              </p>
              <p>
                Status: <StatePill state={loadedData.card.status} />
              </p>
              <p className="muted">Issued {formatDate(loadedData.card.created_at)}</p>
            </>
          ) : (
            <>
              <p className="muted">Spend your pay with a card. It needs an approved identity check (KYC), which your employer starts.</p>
              <button type="button" className="button" onClick={() => void request()} disabled={busy}>
                {busy ? 'Requesting…' : 'Request a card'}
              </button>
            </>
          )
        }
      </Async>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
