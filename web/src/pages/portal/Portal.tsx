/** Not built yet (issue 11). */
export function Portal() {
  return <h1>Your pay</h1>;
}
