import { useState, type FormEvent } from 'react';
import { api, type Employer } from '../../../lib/api';
import { checkFields, rules, serverFieldErrors, type FieldErrors, type Rule } from '../../../lib/form';
import { formatDay } from '../../../lib/format';
import { describeSchedule, formatPeriod, FREQUENCIES, type PayFrequency } from '../../../lib/schedule';
import { errorText } from './common';

type Field = 'pay_day' | 'anchor_date';

const isoDate: Rule = (value) => (!value || (/^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))) ? null : 'must be a date (YYYY-MM-DD)');

/** Only the chosen frequency's anchor is checked (and sent). */
function fieldsFor(frequency: PayFrequency | '') {
  return {
    pay_day: { label: 'Pay day', rules: frequency === 'monthly' ? [rules.required, rules.wholeNumber(1, 31)] : [] },
    anchor_date: { label: 'First pay date', rules: frequency === 'weekly' || frequency === 'biweekly' ? [rules.required, isoDate] : [] },
  };
}

function requestBody(frequency: PayFrequency | '', values: Record<Field, string>) {
  if (frequency === '') return { pay_schedule: null };
  if (frequency === 'monthly') return { pay_schedule: { frequency, pay_day: Number(values.pay_day.trim()) } };
  if (frequency === 'semi_monthly') return { pay_schedule: { frequency } };
  return { pay_schedule: { frequency, anchor_date: values.anchor_date } };
}

/** Settings: when payroll pays (or no schedule), and the next pay date the server works out. */
export function PayScheduleForm({ employer, onSaved }: { employer: Employer; onSaved: (employer: Employer) => void }) {
  const schedule = employer.pay_schedule;
  const [frequency, setFrequency] = useState<PayFrequency | ''>(schedule?.frequency ?? '');
  const [values, setValues] = useState<Record<Field, string>>({ pay_day: String(schedule?.pay_day ?? ''), anchor_date: schedule?.anchor_date ?? '' });
  const [errors, setErrors] = useState<FieldErrors<Field>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problems = checkFields(values, fieldsFor(frequency));
    setErrors(problems);
    setMessage(null);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    try {
      const saved = await api<Employer>(`/api/employers/${employer.id}`, { method: 'PATCH', body: requestBody(frequency, values) });
      onSaved(saved);
      setMessage({ ok: true, text: saved.pay_schedule ? `Pay schedule saved. Next pay date: ${formatDay(saved.pay_schedule.next_pay_date)}.` : 'Pay schedule cleared.' });
    } catch (reason) {
      const fieldErrors = serverFieldErrors(reason, fieldsFor(frequency));
      setErrors(fieldErrors ?? {});
      if (!fieldErrors) setMessage({ ok: false, text: errorText(reason) });
    } finally {
      setBusy(false);
    }
  };

  const input = (field: Field, label: string, props: Record<string, unknown>) => (
    <div>
      <label htmlFor={`schedule-${field}`}>{label}</label>
      <input
        id={`schedule-${field}`}
        value={values[field]}
        onChange={(e) => setValues((v) => ({ ...v, [field]: e.target.value }))}
        aria-invalid={errors[field] ? true : undefined}
        aria-describedby={errors[field] ? `schedule-${field}-error` : undefined}
        {...props}
      />
      {errors[field] && (
        <p id={`schedule-${field}-error`} className="field-error" role="alert">
          {errors[field]}
        </p>
      )}
    </div>
  );

  return (
    <>
      {schedule ? (
        <dl className="more-dl">
          <dt>Schedule</dt>
          <dd>{describeSchedule(schedule)}</dd>
          <dt>Next pay date</dt>
          <dd data-testid="next-pay-date">{formatDay(schedule.next_pay_date)}</dd>
          <dt>It pays</dt>
          <dd>{formatPeriod(schedule.next_period.start, schedule.next_period.end)}</dd>
        </dl>
      ) : (
        <p className="muted">No pay schedule yet: choose how often payroll pays, and the wizard will suggest each pay period and pay date.</p>
      )}
      <form className="stack" onSubmit={(e) => void submit(e)} noValidate>
        <div className="row">
          <div>
            <label htmlFor="schedule-frequency">How often</label>
            <select id="schedule-frequency" value={frequency} onChange={(e) => setFrequency(e.target.value as PayFrequency | '')}>
              <option value="">No schedule</option>
              {FREQUENCIES.map((f) => (
                <option key={f.value} value={f.value}>
                  {f.label}
                </option>
              ))}
            </select>
          </div>
          {frequency === 'monthly' && input('pay_day', 'Pay day (1-31; 31 is the last day)', { inputMode: 'numeric' })}
          {(frequency === 'weekly' || frequency === 'biweekly') && input('anchor_date', 'First pay date', { type: 'date' })}
        </div>
        <p className="muted">
          Monthly pays the previous calendar month (the month itself on pay day 31); twice a month pays the half-month ending on the pay date; weekly and every two
          weeks pay the 7 or 14 days ending on it.
        </p>
        <div>
          <button type="submit" className="button secondary" disabled={busy}>
            {busy ? 'Saving…' : 'Save pay schedule'}
          </button>
        </div>
        <p role={message && !message.ok ? 'alert' : 'status'} className={message && !message.ok ? 'field-error' : 'muted'}>
          {message?.text}
        </p>
      </form>
    </>
  );
}
