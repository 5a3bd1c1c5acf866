/** Not built yet (issue 11). */
export function Cards() {
  return <h1>Cards</h1>;
}
