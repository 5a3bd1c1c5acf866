import { Async } from '../../../components/States';
import { useApi } from '../../../hooks';
import type { Schema } from '../../../lib/api';
import { formatMonth } from '../../../lib/format';
import { formatBaseUnits, usdToUnits } from '../../../lib/money';
import { ChartFigure, plotDollars, type ChartPoint } from './charts';

type CostHistory = Schema<'PayrollCostHistory'>;

const MONTHS = 12;
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function pointsOf(history: CostHistory): ChartPoint[] {
  return history.months.map((m) => {
    const paid = usdToUnits(m.paid_usd);
    return {
      tick: formatMonth(m.month, true),
      label: formatMonth(m.month),
      value: plotDollars(paid),
      amount: formatBaseUnits(paid),
      note: m.runs === 0 ? 'No payroll paid' : `${plural(m.runs, 'run', 'runs')}, ${plural(m.recipients, 'person', 'people')} paid`,
    };
  });
}

/** What confirmed payroll runs paid in each of the last 12 UTC months (zero months included). */
export function PayrollCostsCard({ employerId }: { employerId: string }) {
  const history = useApi<CostHistory>(`/api/employers/${employerId}/payroll/cost-history?months=${MONTHS}`);
  return (
    <section className="card" aria-labelledby="payroll-cost-heading">
      <h2 id="payroll-cost-heading">Payroll cost by month</h2>
      <Async loaded={history} label="Loading payroll costs…">
        {(data) => {
          const total = data.months.reduce((sum, m) => sum + usdToUnits(m.paid_usd), 0n);
          const runs = data.months.reduce((sum, m) => sum + m.runs, 0);
          const summary =
            runs === 0
              ? `No payroll was paid in the last ${MONTHS} months.`
              : `${formatBaseUnits(total)} paid by ${plural(runs, 'payroll run', 'payroll runs')} in the last ${MONTHS} months.`;
          return (
            <ChartFigure
              kind="bar"
              points={pointsOf(data)}
              xLabel="Month (UTC)"
              yLabel="Paid"
              valueName="Paid"
              title="Payroll cost by month"
              desc={summary}
              caption={<>{summary} Each bar is what confirmed runs paid that month (payments that failed are not counted), by the month the run was confirmed.</>}
            />
          );
        }}
      </Async>
    </section>
  );
}
