/** Not built yet (issue 11). */
export function Team() {
  return <h1>Team</h1>;
}
