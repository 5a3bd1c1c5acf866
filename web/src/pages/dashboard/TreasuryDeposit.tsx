import { useEmployerId } from '../../session';
import QRCode from 'qrcode';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { ErrorState, Loading } from '../../components/States';
import { checkFields, rules } from '../../lib/form';
import { formatBaseUnits, normaliseAmountInput, toUnits } from '../../lib/money';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { TEMPO_NETWORK } from './components/faucet';
import type { DevNetwork, Treasury } from '../../lib/api';
import { usePageTitle } from '../../company';

const TEMPO_CHAIN_ID = 4217;
const SELECTOR = { approve: '095ea7b3', deposit: 'e2bbb158' };
const word = (value: bigint) => value.toString(16).padStart(64, '0');
const addressWord = (address: string) => address.toLowerCase().replace(/^0x/, '').padStart(64, '0');

/**
 * /dashboard/treasury/deposit. The treasury is account N of the PayrollTreasury contract, credited
 * by `deposit(accountId, amount)` after an `approve`: a plain transfer to the contract is not
 * credited to any account. The page says so plainly and gives both calls' data.
 */
export function TreasuryDeposit() {
  usePageTitle('Deposit to the treasury');
  const employerId = useEmployerId();
  const treasury = useApi<Treasury>(employerId ? `/api/employers/${employerId}/treasury` : null);
  const devChains = useApi<{ networks: DevNetwork[] }>('/api/dev/chains'); // local mode only
  if (!employerId) return <NeedsEmployer title="Deposit" />;
  const back = (
    <p>
      <Link to="/dashboard/treasury">← Treasury</Link>
    </p>
  );
  if (treasury.error) {
    return (
      <>
        {back}
        <h1>Deposit to the treasury</h1>
        <ErrorState error={treasury.error} onRetry={treasury.reload} />
      </>
    );
  }
  if (!treasury.data || devChains.loading) {
    return (
      <>
        {back}
        <h1>Deposit to the treasury</h1>
        <Loading />
      </>
    );
  }
  const tempo = devChains.data?.networks.find((n) => n.network === TEMPO_NETWORK);
  return (
    <>
      {back}
      <h1>Deposit to the treasury</h1>
      <DepositDetails treasury={treasury.data} contract={tempo?.contracts.payrollTreasury ?? null} chainId={tempo?.chain_id ?? TEMPO_CHAIN_ID} local={Boolean(tempo)} />
    </>
  );
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      <button
        type="button"
        className="button secondary"
        onClick={() => {
          void navigator.clipboard?.writeText(text).then(() => {
            setCopied(true);
            setTimeout(() => setCopied(false), 2000);
          });
        }}
      >
        {label}
      </button>
      <span role="status" className="muted">
        {copied ? 'Copied.' : ''}
      </span>
    </>
  );
}

/** The treasury contract to deposit into, as text and as a QR code (when this server publishes it). */
function ContractAddress({ treasury, contract, chainId, local }: { treasury: Treasury; contract: string | null; chainId: number; local: boolean }) {
  const [qr, setQr] = useState<string | null>(null);
  const [qrError, setQrError] = useState<string | null>(null);

  useEffect(() => {
    if (!contract) return;
    let live = true;
    QRCode.toDataURL(contract, { margin: 1, width: 220, errorCorrectionLevel: 'M' })
      .then((url) => live && setQr(url))
      .catch((error: Error) => live && setQrError(error.message));
    return () => {
      live = false;
    };
  }, [contract]);

  return (
    <section className="card" aria-labelledby="deposit-address-heading">
      <h2 id="deposit-address-heading">Treasury contract</h2>
      {contract ? (
        <div className="core-deposit">
          <div className="core-qr">
            {qr ? <img src={qr} width={220} height={220} alt={`QR code of the treasury contract address ${contract}`} /> : qrError ? <p className="field-error">{qrError}</p> : <Loading label="Drawing the QR code…" />}
          </div>
          <dl className="core-details">
            <dt>Address</dt>
            <dd className="core-break">
              <code data-testid="deposit-address">{contract}</code>
            </dd>
            <dt>Network</dt>
            <dd>
              Tempo{local ? ' (local)' : ''}, eip155:{chainId}
            </dd>
            <dt>Token</dt>
            <dd className="core-break">
              <code>{treasury.token}</code> (6 decimals)
            </dd>
            <dt>Your account id</dt>
            <dd>{treasury.employer_account_id}</dd>
          </dl>
          <div className="row">
            <CopyButton text={contract} label="Copy address" />
          </div>
        </div>
      ) : (
        <p>
          The treasury contract&apos;s address is not published by this server&apos;s API outside local mode. Your account id is <strong>{treasury.employer_account_id}</strong> and the token is{' '}
          <code className="core-break">{treasury.token}</code>; ask your operator for the PayrollTreasury address.
        </p>
      )}
    </section>
  );
}

