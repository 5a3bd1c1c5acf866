import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, type Employer } from '../../lib/api';
import { checkFields, rules, serverFieldErrors } from '../../lib/form';
import { useCompany } from '../../company';
import { ErrorState, Loading } from '../../components/States';
import { formatDate } from '../../lib/format';
import { useSession, useEmployerId } from '../../session';
import { errorText, Hex, NoEmployer } from './components/common';
import { PayScheduleForm } from './components/PayScheduleForm';
import { usePageTitle } from '../../company';


const SUB_PAGES = [
  { to: '/dashboard/settings/billing', title: 'Billing', text: 'Receipts of paid API calls made for you, and MPP payment sessions.' },
  { to: '/dashboard/settings/agents', title: 'Agents', text: 'Authorize agents to pay from the treasury: caps, allowlists, velocity, and the emergency pause.' },
  { to: '/dashboard/settings/deposit-addresses', title: 'Deposit addresses', text: 'Register the virtual master so each employee gets a personal deposit address.' },
];

/** Settings: the employer's basic details (renamable) and the three settings pages. */
export function Settings() {
  usePageTitle('Settings');
  const employerId = useEmployerId();
  const { session } = useSession();
  return (
    <>
      <h1>Settings</h1>
      <nav aria-label="Settings pages" className="grid more-links">
        {SUB_PAGES.map((page) => (
          <Link key={page.to} to={page.to} className="card more-link-card">
            <span className="more-link-title">{page.title}</span>
            <span className="muted">{page.text}</span>
          </Link>
        ))}
      </nav>
      <section className="card" aria-labelledby="employer-heading">
        <h2 id="employer-heading">Employer</h2>
        {employerId ? <EmployerDetails ownerEmail={session?.email ?? session?.user_id ?? ''} /> : <NoEmployer />}
      </section>
      {employerId && (
        <section className="card" aria-labelledby="schedule-heading">
          <h2 id="schedule-heading">Pay schedule</h2>
          <PaySchedule />
        </section>
      )}
    </>
  );
}

function EmployerDetails({ ownerEmail }: { ownerEmail: string }) {
  const { employer, error, reload, setEmployer } = useCompany();
  if (error) return <ErrorState error={error} onRetry={reload} />;
  if (!employer) return <Loading label="Loading the employer…" />;
  return (
    <>
      <dl className="more-dl">
        <dt>Name</dt>
        <dd>{employer.name}</dd>
        <dt>Owner</dt>
        <dd>{ownerEmail}</dd>
        <dt>Employer id</dt>
        <dd className="more-mono">{employer.id}</dd>
        <dt>Treasury account</dt>
        <dd>{employer.employer_account_id ?? 'Not opened yet'}</dd>
        <dt>Admin wallet</dt>
        <dd>{employer.admin_wallet ? <Hex value={employer.admin_wallet} /> : 'None (the service holds the treasury)'}</dd>
        <dt>TIP-403 policy</dt>
        <dd>{employer.tip403_policy_id ?? 'None'}</dd>
        <dt>Created</dt>
        <dd>{formatDate(employer.created_at)}</dd>
      </dl>
      <RenameForm employer={employer} onSaved={setEmployer} />
    </>
  );
}

function PaySchedule() {
  const { employer, error, reload, setEmployer } = useCompany();
  if (error) return <ErrorState error={error} onRetry={reload} />;
  if (!employer) return <Loading label="Loading the pay schedule…" />;
  return <PayScheduleForm employer={employer} onSaved={setEmployer} />;
}

const NAME_CHECK = { name: { label: 'Employer name', rules: [rules.required, rules.maxLength(200)] } };

function RenameForm({ employer, onSaved }: { employer: Employer; onSaved: (employer: Employer) => void }) {
  const [name, setName] = useState(employer.name);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const trimmed = name.trim();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problem = checkFields({ name }, NAME_CHECK).name;
    setMessage(problem ? { ok: false, text: problem } : null);
    if (problem) return;
    setBusy(true);
    try {
      const saved = await api<Employer>(`/api/employers/${employer.id}`, { method: 'PATCH', body: { name: trimmed } });
      onSaved(saved);
      setMessage({ ok: true, text: 'Name saved.' });
    } catch (reason) {
      setMessage({ ok: false, text: serverFieldErrors(reason, NAME_CHECK)?.name ?? errorText(reason) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)}>
      <label htmlFor="employer-name">Employer name</label>
      <input
        id="employer-name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        aria-invalid={message && !message.ok ? true : undefined}
        aria-describedby="employer-name-status"
      />
      <button type="submit" className="button secondary" disabled={busy || trimmed === employer.name}>
        {busy ? 'Saving…' : 'Rename'}
      </button>
      <p id="employer-name-status" role={message && !message.ok ? 'alert' : 'status'} className={message && !message.ok ? 'field-error' : 'muted'}>
        {message?.text}
      </p>
    </form>
  );
}
