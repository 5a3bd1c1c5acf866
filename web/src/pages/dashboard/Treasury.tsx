/** Not built yet (issue 11). */
export function Treasury() {
  return <h1>Treasury</h1>;
}
