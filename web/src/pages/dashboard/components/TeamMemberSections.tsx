import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { ConfirmButton } from '../../../components/ConfirmButton';
import { Async, Empty } from '../../../components/States';
import type { Loaded } from '../../../hooks';
import { api, type Employee, type Transactions } from '../../../lib/api';
import { checkFields, rules, serverFieldErrors } from '../../../lib/form';
import { formatDate, shortAddress } from '../../../lib/format';
import { formatUsd, fromUnits, monthlyUnits, normaliseAmountInput, toUnits } from '../../../lib/money';
import { DataTable, type Column } from '../../../components/DataTable';
import { StatusPill } from './StatusPill';

/** Sends `PATCH` changes to one employee; `patch` resolves whether it worked. */
export type PatchMember = (body: Record<string, unknown>, done: string) => Promise<boolean>;

/** The employee page's notice and error, and the `PATCH .../team/{employeeId}` every section sends through. */
export function useMemberPatch(path: string, onChanged: () => void) {
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const patch: PatchMember = async (body, done) => {
    setError(null);
    setMessage(null);
    try {
      await api<Employee>(path, { method: 'PATCH', body });
      setMessage(done);
      onChanged();
      return true;
    } catch (reason) {
      setError((reason as Error).message);
      return false;
    }
  };

  return { message, setMessage, error, setError, patch };
}

export function MemberFacts({ employee }: { employee: Employee }) {
  return (
    <section className="card" aria-labelledby="details-heading">
      <h2 id="details-heading">Details</h2>
      <dl className="core-details">
        <dt>Email</dt>
        <dd className="core-break">{employee.email}</dd>
        <dt>Wallet (Tempo)</dt>
        <dd className="core-break">{employee.wallet_address ? <code>{employee.wallet_address}</code> : 'none: payroll cannot pay this employee yet'}</dd>
        {employee.solana_wallet_address && (
          <>
            <dt>Wallet (Solana)</dt>
            <dd className="core-break">
              <code>{employee.solana_wallet_address}</code>
            </dd>
          </>
        )}
        <dt>Annual salary</dt>
        <dd>
          {formatUsd(employee.annual_salary_usd)} <span className="muted">({formatUsd(fromUnits(monthlyUnits(employee.annual_salary_usd)))} a month)</span>
        </dd>
        <dt>Department</dt>
        <dd>{employee.department ?? '—'}</dd>
        <dt>Payroll</dt>
        <dd>{employee.payroll_paused ? 'paused' : 'included'}</dd>
        <dt>Wallet review</dt>
        <dd>{employee.manual_review_status}</dd>
        <dt>KYC</dt>
        <dd>{employee.kyc_status.replace(/_/g, ' ')}</dd>
        <dt>Signed in</dt>
        <dd>{employee.linked_user ? 'yes' : 'not yet'}</dd>
        <dt>Added</dt>
        <dd>{formatDate(employee.created_at)}</dd>
      </dl>
    </section>
  );
}

/** Shown while the employee's new payout wallet waits for the employer's approval. */
export function WalletReview({ employee, patch }: { employee: Employee; patch: PatchMember }) {
  return (
    <section className="card" aria-labelledby="review-heading">
      <h2 id="review-heading">Wallet change to review</h2>
      <p>
        The employee changed their payout wallet{employee.wallet_address ? ` to ${shortAddress(employee.wallet_address)}` : ''}. Payroll skips them until you approve it.
      </p>
      <div className="row">
        <ConfirmButton question="Approve the new wallet? Payroll will pay it from the next run." confirmLabel="Approve wallet" onConfirm={() => patch({ manual_review: { status: 'approved' } }, 'Wallet approved.').then(() => undefined)}>
          Approve wallet
        </ConfirmButton>
        <ConfirmButton danger question="Reject the new wallet? Payroll will not pay this employee until it is reviewed again." confirmLabel="Reject wallet" onConfirm={() => patch({ manual_review: { status: 'rejected' } }, 'Wallet rejected.').then(() => undefined)}>
          Reject wallet
        </ConfirmButton>
      </div>
    </section>
  );
}

const SALARY_CHECK = { annual_salary_usd: { label: 'Salary', rules: [rules.required, rules.usdAmount] } };

