/** Not built yet (issue 11). */
export function Overview() {
  return <h1>Overview</h1>;
}
