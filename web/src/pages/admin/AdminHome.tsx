/** Not built yet (issue 11). */
export function AdminHome() {
  return <h1>Operations</h1>;
}