/** The salary form: a field error stays beside it, any other failure goes to the page's error. */
export function SalaryEditor({
  employee,
  path,
  setMessage,
  setError,
  onChanged,
}: {
  employee: Employee;
  path: string;
  setMessage: (message: string) => void;
  setError: (error: string) => void;
  onChanged: () => void;
}) {
  const [salary, setSalary] = useState(fromUnits(toUnits(employee.annual_salary_usd) ?? 0n));
  const [salaryError, setSalaryError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const saveSalary = async (event: FormEvent) => {
    event.preventDefault();
    const problem = checkFields({ annual_salary_usd: salary }, SALARY_CHECK).annual_salary_usd;
    setSalaryError(problem ?? null);
    if (problem) return;
    setBusy(true);
    try {
      await api<Employee>(path, { method: 'PATCH', body: { annual_salary_usd: normaliseAmountInput(salary) } });
      setMessage('Salary updated.');
      onChanged();
    } catch (reason) {
      const field = serverFieldErrors(reason, SALARY_CHECK)?.annual_salary_usd;
      if (field) setSalaryError(field);
      else setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="salary-heading">
      <h2 id="salary-heading">Edit salary</h2>
      <form className="inline-form" onSubmit={(e) => void saveSalary(e)} noValidate>
        <label htmlFor="member-salary">Annual salary (USD)</label>
        <input
          id="member-salary"
          inputMode="decimal"
          value={salary}
          onChange={(e) => setSalary(e.target.value)}
          aria-invalid={salaryError ? true : undefined}
          aria-describedby={salaryError ? 'member-salary-error' : undefined}
        />
        <button type="submit" className="button" disabled={busy}>
          Save salary
        </button>
      </form>
      {salaryError && (
        <p id="member-salary-error" className="field-error" role="alert">
          {salaryError}
        </p>
      )}
    </section>
  );
}

/** Pause or resume payroll for the employee, or remove them (then back to the team list). */
export function PayrollAndRemoval({ employee, patch }: { employee: Employee; patch: PatchMember }) {
  const navigate = useNavigate();
  return (
    <section className="card" aria-labelledby="actions-heading">
      <h2 id="actions-heading">Payroll and removal</h2>
      <div className="row core-actions">
        {employee.payroll_paused ? (
          <ConfirmButton question={`Resume payroll for ${employee.full_name}? They will be included in new runs.`} confirmLabel="Resume payroll" onConfirm={() => patch({ payroll_paused: false }, 'Payroll resumed.').then(() => undefined)}>
            Resume payroll
          </ConfirmButton>
        ) : (
          <ConfirmButton question={`Pause payroll for ${employee.full_name}? New runs will leave them out until you resume.`} confirmLabel="Pause payroll" onConfirm={() => patch({ payroll_paused: true }, 'Payroll paused.').then(() => undefined)}>
            Pause payroll
          </ConfirmButton>
        )}
        <ConfirmButton
          danger
          question={`Remove ${employee.full_name} from your team? Their payment history stays, but they can no longer be paid or edited.`}
          confirmLabel="Remove employee"
          onConfirm={async () => {
            if (await patch({ remove: true }, 'Removed.')) navigate('/dashboard/team', { state: { notice: `${employee.full_name} was removed.` } });
          }}
        >
          Remove employee
        </ConfirmButton>
      </div>
    </section>
  );
}

export type Transaction = Transactions['transactions'][number];

/** When a payment happened: when its run was finalised, else when it was made. */
export const paymentDate = (t: Transaction) => t.finalized_at ?? t.created_at;

const EMPLOYEE_PAYMENT_COLUMNS: Column<Transaction>[] = [
  { key: 'date', label: 'Date', value: paymentDate, render: (t) => formatDate(paymentDate(t)) },
  { key: 'amount', label: 'Amount', num: true, value: (t) => t.amount_usd, render: (t) => formatUsd(t.amount_usd) },
  { key: 'status', label: 'Status', value: (t) => t.status, render: (t) => <StatusPill status={t.status} /> },
  { key: 'run', label: 'Run', render: (t) => <Link to={`/dashboard/payroll/${t.payroll_run_id}`}>View run</Link> },
];

export function RecentPayments({ payments }: { payments: Loaded<Transactions> }) {
  return <PaymentsCard headingId="payments-heading" transactions={payments} columns={EMPLOYEE_PAYMENT_COLUMNS} empty="No payments to this employee yet." />;
}

/** A card listing payroll payments ("Recent payments"), or a line saying there are none. */
export function PaymentsCard(props: { headingId: string; transactions: Loaded<Transactions>; columns: Column<Transaction>[]; empty: string }) {
  return (
    <section className="card" aria-labelledby={props.headingId}>
      <h2 id={props.headingId}>Recent payments</h2>
      <Async loaded={props.transactions}>
        {(data) =>
          data.transactions.length === 0 ? (
            <Empty>{props.empty}</Empty>
          ) : (
            <DataTable
              scroll="core"
              label="Recent payments"
              columns={props.columns}
              rows={data.transactions}
              rowKey={(t) => t.id}
              tools={{ name: 'payments', paged: data.total > data.transactions.length }}
            />
          )
        }
      </Async>
    </section>
  );
}
