import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Empty } from '../../components/States';
import { Hex, Pill } from './components/common';
import { formatUsdExact } from '../../lib/money';
import { RAIL_NAMES } from './components/openapi';
import { readEventStream } from './components/sse';
import type { Schema } from '../../lib/api';
import { usePageTitle } from '../../company';

type StepEvent = Schema<'DemoStepEvent'>;
type DoneEvent = Schema<'DemoDoneEvent'>;
type Phase = 'idle' | 'connecting' | 'running' | 'done' | 'stopped' | 'failed';

const KIND_TONES: Record<StepEvent['kind'], 'ok' | 'warn' | 'err' | undefined> = {
  info: undefined,
  request: undefined,
  payment: 'warn',
  result: 'ok',
  error: 'err',
};

/** Demo agent: runs `POST /api/demo/run-agent` and shows its server-sent events as a live log. */
export function Demo() {
  usePageTitle('Demo agent');
  const { phase, steps, done, error, run, stop, live } = useDemoAgent();
  const logRef = useRef<HTMLOListElement>(null);
  useEffect(() => {
    // Follow the newest step inside the log box (not the page).
    const box = logRef.current;
    if (box) box.scrollTop = box.scrollHeight;
  }, [steps.length]);

  return (
    <>
      <h1>Demo agent</h1>
      <p>
        Watch an agent pay this server's API over HTTP 402: it gets a fresh wallet, calls a paid route without paying, reads the offer, then pays on each rail (MPP on Tempo, x402 on Base and on
        Solana). It pays from its own faucet-funded wallet: nothing is charged to your employer (your own paid calls are in <Link to="/dashboard/settings/billing">Billing</Link>).
      </p>
      <div className="row">
        <button type="button" className="button" disabled={live} onClick={() => void run()}>
          {live ? 'Running…' : steps.length > 0 ? 'Run again' : 'Run the demo agent'}
        </button>
        <button type="button" className="button danger" disabled={!live} onClick={stop}>
          Stop
        </button>
        <span role="status" className="muted">
          {phase === 'connecting' && 'Starting the agent…'}
          {phase === 'running' && 'Running: the log updates live.'}
          {phase === 'stopped' && 'Stopped.'}
          {phase === 'done' && 'Finished.'}
        </span>
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {done && (
        <div className="more-callout more-callout-ok">
          <p>
            <strong>Done:</strong> {done.calls} paid {done.calls === 1 ? 'call' : 'calls'}, {formatUsdExact(done.spent_usd)} spent in {done.steps} steps.
          </p>
        </div>
      )}
      <section className="card" aria-labelledby="log-heading">
        <h2 id="log-heading">Live log</h2>
        {steps.length === 0 ? (
          <Empty>{live ? 'Waiting for the first step…' : 'Run the agent to see its log here.'}</Empty>
        ) : (
          <ol ref={logRef} className="more-log" tabIndex={0} role="log" aria-live="polite" aria-label="Demo agent log">
            {steps.map((s, i) => (
              <LogStep key={`${s.step}-${i}`} s={s} />
            ))}
          </ol>
        )}
      </section>
    </>
  );
}

/** One step of the log: its kind and message, the request it made, and its raw details. */
function LogStep({ s }: { s: StepEvent }) {
  return (
    <li className={`more-log-${s.kind}`}>
      <div className="row">
        <span className="more-log-step muted">#{s.step}</span>
        <Pill tone={KIND_TONES[s.kind]}>{s.kind}</Pill>
        <span className="more-log-message">{s.message}</span>
      </div>
      {(s.route || s.rail || s.status !== undefined || s.amount_usd || s.reference) && (
        <div className="more-log-meta muted more-small">
          {s.route && <code className="more-break">{s.route}</code>}
          {s.rail && <span>Rail {RAIL_NAMES[s.rail] ?? s.rail}</span>}
          {s.status !== undefined && <span>HTTP {s.status}</span>}
          {s.amount_usd && <span>{formatUsdExact(s.amount_usd)}</span>}
          {s.reference && (
            <span>
              Ref <Hex value={s.reference} />
            </span>
          )}
        </div>
      )}
      {s.data !== undefined && s.data !== null && (
        <details className="more-small">
          <summary>Details</summary>
          <pre className="more-code">{JSON.stringify(s.data, null, 2)}</pre>
        </details>
      )}
    </li>
  );
}

/** One run of the demo agent at a time: `POST /api/demo/run-agent`, its server-sent events gathered as they come. */
function useDemoAgent() {
  const [phase, setPhase] = useState<Phase>('idle');
  const [steps, setSteps] = useState<StepEvent[]>([]);
  const [done, setDone] = useState<DoneEvent | null>(null);
  const [error, setError] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);

  useEffect(() => () => controller.current?.abort(), []);

  const run = async () => {
    const abort = new AbortController();
    controller.current = abort;
    setSteps([]);
    setDone(null);
    setError(null);
    setPhase('connecting');
    try {
      const response = await fetch('/api/demo/run-agent', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ scenario: 'tour' }),
        signal: abort.signal,
      });
      if (!response.ok || !response.body) throw new Error(await startFailure(response));
      setPhase('running');
      let finished = false;
      await readEventStream(
        response.body,
        (event) => {
          let data: unknown;
          try {
            data = JSON.parse(event.data);
          } catch {
            data = { kind: 'info', message: event.data };
          }
          if (event.event === 'done') {
            finished = true;
            setDone(data as DoneEvent);
          } else if (event.event === 'step' || event.event === 'message') {
            setSteps((list) => [...list, data as StepEvent]);
          }
        },
        abort.signal,
      );
      setPhase(finished ? 'done' : abort.signal.aborted ? 'stopped' : 'failed');
      if (!finished && !abort.signal.aborted) setError('The stream ended before the agent finished.');
    } catch (reason) {
      if (abort.signal.aborted) setPhase('stopped');
      else {
        setPhase('failed');
        setError(reason instanceof Error ? reason.message : String(reason));
      }
    } finally {
      if (controller.current === abort) controller.current = null;
    }
  };
  const stop = () => controller.current?.abort();
  const live = phase === 'connecting' || phase === 'running';
  return { phase, steps, done, error, run, stop, live };
}

/** Why the demo agent did not start, from the refused answer. */
async function startFailure(response: Response): Promise<string> {
  let message = `The demo agent could not start (${response.status}).`;
  try {
    const body = (await response.json()) as { error?: string; code?: string };
    if (response.status === 429) {
      const retry = response.headers.get('Retry-After');
      message = body.error ?? `Too many demo runs: the limit is 3 runs per 10 minutes.${retry ? ` Try again in ${retry} s.` : ''}`;
    } else if (response.status === 404) message = 'The demo agent is not available on this server (live mode without a demo wallet).';
    else if (body.error) message = body.error;
  } catch {
    // keep the generic message
  }
  return message;
}
