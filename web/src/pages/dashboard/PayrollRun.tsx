/** Not built yet (issue 11). */
export function PayrollRun() {
  return <h1>Payroll run</h1>;
}
