/** Not built yet (issue 11). */
export function PortalActivity() {
  return <h1>Activity</h1>;
}
