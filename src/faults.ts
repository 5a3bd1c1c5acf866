/**
 * Crash points for the reliability suite's kill -9 tests (test/reliability/crash.reliability.ts).
 * Local mode only (config refuses CRASH_AT in live mode): with `CRASH_AT=<point>[#n]` the process
 * sends itself SIGKILL the n-th time (default first) it passes that point, so a test can kill the
 * real server exactly between two effects, with no clean-up of any kind, then restart it.
 */
export const CRASH_POINTS = [
  // Payroll execute: the signed batch is recorded, not yet broadcast / mined, not yet confirmed in the database.
  'payroll.before-broadcast',
  'payroll.after-broadcast',
  // Escrow settlement: the vault's payout to the worker is recorded, not yet sent / landed, not yet marked settled.
  'escrow.settle.before-send',
  'escrow.settle.after-send',
  // Reputation job: a write's transaction is recorded, not yet sent / landed, not yet marked written.
  'reputation.before-send',
  'reputation.after-send',
  // Payment gate, on a route that acts: the fee moved, not yet recorded / recorded, the handler not run / the
  // handler answered, the answer not recorded.
  'payment.after-settle',
  'payment.before-handler',
  'payment.before-served',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

let armed: { point: CrashPoint; remaining: number } | null = null;

/** Arms one point for this process (`spec` is CRASH_AT, already validated by the config). */
export function armCrashPoint(spec: string | undefined): void {
  if (!spec) return;
  const [point, count] = spec.split('#');
  armed = { point: point as CrashPoint, remaining: Number(count ?? 1) };
}

/** Kills the process here if this point is armed and its count is reached. */
export function crashPoint(point: CrashPoint): void {
  if (armed?.point !== point || --armed.remaining > 0) return;
  process.kill(process.pid, 'SIGKILL');
}
