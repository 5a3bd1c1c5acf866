import type { RefObject } from 'react';
import { Link } from 'react-router';
import { shortAddress } from '../../../lib/format';
import { formatBaseUnits, formatUsd } from '../../../lib/money';
import { describeSchedule } from '../../../lib/schedule';
import { CsvImport } from './CsvImport';
import type { Employee } from '../../../lib/api';
import type { PayrollDraft } from './usePayrollDraft';

export interface StepProps {
  employerId: string;
  employees: Employee[];
  signsItself: boolean;
  draft: PayrollDraft;
  headingRef: RefObject<HTMLHeadingElement | null>;
}

/** Step 1 of the payroll wizard: choose employees and amounts (or import a CSV) and the pay period. */
export function PayrollChooseStep({ employerId, employees, draft, headingRef }: StepProps) {
  const { mode, setMode, notice, chosen, total, stepError } = draft;
  return (
    <form className="card" onSubmit={draft.goPreview} noValidate>
      <h2 ref={headingRef} tabIndex={-1}>
        Step 1 of 3: choose who is paid
      </h2>
      <div className="row" role="radiogroup" aria-label="How to choose">
        <label className="core-radio">
          <input type="radio" name="source" checked={mode === 'team'} onChange={() => setMode('team')} /> Choose employees
        </label>
        <label className="core-radio">
          <input type="radio" name="source" checked={mode === 'csv'} onChange={() => setMode('csv')} /> Import a CSV
        </label>
      </div>
      {notice && (
        <p className="core-notice" role="status">
          {notice}
        </p>
      )}
      {mode === 'csv' ? (
        <CsvImport employerId={employerId} employees={employees} onApply={draft.edit.applyCsv} />
      ) : employees.length === 0 ? (
        <p>
          You have no employees yet. <Link to="/dashboard/team/add">Add an employee</Link> first.
        </p>
      ) : (
        <TeamLines employees={employees} draft={draft} />
      )}
      <PayPeriod draft={draft} />
      {mode === 'team' && (
        <>
          <p>
            <strong>
              {chosen.length} {chosen.length === 1 ? 'person' : 'people'}, {formatBaseUnits(total)}
            </strong>
          </p>
          {stepError && (
            <p className="field-error" role="alert">
              {stepError}
            </p>
          )}
          <button type="submit" className="button">
            Continue to preview
          </button>
        </>
      )}
    </form>
  );
}

/** The team as a table of checkboxes and amounts; employees payroll cannot pay are greyed out with the reason. */
function TeamLines({ employees, draft: { lines, edit } }: { employees: Employee[]; draft: PayrollDraft }) {
  return (
    <>
      <div className="row">
        <button type="button" className="link-button" onClick={edit.selectPayable}>
          Select everyone payable
        </button>
        <button type="button" className="link-button" onClick={edit.selectNone}>
          Select none
        </button>
      </div>
      <div className="table-wrap core-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Pay</th>
              <th scope="col">Employee</th>
              <th scope="col">Amount (USD)</th>
            </tr>
          </thead>
          <tbody>
            {employees.map((e) => {
              const reason = e.unpayable_reason;
              const line = lines[e.id]!;
              return (
                <tr key={e.id} className={reason ? 'core-row-disabled' : undefined}>
                  <td>
                    <input
                      type="checkbox"
                      className="core-checkbox"
                      id={`pay-${e.id}`}
                      checked={line.selected && !reason}
                      disabled={reason !== null}
                      onChange={(ev) => edit.setLine(e.id, { ...line, selected: ev.target.checked })}
                      aria-label={`Pay ${e.full_name}`}
                    />
                  </td>
                  <td>
                    <label htmlFor={`pay-${e.id}`} className="core-inline-label">
                      {e.full_name}
                    </label>
                    <span className="muted core-hint">{reason ? `Cannot be paid: ${reason}` : `${shortAddress(e.wallet_address!)} · ${formatUsd(e.annual_salary_usd)} a year`}</span>
                  </td>
                  <td>
                    <input
                      id={`amount-${e.id}`}
                      className="core-amount"
                      inputMode="decimal"
                      aria-label={`Amount for ${e.full_name} (USD)`}
                      value={line.amount}
                      disabled={reason !== null || !line.selected}
                      onChange={(ev) => edit.setLine(e.id, { ...line, amount: ev.target.value, edited: true })}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The pay period and pay date: the schedule's next ones when there is a schedule (editable), else a hint to set one. */
function PayPeriod({ draft }: { draft: PayrollDraft }) {
  return (
    <fieldset className="core-fieldset">
      <legend>Pay period and pay date (optional)</legend>
      {draft.schedule ? (
        <p className="muted core-hint">
          From your pay schedule ({describeSchedule(draft.schedule)}): the next pay date and the period it pays. Amounts start at each employee&apos;s pay for the
          period.
        </p>
      ) : (
        <p className="muted core-hint">
          No pay schedule yet. <Link to="/dashboard/settings">Set one in Settings</Link> and each run starts with its pay period and pay date.
        </p>
      )}
      <div className="row">
        <div>
          <label htmlFor="period-start">Pay period start</label>
          <input id="period-start" type="date" value={draft.periodStart} onChange={(e) => draft.setPeriodStart(e.target.value)} />
        </div>
        <div>
          <label htmlFor="period-end">Pay period end</label>
          <input id="period-end" type="date" value={draft.periodEnd} onChange={(e) => draft.setPeriodEnd(e.target.value)} />
        </div>
        <div>
          <label htmlFor="pay-date">Pay date</label>
          <input id="pay-date" type="date" value={draft.payDate} onChange={(e) => draft.setPayDate(e.target.value)} />
        </div>
      </div>
    </fieldset>
  );
}
