import { useCallback, useEffect, useState } from 'react';
import { Async } from '../../../components/States';
import { formatDate, shortAddress } from '../../../lib/format';
import { formatBaseUnits, formatMicroUsd } from '../../../lib/money';
import type { Loaded } from '../../../hooks';
import { accruedAt, readStream, type StreamLookup } from './stream';
import type { Schema } from '../../../lib/api';

/** `GET /api/employees/{id}/balance`. */
export type WalletBalance = Schema<'WalletBalance'>;

const REFRESH_MS = 15_000;
const TICK_MS = 500;

/** The wallet's salary stream, read now and every 15 s (a claim or re-rate changes it). */
export function useStream(employeeId: string | null): { lookup: StreamLookup | null; reload: () => void } {
  const [lookup, setLookup] = useState<StreamLookup | null>(null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    if (!employeeId) return;
    let live = true;
    readStream(employeeId)
      .then((found) => live && setLookup(found))
      .catch(() => live && setLookup({ kind: 'unavailable' }));
    const timer = setTimeout(reload, REFRESH_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [employeeId, tick, reload]);
  return { lookup: employeeId ? lookup : null, reload };
}

/** A dollar figure that grows with the stream, redrawn twice a second (never announced: it would chatter). */
export function LiveAmount({ base, lookup, testId, className }: { base: bigint; lookup: StreamLookup | null; testId?: string; className?: string }) {
  const stream = lookup?.kind === 'stream' && lookup.stream.active ? lookup.stream : null;
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!stream) return;
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, [stream]);
  const value = base + (stream ? accruedAt(stream, now) : 0n);
  // Read as dollars and cents; the four sub-cent digits, smaller, are what visibly moves each second.
  const text = formatMicroUsd(value);
  const [dollarsAndCents, subCent] = [text.slice(0, -4), text.slice(-4)];
  return (
    <span className={className} data-testid={testId} aria-live="off">
      {dollarsAndCents}
      <span className="ap-subcent">{subCent}</span>
    </span>
  );
}

/** The balance card: wallet plus what the salary stream has accrued, live. */
export function BalanceCard({ balance, lookup }: { balance: Loaded<WalletBalance>; lookup: StreamLookup | null }) {
  return (
    <section className="card ap-balance" aria-labelledby="balance-heading">
      <h2 id="balance-heading">Balance</h2>
      <Async loaded={balance} label="Reading your balance…">
        {(balanceData) => (
          <BalanceBody data={balanceData} lookup={lookup} />
        )}
      </Async>
    </section>
  );
}

function BalanceBody({ data, lookup }: { data: WalletBalance; lookup: StreamLookup | null }) {
  const wallet = BigInt(data.balance);
  const stream = lookup?.kind === 'stream' ? lookup.stream : null;
  const streaming = stream !== null && stream.active && stream.ratePerSecond > 0n;
  return (
    <>
      <p className="ap-big">
        <LiveAmount base={wallet} lookup={lookup} testId="accruing-balance" />
      </p>
      <p className="muted ap-sub">{streaming ? 'Wallet plus salary earned so far, growing by the second.' : 'Your wallet balance.'}</p>
      <dl className="ap-meta">
        <div>
          <dt>In your wallet</dt>
          <dd>{formatBaseUnits(wallet)}</dd>
        </div>
        {streaming && stream && (
          <>
            <div>
              <dt>Earned, not yet paid out</dt>
              <dd>
                <LiveAmount base={0n} lookup={lookup} testId="accrued-amount" />
              </dd>
            </div>
            <div>
              <dt>You earn</dt>
              <dd>
                {formatMicroUsd(stream.ratePerSecond)} a second ({formatBaseUnits(stream.ratePerSecond * 3600n)} an hour)
              </dd>
            </div>
          </>
        )}
        <div>
          <dt>Wallet</dt>
          <dd>{data.wallet_address ? <code className="ap-mono" title={data.wallet_address}>{shortAddress(data.wallet_address)}</code> : 'none on file'}</dd>
        </div>
        <div>
          <dt>Checked</dt>
          <dd>{formatDate(data.as_of)}</dd>
        </div>
      </dl>
      {!data.wallet_address ? (
        <p className="ap-note">You have no payout wallet on file, so nothing can be paid or streamed to you yet. Ask your employer to add one.</p>
      ) : lookup === null ? (
        <p className="muted ap-sub">Checking your salary stream…</p>
      ) : lookup.kind === 'unavailable' ? (
        <p className="ap-note">The live salary counter is not available here: this is your wallet balance, checked every 15 seconds.</p>
      ) : !streaming ? (
        <p className="ap-note">No salary is streaming to this wallet right now.</p>
      ) : null}
    </>
  );
}
