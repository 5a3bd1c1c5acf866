/** Not built yet (issue 11). */
export function Demo() {
  return <h1>Demo agent</h1>;
}
