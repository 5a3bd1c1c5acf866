/** Not built yet (issue 11). */
export function TeamAdd() {
  return <h1>Add an employee</h1>;
}
