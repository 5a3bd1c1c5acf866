import { useId, useState } from 'react';
import { api, ApiError, type Schema } from '../../../lib/api';
import { Async, Empty } from '../../../components/States';
import { formatDate, shortAddress } from '../../../lib/format';
import { checkFields, rules, serverFieldErrors, type FieldErrors, type FieldSpec } from '../../../lib/form';
import { formatBaseUnits, formatUsd, normaliseAmountInput } from '../../../lib/money';
import { useApi } from '../../../hooks';
import { DataTable, StatePill, type Column } from '../../../components/DataTable';
import { SendDeposit } from './SendDeposit';
import { bankFieldSpecs, DESTINATIONS, sepaOwnerProblem, type BankField, type DestinationType } from './bankAccountRules';

type BankAccount = Schema<'BankAccount'>;
type Offramp = Schema<'OfframpTransfer'>;

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

/** The refusal in the employee's words (the API's KYC message speaks to the employer's integration). */
const errorText = (reason: unknown) =>
  reason instanceof ApiError && reason.code === 'KYC_NOT_APPROVED'
    ? 'Your identity check (KYC) is not approved yet. Your employer starts it; once it is approved you can add a bank account and cash out.'
    : reason instanceof Error
      ? reason.message
      : String(reason);

/** The off-ramp's fields (OfframpBody), in the server's words. */
type CashOutField = 'bankAccountId' | 'amount';
const CASH_OUT_FIELDS: Record<CashOutField, FieldSpec> = {
  bankAccountId: { label: 'Bank account', rules: [rules.required] },
  amount: { label: 'Amount', rules: [rules.required, rules.usdAmount, rules.moreThanZero] },
};

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
  const { amount, setAmount, busy, errors, formError, created, submit } = useOfframpSubmit(employeeId, account, onCreated);
  const described = (field: CashOutField, ...extra: string[]) => [...extra, ...(errors[field] ? [`${id}-${field}-error`] : [])].join(' ') || undefined;

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
          <label htmlFor={`${id}-bankAccountId`}>Bank account</label>
          <select
            id={`${id}-bankAccountId`}
            value={account?.bank_account_id ?? ''}
            onChange={(e) => setAccountId(e.target.value)}
            aria-invalid={errors.bankAccountId ? true : undefined}
            aria-describedby={described('bankAccountId')}
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
            aria-invalid={errors.amount ? true : undefined}
            aria-describedby={described('amount', `${id}-available`)}
          />
          <span id={`${id}-available`} className="muted ap-hint">
            {walletBalance === null ? 'From your wallet balance.' : `In your wallet: ${formatBaseUnits(walletBalance)}.`}
          </span>
        </div>
        <button type="submit" className="button" disabled={busy} aria-describedby={busy ? `${id}-busy` : undefined}>
          {busy ? 'Sending…' : 'Cash out'}
        </button>
        {busy && (
          <span id={`${id}-busy`} className="muted ap-hint">
            Waiting for the bank transfer to be created.
          </span>
        )}
      </form>
      {(Object.keys(CASH_OUT_FIELDS) as CashOutField[]).map((field) =>
        errors[field] ? (
          <p key={field} className="field-error" id={`${id}-${field}-error`} role="alert">
            {errors[field]}
          </p>
        ) : null,
      )}
      {formError && (
        <p className="field-error" role="alert">
          {formError}
        </p>
      )}
      {created && <OfframpCreated created={created} />}
    </>
  );
}

