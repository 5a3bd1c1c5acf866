/** Not built yet (issue 11). */
export function Billing() {
  return <h1>Billing</h1>;
}
