import { useEmployerId } from '../../session';
import { Link, useLocation } from 'react-router';
import { DataTable, type Column } from '../../components/DataTable';
import { Async, Empty } from '../../components/States';
import { shortAddress } from '../../lib/format';
import { formatUsd } from '../../lib/money';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { StatusPill } from './components/StatusPill';
import type { Employee, Team as TeamList } from '../../lib/api';
import { usePageTitle } from '../../company';

/** The label of an employee's state: removed, paused, awaiting review, or active. */
export function employeeState(e: Employee): string {
  if (e.status === 'removed') return 'removed';
  if (e.payroll_paused) return 'paused';
  if (e.manual_review_status === 'pending') return 'pending';
  if (e.manual_review_status === 'rejected') return 'rejected';
  return 'active';
}

const STATE_TEXT: Record<string, string> = { pending: 'wallet review', rejected: 'wallet rejected' };
const stateText = (e: Employee) => STATE_TEXT[employeeState(e)] ?? employeeState(e);

const COLUMNS: Column<Employee>[] = [
  { key: 'name', label: 'Name', value: (e) => e.full_name, render: (e) => <Link to={`/dashboard/team/${e.id}`}>{e.full_name}</Link> },
  { key: 'email', label: 'Email', value: (e) => e.email, render: (e) => e.email },
  {
    key: 'wallet',
    label: 'Wallet',
    value: (e) => e.wallet_address,
    render: (e) => (e.wallet_address ? <code title={e.wallet_address}>{shortAddress(e.wallet_address)}</code> : <span className="muted">none</span>),
  },
  { key: 'salary', label: 'Annual salary', num: true, value: (e) => e.annual_salary_usd, render: (e) => formatUsd(e.annual_salary_usd) },
  { key: 'status', label: 'Status', value: stateText, render: (e) => <StatusPill status={employeeState(e)} label={stateText(e)} /> },
];

/** /dashboard/team: the active employees. */
export function Team() {
  usePageTitle('Team');
  const employerId = useEmployerId();
  const location = useLocation();
  const notice = (location.state as { notice?: string } | null)?.notice;
  const team = useApi<TeamList>(employerId ? `/api/employers/${employerId}/team?limit=500` : null);
  if (!employerId) return <NeedsEmployer title="Team" />;

  return (
    <>
      <div className="row core-space-between">
        <h1>Team</h1>
        <Link className="button core-link-button" to="/dashboard/team/add">
          Add employee
        </Link>
      </div>
      {notice && (
        <p className="core-notice" role="status">
          {notice}
        </p>
      )}
      <Async loaded={team}>
        {(data) =>
          data.employees.length === 0 ? (
            <Empty>
              No employees yet. <Link to="/dashboard/team/add">Add your first employee</Link>.
            </Empty>
          ) : (
            <section className="card" aria-label="Employees">
              <DataTable scroll="core" caption={`${data.total} ${data.total === 1 ? 'employee' : 'employees'}`} columns={COLUMNS} rows={data.employees} rowKey={(e) => e.id} tools={{ name: 'team', paged: data.total > data.employees.length }} />
            </section>
          )
        }
      </Async>
    </>
  );
}
