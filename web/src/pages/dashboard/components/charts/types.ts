/** One point of an amount chart: what is plotted, and what its tick, tooltip and table say. */
export interface ChartPoint {
  /** The x-axis tick (short date); unique per chart. */
  tick: string;
  /** The full date, for the tooltip and the table. */
  label: string;
  /** Dollars, for plotting only: every amount a person reads is `amount`. */
  value: number;
  /** The exact amount with 2 decimals (lib/money.ts). */
  amount: string;
  /** Drawn in the warning colour (a runway month that no longer covers payroll). */
  low?: boolean;
  /** A second line for the tooltip and the table. */
  note?: string;
  /** On a time axis: the point's instant (Unix ms), so gaps between observations stay gaps. */
  at?: number;
}

export interface AmountChartProps {
  kind: 'bar' | 'line';
  points: ChartPoint[];
  /** The axis titles. */
  xLabel: string;
  yLabel: string;
  /** The SVG's title and description (the figure's caption is the fuller text alternative). */
  title: string;
  desc: string;
  /** What `amount` is, in the tooltip and the table ("Balance", "Paid"). */
  valueName: string;
  /**
   * A time axis over this window (Unix ms, with its tick labels): points sit at their `at`, so a
   * series that starts late starts late on the axis. Without it, points are evenly spaced categories.
   */
  timeAxis?: { from: number; to: number; ticks: { at: number; label: string }[] };
}

/** Base units (6 decimals) as dollars for plotting; only the axis position depends on it. */
export const plotDollars = (units: bigint): number => Number(units) / 1_000_000;
