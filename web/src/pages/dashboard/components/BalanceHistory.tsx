import { Async } from '../../../components/States';
import type { Loaded } from '../../../hooks';
import type { Schema } from '../../../lib/api';
import { formatDay } from '../../../lib/format';
import { formatUsd, usdToUnits } from '../../../lib/money';
import { ChartFigure, plotDollars, type ChartPoint } from './charts';

export type BalanceHistoryData = Schema<'TreasuryBalanceHistory'>;

/** The history route, for the last `days` UTC days. */
export const balanceHistoryPath = (employerId: string, days = 90) => `/api/employers/${employerId}/treasury/history?days=${days}`;

const DAY_MS = 86_400_000;
const TICKS = 5;
const midnight = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The window's days on a time axis: from `days - 1` days before today (UTC) to today, with a few evenly spaced day ticks. */
function timeAxisOf(history: BalanceHistoryData, today: string) {
  const to = midnight(today);
  const from = to - (history.days - 1) * DAY_MS;
  const step = Math.max(1, Math.round((history.days - 1) / (TICKS - 1)));
  const ticks = [];
  for (let at = to; at >= from; at -= step * DAY_MS) ticks.unshift({ at, label: formatDay(new Date(at).toISOString().slice(0, 10), true) });
  return { from, to, ticks };
}

function pointsOf(history: BalanceHistoryData): ChartPoint[] {
  return history.points.map((p) => ({
    at: midnight(p.day),
    tick: formatDay(p.day, true),
    label: formatDay(p.day),
    value: plotDollars(usdToUnits(p.total_usd)),
    amount: formatUsd(p.total_usd),
    ...(usdToUnits(p.locked_usd) > 0n ? { note: `${formatUsd(p.locked_usd)} of it locked` } : {}),
  }));
}

/**
 * The treasury's total balance per UTC day as the service observed it. The contract keeps only
 * today's balance, so the chart starts when the service first observed the treasury, and says so.
 */
export function BalanceHistoryCard({ history }: { history: Loaded<BalanceHistoryData> }) {
  return (
    <section className="card" aria-labelledby="balance-history-heading">
      <h2 id="balance-history-heading">Balance history</h2>
      <Async loaded={history} label="Loading the balance history…">
        {(data) => {
          const since = data.first_observed_day ? formatDay(data.first_observed_day) : null;
          const points = pointsOf(data);
          // The server's today: the last point is today's reading, recorded by this very read.
          const today = data.points.at(-1)?.day ?? new Date().toISOString().slice(0, 10);
          return (
            <ChartFigure
              kind="line"
              points={points}
              timeAxis={timeAxisOf(data, today)}
              xLabel="Day (UTC)"
              yLabel="Total balance"
              valueName="Total balance"
              title="Treasury balance history"
              desc={`The treasury's total balance on ${points.length} observed days of the last ${data.days}.`}
              caption={
                <>
                  Total balance (available and locked) at the last reading of each day, over the last {data.days} days (UTC).{' '}
                  {since && (
                    <>
                      This service first read this treasury on {since}: there is no record before that.{' '}
                    </>
                  )}
                  Days without a reading have no point ({points.length} of {data.days} days read).
                </>
              }
            />
          );
        }}
      </Async>
    </section>
  );
}
