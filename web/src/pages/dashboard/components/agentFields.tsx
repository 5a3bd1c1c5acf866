import { useId, useState, type ReactNode } from 'react';
import { type Schema } from '../../../lib/api';
import { checkFields, rules, serverFieldErrors, type FieldErrors as FormFieldErrors, type FieldSpec, type Rule } from '../../../lib/form';
import { normaliseAmountInput, plainDecimal, toUnits } from '../../../lib/money';

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
  if (changed('per_tx_cap_usd')) body.per_tx_cap_usd = normaliseAmountInput(values.per_tx_cap_usd);
  if (changed('per_day_cap_usd')) body.per_day_cap_usd = normaliseAmountInput(values.per_day_cap_usd);
  if (changed('velocity_per_minute')) body.velocity_per_minute = Number(values.velocity_per_minute.trim());
  if (before ? (parseRecipients(values.allowed_recipients) ?? []).join('\n') !== (parseRecipients(before.allowed_recipients) ?? []).join('\n') : true) {
    const list = parseRecipients(values.allowed_recipients);
    if (before || list) body.allowed_recipients = list;
  }
  for (const key of ['elevated_per_tx_cap_usd', 'elevated_per_day_cap_usd'] as const) {
    if (!changed(key)) continue;
    const value = normaliseAmountInput(values[key]);
    if (before || value) body[key] = value || null;
  }
  return body;
}

type AgentField = keyof LimitValues | 'agent_identifier' | 'identity_scheme';
export type FieldErrors = FormFieldErrors<AgentField | 'form'>;

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** Base58 of 32 bytes; the server decodes it exactly. */
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** The allowlist's rules (one address per line): each an EVM or a Solana address, at most 100. */
const recipientList: Rule = (value) => {
  const list = parseRecipients(value) ?? [];
  if (list.some((r) => !EVM_ADDRESS.test(r) && !SOLANA_ADDRESS.test(r))) return 'must be an EVM address (0x...) or a base58 Solana address';
  return list.length > 100 ? 'must have at most 100 items' : null;
};
const cap = (label: string, required: boolean): FieldSpec => ({ label, rules: [...(required ? [rules.required] : []), rules.usdAmount, rules.moreThanZero] });

/** The server's rules for an authorization's limits (CreateAuthorizationBody), in its words. */
const LIMIT_CHECKS: Record<keyof LimitValues, FieldSpec> = {
  label: { label: 'Label', rules: [rules.required, rules.maxLength(80)] },
  per_tx_cap_usd: cap('Per-transaction cap', true),
  per_day_cap_usd: cap('Per-day cap', true),
  velocity_per_minute: { label: 'Payments per minute', rules: [rules.required, rules.wholeNumber(1, 600)] },
  allowed_recipients: { label: 'Allowed recipients', rules: [recipientList] },
  elevated_per_tx_cap_usd: cap('Elevated cap per transaction', false),
  elevated_per_day_cap_usd: cap('Elevated cap per day', false),
};
const IDENTIFIER_CHECK: FieldSpec = { label: 'Agent identifier', rules: [rules.required, rules.matches(/^[\x21-\x7e]{1,200}$/, 'must be 1-200 printable ASCII characters without spaces')] };
const ALL_CHECKS: Record<AgentField, FieldSpec> = { ...LIMIT_CHECKS, agent_identifier: IDENTIFIER_CHECK, identity_scheme: { label: 'Identity proof', rules: [] } };

/** The service's field names as its messages use them ("must be at least per_tx_cap_usd"), read as the labels. */
const readable = (message: string) => message.replace(/\bper_tx_cap_usd\b/g, 'the per-transaction cap').replace(/\bper_day_cap_usd\b/g, 'the per-day cap');

/** The service's rules across the caps (agents' checkCaps): a day allows one largest payment, elevated caps only raise. */
function capOrderProblems(values: LimitValues, errors: FieldErrors): FieldErrors {
  const units = (key: keyof LimitValues) => (errors[key] ? null : toUnits(normaliseAmountInput(values[key])));
  const [perTx, perDay, elevatedTx, elevatedDay] = [units('per_tx_cap_usd'), units('per_day_cap_usd'), units('elevated_per_tx_cap_usd'), units('elevated_per_day_cap_usd')];
  const problems: FieldErrors = {};
  if (perTx !== null && perDay !== null && perDay < perTx) problems.per_day_cap_usd = 'Per-day cap must be at least the per-transaction cap';
  if (perTx !== null && elevatedTx !== null && elevatedTx < perTx) problems.elevated_per_tx_cap_usd = 'Elevated cap per transaction must be at least the per-transaction cap';
  if (perDay !== null && elevatedDay !== null && elevatedDay < perDay) problems.elevated_per_day_cap_usd = 'Elevated cap per day must be at least the per-day cap';
  else if (elevatedDay !== null && elevatedTx !== null && elevatedDay < elevatedTx) problems.elevated_per_day_cap_usd = 'Elevated cap per day must be at least the elevated per-transaction cap';
  return problems;
}

/** Every field's problem at once, before sending (the server checks everything again); with the identifier when creating. */
export function checkLimits(values: LimitValues, identifier?: string): FieldErrors {
  const errors: FieldErrors = checkFields(values, LIMIT_CHECKS);
  if (identifier !== undefined) Object.assign(errors, checkFields({ agent_identifier: identifier }, { agent_identifier: IDENTIFIER_CHECK }));
  return { ...errors, ...capOrderProblems(values, errors) };
}

/** The server's refusal on the fields it names, or on the form. */
export function apiFieldErrors(error: unknown, fallback: string): FieldErrors {
  const fields = serverFieldErrors(error, ALL_CHECKS);
  if (fields) return Object.fromEntries(Object.entries(fields).map(([field, message]) => [field, readable(String(message))]));
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
        <p id={`${id}-error`} className="field-error" role="alert">
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
