/** Not built yet (issue 11). */
export function TeamMember() {
  return <h1>Employee</h1>;
}
