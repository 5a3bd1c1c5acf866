/** Not built yet (issue 11). */
export function ApiAccess() {
  return <h1>API access</h1>;
}
