import QRCode from 'qrcode';
import { useEffect, useState } from 'react';
import { Async, Loading } from '../../../components/States';
import { useApi } from '../../../hooks';
import type { Schema } from '../../../lib/api';

/** `GET /api/portal/deposit-address`. */
type DepositAddress = Schema<'DepositAddress'>;

const NETWORK_NAMES: Record<string, string> = { 'eip155:4217': 'Tempo' };

/** The employee's own deposit address (spec 2.13): copyable, as a QR code, with the TIP-20-only warning. */
export function DepositAddressPanel({ employeeId }: { employeeId: string }) {
  const loaded = useApi<DepositAddress>(`/api/portal/deposit-address?employeeId=${employeeId}`);
  return (
    <section className="card" aria-labelledby="deposit-heading">
      <h2 id="deposit-heading">Deposit address</h2>
      <Async loaded={loaded} label="Reading your deposit address…">
        {(loadedData) =>
          !loadedData.available || !loadedData.address ? (
            <p className="muted">Your employer has not set up deposit addresses yet. Once they do, your personal address appears here.</p>
          ) : (
            <AddressBody data={loadedData} address={loadedData.address} />
          )
        }
      </Async>
    </section>
  );
}

function AddressBody({ data, address }: { data: DepositAddress; address: string }) {
  const [qr, setQr] = useState<string | null>(null);
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(address, { margin: 1, width: 200, errorCorrectionLevel: 'M' })
      .then((url) => live && setQr(url))
      .catch(() => live && setQr(null));
    return () => {
      live = false;
    };
  }, [address]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(address);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
  };

  return (
    <div className="ap-deposit">
      <div className="ap-qr">{qr ? <img src={qr} width={200} height={200} alt={`QR code of your deposit address ${address}`} data-testid="deposit-qr" /> : <Loading label="Drawing the QR code…" />}</div>
      <div className="ap-deposit-text">
        <p>
          Send stablecoins on {NETWORK_NAMES[data.network] ?? data.network} to this address; they are credited to you.
        </p>
        <p>
          <code className="ap-address" data-testid="deposit-address">
            {address}
          </code>
        </p>
        <div className="row">
          <button type="button" className="button secondary" onClick={() => void copy()}>
            Copy address
          </button>
          <span role="status" aria-live="polite" className="muted">
            {copied === 'copied' ? 'Copied.' : copied === 'failed' ? 'Copying is not allowed here: select the address instead.' : ''}
          </span>
        </div>
        <p className="ap-warning" role="note" data-testid="deposit-warning">
          <strong>Only TIP-20 transfers.</strong> {data.warning}
        </p>
      </div>
    </div>
  );
}
