/** Not built yet (issue 11). */
export function Payroll() {
  return <h1>Payroll</h1>;
}
