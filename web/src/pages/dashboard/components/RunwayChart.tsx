import { formatBaseUnits } from '../../../lib/money';
import { ChartFigure, plotDollars, type ChartPoint } from './charts';

const MONTHS = 12;

/**
 * Months of payroll the treasury covers: one bar per coming month with the balance left after
 * paying it, months on the x axis and dollars on the y axis, a tooltip per bar. The figure's
 * caption is the text alternative (and the data is a table behind "Show the data").
 */
export function RunwayChart({ availableUnits, monthlyUnits }: { availableUnits: bigint; monthlyUnits: bigint }) {
  if (monthlyUnits === 0n) {
    return <p className="muted">No active salaries yet: add employees with an annual salary to see how long the treasury lasts.</p>;
  }
  const covered = Number((availableUnits * 10n) / monthlyUnits) / 10; // one decimal, rounded down
  const points: ChartPoint[] = Array.from({ length: MONTHS }, (_, i) => {
    const left = availableUnits - monthlyUnits * BigInt(i + 1);
    const balance = left > 0n ? left : 0n;
    return {
      tick: String(i + 1),
      label: `After month ${i + 1}`,
      value: plotDollars(balance),
      amount: formatBaseUnits(balance),
      low: balance < monthlyUnits,
      ...(left < 0n ? { note: `${formatBaseUnits(-left)} short` } : {}),
    };
  });
  const summary =
    covered >= 1
      ? `The available balance of ${formatBaseUnits(availableUnits)} covers ${covered.toFixed(1)} months of payroll at ${formatBaseUnits(monthlyUnits)} a month.`
      : `The available balance of ${formatBaseUnits(availableUnits)} does not cover one month of payroll (${formatBaseUnits(monthlyUnits)}).`;
  const fundedMonths = points.filter((p) => p.value > 0).length;

  return (
    <ChartFigure
      kind="bar"
      points={points}
      xLabel="Months from now"
      yLabel="Balance left"
      valueName="Balance left"
      title="Treasury runway"
      desc={`${summary} Bars show the balance left after each of the next ${MONTHS} months; ${fundedMonths} of them end with money left.`}
      lead={
        <p className="stat" aria-hidden="true">
          {covered >= 100 ? '100+' : covered.toFixed(1)} <span className="core-stat-unit">months</span>
        </p>
      }
      caption={
        <>
          {summary} Bars: balance left after each of the next {MONTHS} months, if salaries stay as they are and nothing is deposited ({fundedMonths} of them end
          with money left; amber: less than a month of payroll left).
        </>
      }
    />
  );
}
