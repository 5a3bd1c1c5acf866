/** Not built yet (issue 11). */
export function PayrollNew() {
  return <h1>New payroll run</h1>;
}
