/** Not built yet (issue 11). */
export function DepositAddresses() {
  return <h1>Deposit addresses</h1>;
}
