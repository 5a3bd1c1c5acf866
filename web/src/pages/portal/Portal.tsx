import { Link } from 'react-router';
import { Empty } from '../../components/States';
import { useApi } from '../../hooks';
import { AdvancePanel } from './components/AdvancePanel';
import { BalanceCard, useStream, type WalletBalance } from './components/Balance';
import { CardPanel } from './components/CardPanel';
import { DepositAddressPanel } from './components/DepositAddressPanel';
import { EmployeePicker, useEmployeeChoice } from './components/EmployeePicker';
import { OfframpPanel } from './components/OfframpPanel';

/** `/portal`: the employee's pay: live balance, advance, cash-out, card and deposit address. */
export function Portal() {
  const { ids, employeeId, choose } = useEmployeeChoice();
  return (
    <>
      <h1>Your pay</h1>
      {!employeeId ? (
        <Empty>You are not on an employer's payroll yet. When your employer adds you with this email address, your pay shows here.</Empty>
      ) : (
        <>
          <EmployeePicker ids={ids} employeeId={employeeId} onChoose={(id) => id && choose(id)} />
          <EmployeePay key={employeeId} employeeId={employeeId} />
        </>
      )}
    </>
  );
}

function EmployeePay({ employeeId }: { employeeId: string }) {
  const balance = useApi<WalletBalance>(`/api/employees/${employeeId}/balance`, { refreshMs: 15_000 });
  const wallet = balance.data?.wallet_address ?? null;
  const { lookup, reload: reloadStream } = useStream(wallet ? employeeId : null);
  return (
    <div className="ap-portal">
      <BalanceCard balance={balance} lookup={lookup} />
      <div className="grid ap-portal-grid">
        <AdvancePanel
          employeeId={employeeId}
          lookup={lookup}
          onClaimed={() => {
            reloadStream();
            balance.reload();
          }}
        />
        <CardPanel employeeId={employeeId} />
      </div>
      <DepositAddressPanel employeeId={employeeId} />
      <OfframpPanel employeeId={employeeId} walletBalance={balance.data ? BigInt(balance.data.balance) : null} />
      <p>
        <Link to={`/portal/activity${employeeId ? `?employee=${employeeId}` : ''}`}>See all your activity</Link>
      </p>
    </div>
  );
}
