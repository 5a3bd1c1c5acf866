import { Bar, BarChart, CartesianGrid, Cell, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatBaseUnits } from '../../../../lib/money';
import type { ChartPoint, AmountChartProps } from './types';

// Recharts lives here only: this module is loaded lazily (charts/index.tsx), so it is a chunk of its own.

const HEIGHT = 240;
// The right margin leaves room for the last date tick, centred on the plot's edge.
const MARGIN = { top: 8, right: 24, bottom: 28, left: 4 };

/** A y-axis tick: the dollar value with 2 decimals (ticks are round numbers, so they stay short). */
const yTick = (dollars: number) => formatBaseUnits(BigInt(Math.round(dollars * 1_000_000)));

/** The hover / keyboard-focus tooltip: the point's full date and its exact amount. */
function PointTip({ active, payload, valueName }: { active?: boolean; payload?: readonly { payload?: unknown }[]; valueName: string }) {
  const point = active ? (payload?.[0]?.payload as ChartPoint | undefined) : undefined;
  if (!point) return null;
  return (
    <div className="core-chart-tip" data-testid="chart-tooltip">
      <strong>{point.label}</strong>
      <br />
      {valueName}: {point.amount}
      {point.note && (
        <>
          <br />
          <span className="muted">{point.note}</span>
        </>
      )}
    </div>
  );
}

/** A category axis of the points' ticks, or a time axis over a fixed window with labelled ticks. */
function xAxisOf(timeAxis: AmountChartProps['timeAxis']) {
  if (!timeAxis) return { dataKey: 'tick', interval: 'preserveStartEnd' as const };
  const labels = new Map(timeAxis.ticks.map((t) => [t.at, t.label]));
  return {
    dataKey: 'at',
    type: 'number' as const,
    scale: 'time' as const,
    domain: [timeAxis.from, timeAxis.to],
    ticks: timeAxis.ticks.map((t) => t.at),
    tickFormatter: (at: number) => labels.get(at) ?? '',
    interval: 0 as const,
  };
}

/**
 * Amounts over time with labelled axes (dates on x, dollars on y) and a tooltip per point on hover
 * and on keyboard focus (recharts' accessibility layer: Tab to the chart, then the arrow keys).
 */
export default function AmountChart({ kind, points, xLabel, yLabel, title, desc, valueName, timeAxis }: AmountChartProps) {
  const common = {
    data: points,
    margin: MARGIN,
    title,
    desc,
    accessibilityLayer: true,
  };
  const axes = (
    <>
      <CartesianGrid strokeDasharray="3 3" vertical={false} />
      <XAxis {...xAxisOf(timeAxis)} minTickGap={8} tick={{ fontSize: 11 }} label={{ value: xLabel, position: 'insideBottom', offset: -18, className: 'core-axis-title' }} />
      <YAxis
        width="auto"
        tickFormatter={yTick}
        tick={{ fontSize: 11 }}
        allowDecimals={false}
        label={{ value: yLabel, angle: -90, position: 'insideLeft', className: 'core-axis-title', style: { textAnchor: 'middle' } }}
      />
      <Tooltip content={({ active, payload }) => <PointTip active={active} payload={payload} valueName={valueName} />} isAnimationActive={false} />
    </>
  );
  return (
    <div className="core-chart-box">
      <ResponsiveContainer width="100%" height={HEIGHT}>
        {kind === 'bar' ? (
          <BarChart {...common}>
            {axes}
            <Bar dataKey="value" name={valueName} isAnimationActive={false}>
              {points.map((p) => (
                <Cell key={p.tick} className={p.low ? 'core-bar core-bar-low' : 'core-bar'} />
              ))}
            </Bar>
          </BarChart>
        ) : (
          <LineChart {...common}>
            {axes}
            <Line dataKey="value" name={valueName} type="linear" className="core-line" stroke="var(--accent)" strokeWidth={2} dot={{ r: 3 }} isAnimationActive={false} />
          </LineChart>
        )}
      </ResponsiveContainer>
    </div>
  );
}
