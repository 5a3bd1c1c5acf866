/** Not built yet (issue 11). */
export function Compliance() {
  return <h1>Compliance</h1>;
}
