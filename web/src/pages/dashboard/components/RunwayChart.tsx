import { useId } from 'react';
import { formatBaseUnits } from '../../../lib/money';

const MONTHS = 12;
const WIDTH = 360;
const HEIGHT = 160;
const PAD = { top: 10, right: 8, bottom: 24, left: 8 };

/**
 * Months of payroll the treasury covers, drawn by hand: one bar per coming month with the balance
 * left after paying it. The figure's caption is the text alternative (the SVG is labelled by it too).
 */
export function RunwayChart({ availableUnits, monthlyUnits }: { availableUnits: bigint; monthlyUnits: bigint }) {
  const id = useId();
  if (monthlyUnits === 0n) {
    return <p className="muted">No active salaries yet: add employees with an annual salary to see how long the treasury lasts.</p>;
  }
  const covered = Number((availableUnits * 10n) / monthlyUnits) / 10; // one decimal, rounded down
  const balances = Array.from({ length: MONTHS }, (_, i) => {
    const left = availableUnits - monthlyUnits * BigInt(i + 1);
    return left > 0n ? left : 0n;
  });
  const max = availableUnits > 0n ? availableUnits : 1n;
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const slot = innerW / MONTHS;
  const summary =
    covered >= 1
      ? `The available balance of ${formatBaseUnits(availableUnits)} covers ${covered.toFixed(1)} months of payroll at ${formatBaseUnits(monthlyUnits)} a month.`
      : `The available balance of ${formatBaseUnits(availableUnits)} does not cover one month of payroll (${formatBaseUnits(monthlyUnits)}).`;
  const fundedMonths = balances.filter((b) => b > 0n).length;

  return (
    <figure className="core-runway">
      <p className="stat" aria-hidden="true">
        {covered >= 100 ? '100+' : covered.toFixed(1)} <span className="core-stat-unit">months</span>
      </p>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${id}-title ${id}-desc`} className="core-chart" preserveAspectRatio="none">
        <title id={`${id}-title`}>Treasury runway</title>
        <desc id={`${id}-desc`}>
          {summary} Bars show the balance left after each of the next {MONTHS} months; {fundedMonths} of them end with money left.
        </desc>
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={PAD.top + innerH} y2={PAD.top + innerH} className="core-chart-axis" />
        {balances.map((balance, i) => {
          const h = Number((balance * 1000n) / max) / 1000 * innerH;
          const x = PAD.left + i * slot + slot * 0.15;
          return (
            <g key={i}>
              <rect x={x} y={PAD.top + innerH - h} width={slot * 0.7} height={Math.max(h, 0)} className={balance >= monthlyUnits ? 'core-bar' : 'core-bar core-bar-low'} />
              <text x={x + slot * 0.35} y={HEIGHT - 8} textAnchor="middle" className="core-chart-label">
                {i + 1}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="muted">
        {summary} Bars: balance left after each month (months 1–{MONTHS}).
      </figcaption>
    </figure>
  );
}
