import { lazy, Suspense, type ReactNode } from 'react';
import type { AmountChartProps } from './types';

export { plotDollars, type ChartPoint } from './types';

/** The charting library is loaded with the first chart, in a chunk of its own (not the main bundle). */
const AmountChart = lazy(() => import('./AmountChart'));

/**
 * A chart as a figure: an optional lead (a headline figure), the chart, a caption that is its text
 * alternative, and the data itself as a table behind a disclosure (what a screen reader or a
 * reader who wants exact numbers uses).
 */
export function ChartFigure({ lead, caption, ...chart }: AmountChartProps & { lead?: ReactNode; caption: ReactNode }) {
  const hasNotes = chart.points.some((p) => p.note);
  return (
    <figure className="core-chart-figure">
      {lead}
      <Suspense fallback={<div className="core-chart-box" aria-hidden="true" />}>
        <AmountChart {...chart} />
      </Suspense>
      <figcaption className="muted">{caption}</figcaption>
      <details className="core-chart-data">
        <summary>Show the data</summary>
        <div className="table-wrap core-scroll">
          <table>
            <caption className="core-caption">{chart.title}</caption>
            <thead>
              <tr>
                <th scope="col">{chart.xLabel}</th>
                <th scope="col" className="num">
                  {chart.valueName}
                </th>
                {hasNotes && <th scope="col">Details</th>}
              </tr>
            </thead>
            <tbody>
              {chart.points.map((p) => (
                <tr key={p.tick}>
                  <th scope="row">{p.label}</th>
                  <td className="num">{p.amount}</td>
                  {hasNotes && <td>{p.note ?? ''}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
