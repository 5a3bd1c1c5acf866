import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { usePageTitle } from '../../company';
import { DataTable } from '../../components/DataTable';
import { Pager } from '../../components/Pager';
import { PayslipPage, payslipColumns, period } from '../../components/Payslip';
import { Async, Empty } from '../../components/States';
import { formatPayDate } from '../../lib/schedule';
import type { Schema } from '../../lib/api';
import { useApi } from '../../hooks';
import { EmployeePicker, useEmployeeChoice } from './components/EmployeePicker';

const PAGE = 50;

/** Where a payslip of this record opens (the record rides along for users employed more than once). */
export const portalPayslipPath = (runId: string, employeeId: string) => `/portal/payslips/${runId}?employee=${employeeId}`;

const COLUMNS = payslipColumns(
  [
    { key: 'date', label: 'Pay date', value: (s) => s.pay_date ?? s.created_at, render: (s) => (s.pay_date ? formatPayDate(s.pay_date) : <span className="muted">not paid yet</span>) },
    { key: 'period', label: 'Pay period', value: period, render: period },
  ],
  (s) => portalPayslipPath(s.run_id, s.employee_id),
);

/** `/portal/payslips`: the employee's payslips, newest first. */
export function PortalPayslips() {
  usePageTitle('Payslips');
  const { ids, employeeId, choose } = useEmployeeChoice();
  const [page, setPage] = useState(1);
  const loaded = useApi<Schema<'EmployeePayslips'>>(employeeId ? `/api/employees/${employeeId}/payslips?limit=${PAGE}&page=${page}` : null);
  return (
    <>
      <h1>Payslips</h1>
      <EmployeePicker
        ids={ids}
        employeeId={employeeId}
        onChoose={(id) => {
          setPage(1);
          choose(id);
        }}
      />
      {!employeeId ? (
        <Empty>You are not on an employer's payroll yet.</Empty>
      ) : (
        <Async loaded={loaded} label="Loading your payslips…">
          {(data) =>
            data.payslips.length === 0 ? (
              <Empty>No payslips yet. Each salary payment gets one here.</Empty>
            ) : (
              <section className="card">
                <DataTable caption="Payslips, newest first" columns={COLUMNS} rows={data.payslips} rowKey={(s) => s.run_id} tools={{ name: 'payslips', paged: data.total > data.payslips.length }} />
                <Pager label="Payslips" page={page} limit={PAGE} total={data.total} onPage={setPage} busy={loaded.loading} />
              </section>
            )
          }
        </Async>
      )}
    </>
  );
}

/** `/portal/payslips/:runId?employee=…`: one payslip. */
export function PortalPayslip() {
  usePageTitle('Payslip');
  const { runId = '' } = useParams();
  const { employeeId } = useEmployeeChoice();
  const back = <Link to={employeeId ? `/portal/payslips?employee=${employeeId}` : '/portal/payslips'}>← Payslips</Link>;
  if (!employeeId) {
    return (
      <>
        <h1>Payslip</h1>
        <Empty>You are not on an employer's payroll yet.</Empty>
      </>
    );
  }
  return <PayslipPage employeeId={employeeId} runId={runId} back={back} />;
}
