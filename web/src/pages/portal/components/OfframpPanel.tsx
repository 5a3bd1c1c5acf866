import { useId, useState } from 'react';
import { api, ApiError, type Schema } from '../../../lib/api';
import { Async, Empty } from '../../../components/States';
import { formatDate, shortAddress } from '../../../lib/format';
import { formatBaseUnits, formatUsd, validAmount } from '../../../lib/money';
import { useApi } from '../../../hooks';
import { DataTable, StatePill, type Column } from '../../../components/DataTable';
import { SendDeposit } from './SendDeposit';

type DestinationType = Schema<'BankAccount'>['destination_type'];
type BankAccount = Schema<'BankAccount'>;
type Offramp = Schema<'OfframpTransfer'>;

const DESTINATIONS: Record<DestinationType, { name: string; fields: { key: string; label: string }[] }> = {
  ach: {
    name: 'US bank (ACH)',
    fields: [
      { key: 'routingNumber', label: 'Routing number' },
      { key: 'accountNumber', label: 'Account number' },
    ],
  },
  sepa: { name: 'Euro bank (SEPA)', fields: [{ key: 'iban', label: 'IBAN' }] },
  spei: { name: 'Mexican bank (SPEI)', fields: [{ key: 'clabe', label: 'CLABE' }] },
  pix: { name: 'Brazil (PIX)', fields: [{ key: 'pixKey', label: 'PIX key' }] },
};

const accountName = (a: BankAccount) => `${a.label ?? DESTINATIONS[a.destination_type].name}${a.last4 ? ` ending ${a.last4}` : ''}`;

const CASH_OUT_COLUMNS: Column<Offramp>[] = [
  { key: 'created', label: 'Created', render: (t) => formatDate(t.created_at) },
  { key: 'amount', label: 'Amount', num: true, render: (t) => formatUsd(t.amount) },
  { key: 'to', label: 'To', render: (t) => DESTINATIONS[t.destination_type]?.name ?? t.destination_type },
  { key: 'status', label: 'Status', render: (t) => <StatePill state={t.status} /> },
];

/** Cash-outs waiting for their deposit, each with the wallets that can send it. */
function AwaitingDeposits({ transfers, onSent }: { transfers: Offramp[]; onSent: () => void }) {
  const waiting = transfers.filter((t) => t.status === 'awaiting_funds' && t.deposit_instructions);
  if (waiting.length === 0) return null;
  return (
    <>
      <h3>Waiting for your deposit</h3>
      <ul className="ap-awaiting">
        {waiting.map((t) => (
          <li key={t.transfer_id}>
            <span>
              {formatUsd(t.amount)} to {DESTINATIONS[t.destination_type]?.name ?? t.destination_type}, created {formatDate(t.created_at)}
            </span>
            <SendDeposit deposit={t.deposit_instructions!} onSent={onSent} />
          </li>
        ))}
      </ul>
    </>
  );
}

const errorText = (reason: unknown) => (reason instanceof Error ? reason.message : String(reason));
const fieldOf = (reason: unknown) => (reason instanceof ApiError ? (reason.field ?? null) : null);

/** Cash out to a bank: registered accounts, the off-ramp form, recent off-ramps (`/api/employees/{id}/...`). */
export function OfframpPanel({ employeeId, walletBalance }: { employeeId: string; walletBalance: bigint | null }) {
  const accounts = useApi<{ bank_accounts: BankAccount[] }>(`/api/employees/${employeeId}/bank-accounts`);
  const transfers = useApi<{ transfers: Offramp[] }>(`/api/employees/${employeeId}/offramps`, { refreshMs: 10_000 });
  const [adding, setAdding] = useState(false);

  return (
    <section className="card" aria-labelledby="offramp-heading">
      <h2 id="offramp-heading">Cash out to your bank</h2>
      <p className="muted">Bank accounts and cash-outs need an approved identity check (KYC), which your employer starts.</p>
      <Async loaded={accounts} label="Reading your bank accounts…">
        {(accountsData) => (
          <>
            {accountsData.bank_accounts.length === 0 ? (
              <p>You have no bank account registered yet.</p>
            ) : (
              <OfframpForm employeeId={employeeId} accounts={accountsData.bank_accounts} walletBalance={walletBalance} onCreated={transfers.reload} />
            )}
            {adding || accountsData.bank_accounts.length === 0 ? (
              <BankAccountForm
                employeeId={employeeId}
                onAdded={() => {
                  setAdding(false);
                  accounts.reload();
                }}
                onCancel={accountsData.bank_accounts.length > 0 ? () => setAdding(false) : undefined}
              />
            ) : (
              <button type="button" className="link-button ap-add" onClick={() => setAdding(true)}>
                Add another bank account
              </button>
            )}
          </>
        )}
      </Async>

      <Async loaded={transfers}>
        {(transfersData) => (
          <>
            <AwaitingDeposits transfers={transfersData.transfers} onSent={transfers.reload} />
            <h3>Recent cash-outs</h3>
            {transfersData.transfers.length === 0 ? (
              <Empty>No cash-outs yet.</Empty>
            ) : (
              <DataTable label="Recent cash-outs" columns={CASH_OUT_COLUMNS} rows={transfersData.transfers} rowKey={(t) => t.transfer_id} />
            )}
          </>
        )}
      </Async>
    </section>
  );
}

