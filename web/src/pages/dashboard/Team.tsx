import { useEmployerId } from '../../session';
import { Link, useLocation } from 'react-router';
import { Async, Empty } from '../../components/States';
import { shortAddress } from '../../lib/format';
import { formatUsd } from '../../lib/money';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { StatusPill } from './components/StatusPill';
import type { Employee, Team as TeamList } from '../../lib/api';

/** The label of an employee's state: removed, paused, awaiting review, or active. */
export function employeeState(e: Employee): string {
  if (e.status === 'removed') return 'removed';
  if (e.payroll_paused) return 'paused';
  if (e.manual_review_status === 'pending') return 'pending';
  if (e.manual_review_status === 'rejected') return 'rejected';
  return 'active';
}

const STATE_TEXT: Record<string, string> = { pending: 'wallet review', rejected: 'wallet rejected' };

/** /dashboard/team: the active employees. */
export function Team() {
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
            <div className="table-wrap card core-flush core-scroll">
              <table>
                <caption className="core-caption">
                  {data.total} {data.total === 1 ? 'employee' : 'employees'}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Email</th>
                    <th scope="col">Wallet</th>
                    <th scope="col" className="num">
                      Annual salary
                    </th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {data.employees.map((e) => {
                    const state = employeeState(e);
                    return (
                      <tr key={e.id}>
                        <td>
                          <Link to={`/dashboard/team/${e.id}`}>{e.full_name}</Link>
                        </td>
                        <td className="core-break">{e.email}</td>
                        <td>{e.wallet_address ? <code title={e.wallet_address}>{shortAddress(e.wallet_address)}</code> : <span className="muted">none</span>}</td>
                        <td className="num">{formatUsd(e.annual_salary_usd)}</td>
                        <td>
                          <StatusPill status={state} label={STATE_TEXT[state] ?? state} />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </Async>
    </>
  );
}
