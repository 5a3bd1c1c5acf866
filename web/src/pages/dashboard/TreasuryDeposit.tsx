/** Not built yet (issue 11). */
export function TreasuryDeposit() {
  return <h1>Deposit</h1>;
}
