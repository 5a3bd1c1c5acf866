/** Not built yet (issue 11). */
export function Agents() {
  return <h1>Agents</h1>;
}
