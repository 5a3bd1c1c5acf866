const OK = new Set(['confirmed', 'paid', 'active', 'approved', 'clear', 'CLEAR', 'CLEARED']);
const WARN = new Set(['draft', 'submitted', 'pending', 'paused', 'proposed']);
const ERR = new Set(['failed', 'partially_paid', 'policy_rejected', 'removed', 'rejected', 'blocked', 'BLOCKED']);

/** A status as a coloured pill holding the raw status text (colour is never the only signal). */
export function StatusPill({ status, label }: { status: string; label?: string }) {
  const tone = OK.has(status) ? 'pill-ok' : WARN.has(status) ? 'pill-warn' : ERR.has(status) ? 'pill-err' : '';
  return <span className={`pill ${tone}`.trim()}>{label ?? status}</span>;
}
