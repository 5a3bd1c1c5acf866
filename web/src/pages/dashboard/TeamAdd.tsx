import { useEmployerId } from '../../session';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Employee } from '../../lib/api';
import { checkFields, rules, serverFieldErrors, type FieldErrors, type FieldSpec } from '../../lib/form';
import { NeedsEmployer } from './components/CreateCompany';
import { normaliseAmountInput } from '../../lib/money';
import { usePageTitle } from '../../company';

type Field = 'full_name' | 'email' | 'wallet_address' | 'annual_salary_usd';
const FIELDS: { name: Field; label: string; type: string; autoComplete: string; required: boolean; hint?: string; inputMode?: 'decimal' }[] = [
  { name: 'full_name', label: 'Full name', type: 'text', autoComplete: 'off', required: true },
  { name: 'email', label: 'Email', type: 'email', autoComplete: 'off', required: true },
  { name: 'wallet_address', label: 'Wallet address', type: 'text', autoComplete: 'off', required: false, hint: 'Optional: the 0x address on Tempo that payroll pays.' },
  { name: 'annual_salary_usd', label: 'Annual salary (USD)', type: 'text', autoComplete: 'off', required: false, hint: 'Optional, e.g. 120000 or 95000.50.', inputMode: 'decimal' },
];

/** The server's rules for a new employee (CreateEmployeeRequest), in its words. */
const CHECKS: Record<Field, FieldSpec> = {
  full_name: { label: 'Full name', rules: [rules.required, rules.maxLength(200)] },
  email: { label: 'Email', rules: [rules.required, rules.email, rules.maxLength(254)] },
  wallet_address: { label: 'Wallet address', rules: [rules.evmAddress] },
  annual_salary_usd: { label: 'Salary', rules: [rules.usdAmount] },
};

/** /dashboard/team/add: POST /api/employers/{id}/team. */
export function TeamAdd() {
  usePageTitle('Add employee');
  const employerId = useEmployerId();
  const navigate = useNavigate();
  const [values, setValues] = useState<Record<Field, string>>({ full_name: '', email: '', wallet_address: '', annual_salary_usd: '' });
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<Field, string>>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!employerId) return <NeedsEmployer title="Add employee" />;

  /** Shows every field's problem and focuses the first; false when there is none. */
  const showFieldErrors = (problems: FieldErrors<Field>) => {
    setFieldErrors(problems);
    const first = FIELDS.find((f) => problems[f.name]);
    document.getElementById(`employee-${first?.name}`)?.focus();
    return first !== undefined;
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setFieldErrors({});
    setFormError(null);
    const problems = checkFields(values, CHECKS);
    if (showFieldErrors(problems)) return;
    const body: Record<string, string> = { full_name: values.full_name.trim(), email: values.email.trim() };
    if (values.wallet_address.trim()) body.wallet_address = values.wallet_address.trim();
    if (values.annual_salary_usd.trim()) body.annual_salary_usd = normaliseAmountInput(values.annual_salary_usd);
    setBusy(true);
    try {
      const created = await api<Employee & { created: boolean }>(`/api/employers/${employerId}/team`, { method: 'POST', body });
      navigate('/dashboard/team', {
        state: { notice: created.created ? `${created.full_name} was added.` : `${created.email} is already on your team; nothing was changed.` },
      });
    } catch (reason) {
      if (!showFieldErrors(serverFieldErrors(reason, CHECKS) ?? {})) setFormError(reason instanceof Error ? reason.message : String(reason));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p>
        <Link to="/dashboard/team">← Team</Link>
      </p>
      <h1>Add employee</h1>
      <form className="card stack" onSubmit={(e) => void submit(e)} noValidate aria-describedby={formError ? 'employee-form-error' : undefined}>
        {formError && (
          <p id="employee-form-error" className="field-error" role="alert">
            {formError}
          </p>
        )}
        {FIELDS.map((f) => {
          const error = fieldErrors[f.name];
          const describedBy = [f.hint ? `employee-${f.name}-hint` : '', error ? `employee-${f.name}-error` : ''].filter(Boolean).join(' ') || undefined;
          return (
            <div key={f.name}>
              <label htmlFor={`employee-${f.name}`}>{f.label}</label>
              <input
                id={`employee-${f.name}`}
                name={f.name}
                type={f.type}
                inputMode={f.inputMode}
                autoComplete={f.autoComplete}
                required={f.required}
                aria-required={f.required}
                aria-invalid={error ? true : undefined}
                aria-describedby={describedBy}
                value={values[f.name]}
                onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
              />
              {f.hint && (
                <p id={`employee-${f.name}-hint`} className="muted core-hint">
                  {f.hint}
                </p>
              )}
              {error && (
                <p id={`employee-${f.name}-error`} className="field-error" role="alert">
                  {error}
                </p>
              )}
            </div>
          );
        })}
        <div className="row">
          <button type="submit" className="button" disabled={busy}>
            Add employee
          </button>
          <Link to="/dashboard/team">Cancel</Link>
        </div>
      </form>
    </>
  );
}
