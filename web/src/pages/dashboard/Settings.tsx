/** Not built yet (issue 11). */
export function Settings() {
  return <h1>Settings</h1>;
}
