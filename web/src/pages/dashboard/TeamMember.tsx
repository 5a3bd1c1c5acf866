import { useEmployerId } from '../../session';
import { Link, useParams } from 'react-router';
import type { Employee, Team, Transactions } from '../../lib/api';
import { Empty, ErrorState, Loading } from '../../components/States';
import { useApi, type Loaded } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { StatusPill } from './components/StatusPill';
import { MemberFacts, PayrollAndRemoval, RecentPayments, SalaryEditor, useMemberPatch, WalletReview } from './components/TeamMemberSections';
import { employeeState } from './Team';
import { usePageTitle } from '../../company';

/** /dashboard/team/:employeeId: details, salary, pause, wallet review, removal (PATCH .../team/{employeeId}). */
export function TeamMember() {
  const employerId = useEmployerId();
  const { employeeId = '' } = useParams();
  const team = useApi<Team>(employerId ? `/api/employers/${employerId}/team?limit=500` : null);
  const payments = useApi<Transactions>(employerId && /^[0-9a-f-]{36}$/i.test(employeeId) ? `/api/transactions?employeeId=${employeeId}&limit=10` : null);
  usePageTitle(team.data?.employees.find((e) => e.id === employeeId)?.full_name ?? 'Employee');
  if (!employerId) return <NeedsEmployer title="Employee" />;
  if (team.error) return <ErrorState error={team.error} onRetry={team.reload} />;
  if (!team.data) return <Loading />;
  const employee = team.data.employees.find((e) => e.id === employeeId);
  if (!employee) {
    return (
      <>
        <p>
          <Link to="/dashboard/team">← Team</Link>
        </p>
        <h1>Employee not found</h1>
        <Empty>This employee is not on your active team (they may have been removed).</Empty>
      </>
    );
  }
  return <MemberDetails employerId={employerId} employee={employee} payments={payments} onChanged={team.reload} />;
}

function MemberDetails({
  employerId,
  employee,
  payments,
  onChanged,
}: {
  employerId: string;
  employee: Employee;
  payments: Loaded<Transactions>;
  onChanged: () => void;
}) {
  const path = `/api/employers/${employerId}/team/${employee.id}`;
  const { message, setMessage, error, setError, patch } = useMemberPatch(path, onChanged);
  const state = employeeState(employee);

  return (
    <>
      <p>
        <Link to="/dashboard/team">← Team</Link>
      </p>
      <div className="row">
        <h1>{employee.full_name}</h1>
        <StatusPill status={state} />
      </div>
      {message && (
        <p className="core-notice" role="status">
          {message}
        </p>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}

      <MemberFacts employee={employee} />
      {employee.manual_review_status === 'pending' && <WalletReview employee={employee} patch={patch} />}
      <SalaryEditor employee={employee} path={path} setMessage={setMessage} setError={setError} onChanged={onChanged} />
      <PayrollAndRemoval employee={employee} patch={patch} />
      <RecentPayments payments={payments} />
    </>
  );
}