function OfframpForm({
  employeeId,
  accounts,
  walletBalance,
  onCreated,
}: {
  employeeId: string;
  accounts: BankAccount[];
  walletBalance: bigint | null;
  onCreated: () => void;
}) {
  const id = useId();
  const [accountId, setAccountId] = useState(accounts[0]?.bank_account_id ?? '');
  const account = accounts.find((a) => a.bank_account_id === accountId) ?? accounts[0];
  const { amount, setAmount, busy, error, created, submit } = useOfframpSubmit(employeeId, account, onCreated);

  return (
    <>
      <form
        className="ap-offramp"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <div>
          <label htmlFor={`${id}-account`}>Bank account</label>
          <select
            id={`${id}-account`}
            value={account?.bank_account_id ?? ''}
            onChange={(e) => setAccountId(e.target.value)}
            aria-invalid={error?.field === 'bankAccountId' || undefined}
            aria-describedby={error?.field === 'bankAccountId' ? `${id}-error` : undefined}
          >
            {accounts.map((a) => (
              <option key={a.bank_account_id} value={a.bank_account_id}>
                {accountName(a)}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-amount`}>Amount (USD)</label>
          <input
            id={`${id}-amount`}
            inputMode="decimal"
            autoComplete="off"
            placeholder="250.00"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
            aria-invalid={error?.field === 'amount' || undefined}
            aria-describedby={[`${id}-available`, ...(error?.field === 'amount' ? [`${id}-error`] : [])].join(' ')}
          />
          <span id={`${id}-available`} className="muted ap-hint">
            {walletBalance === null ? 'From your wallet balance.' : `In your wallet: ${formatBaseUnits(walletBalance)}.`}
          </span>
        </div>
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Sending…' : 'Cash out'}
        </button>
      </form>
      {error && (
        <p className="field-error" id={`${id}-error`} role="alert">
          {error.message}
        </p>
      )}
      {created && <OfframpCreated created={created} />}
    </>
  );
}

/** The amount being cashed out, and creating the off-ramp to the chosen account. */
function useOfframpSubmit(employeeId: string, account: BankAccount | undefined, onCreated: () => void) {
  const [amount, setAmount] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ field: 'amount' | 'bankAccountId' | null; message: string } | null>(null);
  const [created, setCreated] = useState<Offramp | null>(null);

  const submit = async () => {
    const problem = validAmount(amount);
    if (problem) {
      setError({ field: 'amount', message: problem });
      return;
    }
    if (!account) return;
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      const result = await api<Offramp>(`/api/employees/${employeeId}/offramp`, {
        method: 'POST',
        body: { amount: amount.trim(), destinationType: account.destination_type, bankAccountId: account.bank_account_id },
      });
      setCreated(result);
      setAmount('');
      onCreated();
    } catch (reason) {
      const field = fieldOf(reason);
      setError({ field: field === 'amount' || field === 'bankAccountId' ? field : null, message: errorText(reason) });
    } finally {
      setBusy(false);
    }
  };

  return { amount, setAmount, busy, error, created, submit };
}

/** A created off-ramp: its status and, when the employee must send the money, where to send it. */
function OfframpCreated({ created }: { created: Offramp }) {
  return (
    <div className="ap-result" role="status">
      <p>
        <strong>Cash-out of {formatUsd(created.amount)} created</strong> (status <StatePill state={created.status} />
        ).
      </p>
      {created.deposit_instructions && (
        <p>
          To complete it, send exactly <strong>{formatUsd(created.deposit_instructions.amount)}</strong> from your wallet{' '}
          <code className="ap-mono" title={created.deposit_instructions.from_address}>
            {shortAddress(created.deposit_instructions.from_address)}
          </code>{' '}
          to <code className="ap-address">{created.deposit_instructions.to_address}</code>: send it below, or from any wallet app. The bank is
          paid once it arrives.
        </p>
      )}
    </div>
  );
}

function BankAccountForm({ employeeId, onAdded, onCancel }: { employeeId: string; onAdded: () => void; onCancel: (() => void) | undefined }) {
  const id = useId();
  const [type, setType] = useState<DestinationType>('ach');
  const [owner, setOwner] = useState('');
  const [label, setLabel] = useState('');
  const [details, setDetails] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const fields = Object.fromEntries(DESTINATIONS[type].fields.map((f) => [f.key, (details[f.key] ?? '').trim()]));
      await api(`/api/employees/${employeeId}/bank-accounts`, {
        method: 'POST',
        body: { destinationType: type, accountOwnerName: owner, details: fields, ...(label.trim() ? { label } : {}) },
      });
      onAdded();
    } catch (reason) {
      // A checksum failure names `details`; the message says which one (`details.routingNumber ...`).
      let field = fieldOf(reason);
      if (field === 'details') field = /details\.(\w+)/.exec(errorText(reason))?.[0] ?? field;
      setError({ field, message: errorText(reason) });
    } finally {
      setBusy(false);
    }
  };
  const errorFor = (field: string) =>
    error && error.field === field ? (
      <p className="field-error" id={`${id}-${field}-error`} role="alert">
        {error.message}
      </p>
    ) : null;
  const described = (field: string) => (error && error.field === field ? `${id}-${field}-error` : undefined);
  const knownFields = ['destinationType', 'accountOwnerName', 'label', ...DESTINATIONS[type].fields.map((f) => `details.${f.key}`)];

  return (
    <form
      className="ap-bank-form"
      aria-labelledby={`${id}-heading`}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h3 id={`${id}-heading`}>Add a bank account</h3>
      <label htmlFor={`${id}-type`}>Account type</label>
      <select
        id={`${id}-type`}
        value={type}
        onChange={(e) => {
          setType(e.target.value as DestinationType);
          setError(null);
        }}
      >
        {(Object.keys(DESTINATIONS) as DestinationType[]).map((key) => (
          <option key={key} value={key}>
            {DESTINATIONS[key].name}
          </option>
        ))}
      </select>
      <label htmlFor={`${id}-owner`}>Account holder name</label>
      <input id={`${id}-owner`} value={owner} onChange={(e) => setOwner(e.target.value)} autoComplete="name" aria-invalid={error?.field === 'accountOwnerName' || undefined} aria-describedby={described('accountOwnerName')} />
      {errorFor('accountOwnerName')}
      {DESTINATIONS[type].fields.map((f) => (
        <div key={`${type}-${f.key}`}>
          <label htmlFor={`${id}-${f.key}`}>{f.label}</label>
          <input
            id={`${id}-${f.key}`}
            value={details[f.key] ?? ''}
            onChange={(e) => setDetails((current) => ({ ...current, [f.key]: e.target.value }))}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={error?.field === `details.${f.key}` || undefined}
            aria-describedby={described(`details.${f.key}`)}
          />
          {errorFor(`details.${f.key}`)}
        </div>
      ))}
      <label htmlFor={`${id}-label`}>Nickname (optional)</label>
      <input id={`${id}-label`} value={label} onChange={(e) => setLabel(e.target.value)} autoComplete="off" aria-invalid={error?.field === 'label' || undefined} aria-describedby={described('label')} />
      {errorFor('label')}
      {error && !knownFields.includes(error.field ?? '') && (
        <p className="field-error" role="alert">
          {error.message}
        </p>
      )}
      <div className="row ap-actions">
        <button type="submit" className="button secondary" disabled={busy}>
          {busy ? 'Adding…' : 'Add bank account'}
        </button>
        {onCancel && (
          <button type="button" className="link-button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

