import { useId, useState, type ReactNode } from 'react';
import { ApiError, type Schema } from '../../../lib/api';
import { USD_INPUT, plainDecimal } from '../../../lib/money';

export type Authorization = Schema<'AgentAuthorization'>;

/** The editable limits, as the form holds them (strings). */
export interface LimitValues {
  label: string;
  per_tx_cap_usd: string;
  per_day_cap_usd: string;
  velocity_per_minute: string;
  allowed_recipients: string;
  elevated_per_tx_cap_usd: string;
  elevated_per_day_cap_usd: string;
}

export const EMPTY_LIMITS: LimitValues = {
  label: '',
  per_tx_cap_usd: '',
  per_day_cap_usd: '',
  velocity_per_minute: '5',
  allowed_recipients: '',
  elevated_per_tx_cap_usd: '',
  elevated_per_day_cap_usd: '',
};

export function limitsOf(a: Authorization): LimitValues {
  return {
    label: a.label,
    per_tx_cap_usd: plainDecimal(a.per_tx_cap_usd),
    per_day_cap_usd: plainDecimal(a.per_day_cap_usd),
    velocity_per_minute: String(a.velocity_per_minute),
    allowed_recipients: (a.allowed_recipients ?? []).join('\n'),
    elevated_per_tx_cap_usd: plainDecimal(a.elevated_per_tx_cap_usd),
    elevated_per_day_cap_usd: plainDecimal(a.elevated_per_day_cap_usd),
  };
}

/** One address per line (commas and spaces also separate); empty = no allowlist (null). */
export function parseRecipients(text: string): string[] | null {
  const list = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length === 0 ? null : list;
}

/** The request body for the fields of `values`: all of them, or only those that differ from `before`. */
export function limitsBody(values: LimitValues, before?: LimitValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const changed = (key: keyof LimitValues) => !before || values[key].trim() !== before[key].trim();
  if (changed('label')) body.label = values.label.trim();
  if (changed('per_tx_cap_usd')) body.per_tx_cap_usd = values.per_tx_cap_usd.trim();
  if (changed('per_day_cap_usd')) body.per_day_cap_usd = values.per_day_cap_usd.trim();
  if (changed('velocity_per_minute')) body.velocity_per_minute = Number(values.velocity_per_minute.trim());
  if (before ? (parseRecipients(values.allowed_recipients) ?? []).join('\n') !== (parseRecipients(before.allowed_recipients) ?? []).join('\n') : true) {
    const list = parseRecipients(values.allowed_recipients);
    if (before || list) body.allowed_recipients = list;
  }
  for (const key of ['elevated_per_tx_cap_usd', 'elevated_per_day_cap_usd'] as const) {
    if (!changed(key)) continue;
    const value = values[key].trim();
    if (before || value) body[key] = value || null;
  }
  return body;
}

export type FieldErrors = Partial<Record<keyof LimitValues | 'agent_identifier' | 'identity_scheme' | 'form', string>>;

/** Client-side checks before sending (the server checks everything again). */
export function checkLimits(values: LimitValues): FieldErrors {
  const errors: FieldErrors = {};
  if (!values.label.trim()) errors.label = 'Enter a label.';
  for (const key of ['per_tx_cap_usd', 'per_day_cap_usd'] as const) {
    if (!USD_INPUT.test(values[key].trim())) errors[key] = 'Enter an amount in dollars, like 25 or 25.50.';
  }
  for (const key of ['elevated_per_tx_cap_usd', 'elevated_per_day_cap_usd'] as const) {
    if (values[key].trim() && !USD_INPUT.test(values[key].trim())) errors[key] = 'Enter an amount in dollars, or leave it empty.';
  }
  const velocity = Number(values.velocity_per_minute.trim());
  if (!Number.isInteger(velocity) || velocity < 1 || velocity > 600) errors.velocity_per_minute = 'A whole number from 1 to 600.';
  const recipients = parseRecipients(values.allowed_recipients) ?? [];
  const bad = recipients.find((r) => !/^0x[0-9a-fA-F]{40}$/.test(r));
  if (bad) errors.allowed_recipients = `${bad} is not an EVM address (0x followed by 40 hex digits).`;
  else if (recipients.length > 100) errors.allowed_recipients = 'At most 100 addresses.';
  return errors;
}