/** The amount being cashed out, and creating the off-ramp to the chosen account (every field checked first). */
function useOfframpSubmit(employeeId: string, account: BankAccount | undefined, onCreated: () => void) {
  const [amount, setAmount] = useState('');
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors<CashOutField>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<Offramp | null>(null);

  const submit = async () => {
    setFormError(null);
    const problems = checkFields({ amount, bankAccountId: account?.bank_account_id ?? '' }, CASH_OUT_FIELDS);
    setErrors(problems);
    if (Object.keys(problems).length > 0 || !account) return;
    setBusy(true);
    setCreated(null);
    try {
      const result = await api<Offramp>(`/api/employees/${employeeId}/offramp`, {
        method: 'POST',
        body: { amount: normaliseAmountInput(amount), destinationType: account.destination_type, bankAccountId: account.bank_account_id },
      });
      setCreated(result);
      setAmount('');
      onCreated();
    } catch (reason) {
      const fields = serverFieldErrors(reason, CASH_OUT_FIELDS);
      if (fields) setErrors(fields);
      else setFormError(errorText(reason));
    } finally {
      setBusy(false);
    }
  };

  return { amount, setAmount, busy, errors, formError, created, submit };
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

/** The bank account being written, and registering it once every field passes the server's checks. */
function useBankAccountSubmit(employeeId: string, onAdded: () => void) {
  const [type, setType] = useState<DestinationType>('ach');
  const [values, setValues] = useState<Partial<Record<BankField, string>>>({});
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors<BankField>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const specs = bankFieldSpecs(type);
  const value = (field: BankField) => values[field] ?? '';

  const submit = async () => {
    setFormError(null);
    const fields = Object.keys(specs) as BankField[];
    const problems: FieldErrors<BankField> = checkFields(Object.fromEntries(fields.map((f) => [f, value(f)])) as Record<BankField, string>, specs as Record<BankField, FieldSpec>);
    const sepaOwner = sepaOwnerProblem(type, value('accountOwnerName'));
    if (sepaOwner && !problems.accountOwnerName) problems.accountOwnerName = sepaOwner;
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    try {
      const details = Object.fromEntries(DESTINATIONS[type].details.map((key) => [key, value(`details.${key}`).trim()]));
      const label = value('label').trim();
      await api(`/api/employees/${employeeId}/bank-accounts`, {
        method: 'POST',
        body: { destinationType: type, accountOwnerName: value('accountOwnerName').trim(), details, ...(label ? { label } : {}) },
      });
      onAdded();
    } catch (reason) {
      const fields = serverFieldErrors(reason, specs as Record<BankField, FieldSpec>);
      if (fields) setErrors(fields);
      else setFormError(errorText(reason));
    } finally {
      setBusy(false);
    }
  };
  const changeType = (next: DestinationType) => {
    setType(next);
    setErrors({});
  };
  const set = (field: BankField, text: string) => setValues((current) => ({ ...current, [field]: text }));
  return { type, changeType, value, set, busy, errors, formError, submit };
}

function BankAccountForm({ employeeId, onAdded, onCancel }: { employeeId: string; onAdded: () => void; onCancel: (() => void) | undefined }) {
  const id = useId();
  const { type, changeType, value, set, busy, errors, formError, submit } = useBankAccountSubmit(employeeId, onAdded);
  const input = (field: BankField, label: string, autoComplete = 'off') => {
    const fieldId = `${id}-${field.replace('.', '-')}`;
    return (
      <div key={`${type}-${field}`}>
        <label htmlFor={fieldId}>{label}</label>
        <input
          id={fieldId}
          value={value(field)}
          onChange={(e) => set(field, e.target.value)}
          autoComplete={autoComplete}
          spellCheck={false}
          aria-invalid={errors[field] ? true : undefined}
          aria-describedby={errors[field] ? `${fieldId}-error` : undefined}
        />
        {errors[field] && (
          <p className="field-error" id={`${fieldId}-error`} role="alert">
            {errors[field]}
          </p>
        )}
      </div>
    );
  };

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
      <select id={`${id}-type`} value={type} onChange={(e) => changeType(e.target.value as DestinationType)}>
        {(Object.keys(DESTINATIONS) as DestinationType[]).map((key) => (
          <option key={key} value={key}>
            {DESTINATIONS[key].name}
          </option>
        ))}
      </select>
      {input('accountOwnerName', 'Account holder name', 'name')}
      {DESTINATIONS[type].details.map((key) => input(`details.${key}`, bankFieldSpecs(type)[`details.${key}`]?.label ?? key))}
      {input('label', 'Nickname (optional)')}
      {formError && (
        <p className="field-error" role="alert">
          {formError}
        </p>
      )}
      <div className="row ap-actions">
        <button type="submit" className="button secondary" disabled={busy}>
          {busy ? 'Adding…' : 'Add bank account'}
        </button>
        {onCancel && (
          <button type="button" className="link-button" onClick={onCancel} disabled={busy} title={busy ? 'Wait until the account is added.' : undefined}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