function DepositDetails({ treasury, contract, chainId, local }: { treasury: Treasury; contract: string | null; chainId: number; local: boolean }) {
  const [amount, setAmount] = useState('1000');
  // The deposit amount, in the words every amount field uses; the calls show only for a valid one.
  const problem = checkFields({ amount }, { amount: { label: 'Amount', rules: [rules.required, rules.usdAmount, rules.moreThanZero] } }).amount;
  const units = problem ? null : toUnits(normaliseAmountInput(amount));

  const approveData = contract && units ? `0x${SELECTOR.approve}${addressWord(contract)}${word(units)}` : null;
  const depositData = units ? `0x${SELECTOR.deposit}${word(BigInt(treasury.employer_account_id))}${word(units)}` : null;

  return (
    <>
      <div className="core-warning" role="note" aria-labelledby="deposit-warning-heading">
        <h2 id="deposit-warning-heading" className="core-h3">
          Send only this token, only on Tempo, only with deposit()
        </h2>
        <p>
          Only the treasury token <code className="core-break">{treasury.token}</code> on Tempo (chain id {chainId}) can be deposited. Any other token or network is lost. A plain
          transfer to the treasury contract is <strong>not</strong> credited to your account: approve the contract, then call <code>deposit({treasury.employer_account_id}, amount)</code>.
        </p>
      </div>

      <ContractAddress treasury={treasury} contract={contract} chainId={chainId} local={local} />

      <section className="card" aria-labelledby="deposit-calls-heading">
        <h2 id="deposit-calls-heading">The two calls</h2>
        <label htmlFor="deposit-amount">Amount to deposit (USD)</label>
        <input
          id="deposit-amount"
          inputMode="decimal"
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          aria-invalid={units === null ? true : undefined}
          aria-describedby={units === null ? 'deposit-amount-error' : undefined}
        />
        {problem && (
          <p id="deposit-amount-error" className="field-error" role="alert">
            {problem}
          </p>
        )}
        {units !== null && (
          <ol className="stack core-calls">
            <li>
              <p>
                On the token <code className="core-break">{treasury.token}</code>: <code>approve(treasury, {units.toString()})</code> ({formatBaseUnits(units)}).
              </p>
              {approveData && (
                <>
                  <label htmlFor="approve-data">Approve calldata</label>
                  <textarea id="approve-data" readOnly rows={3} value={approveData} className="core-mono" />
                </>
              )}
            </li>
            <li>
              <p>
                On the treasury contract: <code>deposit({treasury.employer_account_id}, {units.toString()})</code>.
              </p>
              {depositData && (
                <>
                  <label htmlFor="deposit-data">Deposit calldata</label>
                  <textarea id="deposit-data" readOnly rows={3} value={depositData} className="core-mono" />
                </>
              )}
            </li>
          </ol>
        )}
        {local && (
          <p className="muted">
            On this local server you can skip all this: <Link to="/dashboard/treasury">Fund from faucet</Link> on the treasury page mints and deposits test tokens for you.
          </p>
        )}
      </section>
    </>
  );
}