/** An API refusal as a message on the field it names (`allowed_recipients.2` -> `allowed_recipients`). */
export function apiFieldErrors(error: unknown, fallback: string): FieldErrors {
  if (error instanceof ApiError && error.field) {
    const field = error.field.split('.')[0] as keyof FieldErrors;
    const message = error.message.replace(new RegExp(`^${error.field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\s*`), '');
    const readable = message
      .replace(/\bper_tx_cap_usd\b/g, 'the per-transaction cap')
      .replace(/\bper_day_cap_usd\b/g, 'the per-day cap')
      .replace(/\belevated_per_tx_cap_usd\b/g, 'the elevated per-transaction cap');
    return { [field]: readable.charAt(0).toUpperCase() + readable.slice(1) };
  }
  return { form: error instanceof Error ? error.message : fallback };
}

function Field({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  error?: string;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ReactNode;
}) {
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="more-field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined })}
      {hint && (
        <p id={`${id}-hint`} className="muted more-small">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

/** The limit fields shared by the create and edit forms. */
export function LimitFields({ values, onChange, errors, halved }: { values: LimitValues; onChange: (values: LimitValues) => void; errors: FieldErrors; halved?: boolean }) {
  const base = useId();
  const [elevatedOpen, setElevatedOpen] = useState(Boolean(values.elevated_per_tx_cap_usd || values.elevated_per_day_cap_usd));
  const elevatedError = Boolean(errors.elevated_per_tx_cap_usd || errors.elevated_per_day_cap_usd);
  const set = (key: keyof LimitValues) => (event: { target: { value: string } }) => onChange({ ...values, [key]: event.target.value });
  return (
    <>
      <Field id={`${base}-label`} label="Label" error={errors.label}>
        {(p) => <input {...p} value={values.label} maxLength={80} onChange={set('label')} required />}
      </Field>
      <div className="more-field-row">
        <Field
          id={`${base}-tx`}
          label="Per-transaction cap (USD)"
          hint={halved ? 'The anomaly gate halved this cap: a new value replaces the halved cap.' : 'Largest single payment.'}
          error={errors.per_tx_cap_usd}
        >
          {(p) => <input {...p} inputMode="decimal" value={values.per_tx_cap_usd} onChange={set('per_tx_cap_usd')} required />}
        </Field>
        <Field id={`${base}-day`} label="Per-day cap (USD)" hint="Most it may pay in any 24 hours; at least the per-transaction cap." error={errors.per_day_cap_usd}>
          {(p) => <input {...p} inputMode="decimal" value={values.per_day_cap_usd} onChange={set('per_day_cap_usd')} required />}
        </Field>
        <Field id={`${base}-velocity`} label="Payments per minute" hint="Velocity limit, 1 to 600." error={errors.velocity_per_minute}>
          {(p) => <input {...p} type="number" min={1} max={600} step={1} value={values.velocity_per_minute} onChange={set('velocity_per_minute')} required />}
        </Field>
      </div>
      <Field id={`${base}-recipients`} label="Allowed recipients" hint="EVM addresses, one per line. Leave empty to allow any recipient." error={errors.allowed_recipients}>
        {(p) => <textarea {...p} className="more-mono" rows={3} spellCheck={false} value={values.allowed_recipients} onChange={set('allowed_recipients')} />}
      </Field>
      <details className="more-details-box" open={elevatedOpen || elevatedError} onToggle={(e) => setElevatedOpen(e.currentTarget.open)}>
        <summary>Elevated caps for agents with a good reputation (optional)</summary>
        <p className="muted more-small">Apply while the agent's reputation tier is established or trusted and its cap is not halved.</p>
        <div className="more-field-row">
          <Field id={`${base}-etx`} label="Elevated cap per transaction (USD)" error={errors.elevated_per_tx_cap_usd}>
            {(p) => <input {...p} inputMode="decimal" value={values.elevated_per_tx_cap_usd} onChange={set('elevated_per_tx_cap_usd')} />}
          </Field>
          <Field id={`${base}-eday`} label="Elevated cap per day (USD)" error={errors.elevated_per_day_cap_usd}>
            {(p) => <input {...p} inputMode="decimal" value={values.elevated_per_day_cap_usd} onChange={set('elevated_per_day_cap_usd')} />}
          </Field>
        </div>
      </details>
    </>
  );
}

export { Field };
