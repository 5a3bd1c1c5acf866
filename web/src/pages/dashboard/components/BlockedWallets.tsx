import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../../../components/ConfirmButton';
import { Async, Empty } from '../../../components/States';
import type { Loaded } from '../../../hooks';
import { api, type ComplianceSummary as Overview, type Schema } from '../../../lib/api';
import { formatDate } from '../../../lib/format';
import { checkFields, rules, serverFieldErrors, type FieldErrors, type FieldSpec } from '../../../lib/form';
import { errorText } from './common';

export type Blocklist = Schema<'Blocklist'>;
type BlocklistEntry = Blocklist['entries'][number];
type Message = { ok: boolean; text: string };

/** The block form's fields (AddBlocklistEntryRequest), in the server's words. */
type BlockField = 'wallet_address' | 'reason';
const BLOCK_FIELDS: Record<BlockField, FieldSpec> = {
  wallet_address: { label: 'Wallet address', rules: [rules.required, rules.evmAddress] },
  reason: { label: 'Reason', rules: [rules.maxLength(500)] },
};

/** Compliance's blocked wallets: the employees blocked from payroll, the employer's blocklist, and the form to add to it. */
export function BlockedWallets({
  employerId,
  overview,
  blocklist,
  onChanged,
}: {
  employerId: string;
  overview: Overview | null;
  blocklist: Loaded<Blocklist>;
  onChanged: () => void;
}) {
  const edits = useBlocklistEdits(employerId, onChanged);
  const { message } = edits;
  const blockedEmployees = (overview?.employees ?? []).filter((e) => e.blocked_now);

  return (
    <section aria-labelledby="blocked-heading" className="card">
      <h2 id="blocked-heading">Blocked wallets</h2>
      {blockedEmployees.length > 0 && <BlockedEmployees employees={blockedEmployees} />}
      <h3>Your blocklist</h3>
      <Async loaded={blocklist}>
        {(data) =>
          data.entries.length === 0 ? (
            <Empty>No wallets on your blocklist. Sanctioned wallets are blocked for every employer automatically.</Empty>
          ) : (
            <BlocklistTable entries={data.entries} onRemove={edits.remove} />
          )
        }
      </Async>
      <BlockWalletForm edits={edits} />
      {message && (
        <p role={message.ok ? 'status' : 'alert'} className={message.ok ? 'more-ok' : 'field-error'}>
          {message.text}
        </p>
      )}
    </section>
  );
}

/** The block form's fields, and adding to and removing from the blocklist (with the message either leaves). */
function useBlocklistEdits(employerId: string, onChanged: () => void) {
  const [wallet, setWallet] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<Message | null>(null);
  const [errors, setErrors] = useState<FieldErrors<BlockField>>({});

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setMessage(null);
    const problems = checkFields({ wallet_address: wallet, reason }, BLOCK_FIELDS);
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    try {
      const entry = await api<{ created: boolean; wallet_address: string }>(`/api/employers/${employerId}/blocklist`, {
        method: 'POST',
        body: { wallet_address: wallet.trim(), ...(reason.trim() ? { reason: reason.trim() } : {}) },
      });
      setMessage({ ok: true, text: entry.created ? `Blocked ${entry.wallet_address}.` : `${entry.wallet_address} was already blocked.` });
      setWallet('');
      setReason('');
      onChanged();
    } catch (failure) {
      const fields = serverFieldErrors(failure, BLOCK_FIELDS);
      if (fields) setErrors(fields);
      else setMessage({ ok: false, text: errorText(failure) });
    } finally {
      setBusy(false);
    }
  };
  const remove = async (id: string, address: string) => {
    setMessage(null);
    try {
      await api(`/api/employers/${employerId}/blocklist/${id}`, { method: 'DELETE' });
      setMessage({ ok: true, text: `Unblocked ${address}.` });
      onChanged();
    } catch (reason) {
      setMessage({ ok: false, text: errorText(reason) });
    }
  };

  return { wallet, setWallet, reason, setReason, busy, message, errors, add, remove };
}

function BlockedEmployees({ employees }: { employees: Overview['employees'] }) {
  return (
    <div className="more-callout more-callout-err" role="note">
      <p>
        <strong>
          {employees.length} {employees.length === 1 ? 'employee is' : 'employees are'} blocked from payroll:
        </strong>
      </p>
      <ul>
        {employees.map((e) => (
          <li key={e.id}>
            {e.full_name} ({e.blocked_now})
          </li>
        ))}
      </ul>
    </div>
  );
}

function BlocklistTable({ entries, onRemove }: { entries: BlocklistEntry[]; onRemove: (id: string, address: string) => Promise<void> }) {
  return (
    <div className="table-wrap">
      <table className="more-table">
        <caption className="more-sr">Wallets on the employer's blocklist</caption>
        <thead>
          <tr>
            <th scope="col">Wallet</th>
            <th scope="col">Reason</th>
            <th scope="col">Source</th>
            <th scope="col">Added</th>
            <th scope="col">
              <span className="more-sr">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id}>
              <td data-label="Wallet">
                <span className="more-mono more-break">{entry.wallet_address}</span>
              </td>
              <td data-label="Reason">{entry.reason ?? '—'}</td>
              <td data-label="Source">{entry.source}</td>
              <td data-label="Added">{formatDate(entry.created_at)}</td>
              <td data-label="Remove">
                <ConfirmButton label="Unblock" question={<>Remove {entry.wallet_address} from the blocklist?</>} confirmLabel="Unblock" onConfirm={() => onRemove(entry.id, entry.wallet_address)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function BlockWalletForm({ edits }: { edits: ReturnType<typeof useBlocklistEdits> }) {
  const { wallet, setWallet, reason, setReason, busy, errors, add } = edits;
  const described = (field: BlockField, ...extra: string[]) => [...extra, ...(errors[field] ? [`block-${field}-error`] : [])].join(' ') || undefined;
  const fieldError = (field: BlockField) =>
    errors[field] ? (
      <p id={`block-${field}-error`} className="field-error more-full" role="alert">
        {errors[field]}
      </p>
    ) : null;
  return (
    <form className="inline-form" onSubmit={(e) => void add(e)} noValidate aria-labelledby="block-form-heading">
      <h3 id="block-form-heading" className="more-full">
        Block a wallet
      </h3>
      <label htmlFor="block-wallet">Wallet address</label>
      <input
        id="block-wallet"
        className="more-mono"
        value={wallet}
        placeholder="0x…"
        autoComplete="off"
        spellCheck={false}
        onChange={(e) => setWallet(e.target.value)}
        aria-invalid={errors.wallet_address ? true : undefined}
        aria-describedby={described('wallet_address', 'block-wallet-hint')}
      />
      <p id="block-wallet-hint" className="muted more-small more-full">
        An EVM address (0x followed by 40 hex digits).
      </p>
      {fieldError('wallet_address')}
      <label htmlFor="block-reason">Reason (optional)</label>
      <input id="block-reason" value={reason} onChange={(e) => setReason(e.target.value)} aria-invalid={errors.reason ? true : undefined} aria-describedby={described('reason')} />
      {fieldError('reason')}
      <button type="submit" className="button danger" disabled={busy}>
        {busy ? 'Blocking…' : 'Block wallet'}
      </button>
    </form>
  );
}
