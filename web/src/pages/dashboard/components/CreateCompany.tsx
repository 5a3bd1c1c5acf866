import { useState, type FormEvent } from 'react';
import { api } from '../../../lib/api';
import { checkFields, rules, serverFieldErrors } from '../../../lib/form';
import { useSession } from '../../../session';

const NAME_CHECK = { name: { label: 'Company name', rules: [rules.required, rules.maxLength(200)] } };

/** For a signed-in user who owns no employer yet: POST /api/employers, then re-read the session. */
export function CreateCompany() {
  const { refresh } = useSession();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problem = checkFields({ name }, NAME_CHECK).name;
    setError(problem ?? null);
    if (problem) return;
    setBusy(true);
    try {
      await api('/api/employers', { method: 'POST', body: { name: name.trim() } });
      await refresh();
    } catch (reason) {
      setError(serverFieldErrors(reason, NAME_CHECK)?.name ?? (reason instanceof Error ? reason.message : String(reason)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="create-company-heading">
      <h2 id="create-company-heading">Create your company</h2>
      <p className="muted">You do not own an employer yet. Name your company to open its treasury and start adding your team.</p>
      <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate>
        <label htmlFor="company-name">Company name</label>
        <input
          id="company-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={200}
          required
          autoComplete="organization"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'company-name-error' : undefined}
        />
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Creating…' : 'Create company'}
        </button>
      </form>
      {error && (
        <p id="company-name-error" className="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/** What a core page shows when the user owns no employer. */
export function NeedsEmployer({ title }: { title: string }) {
  return (
    <>
      <h1>{title}</h1>
      <CreateCompany />
    </>
  );
}
