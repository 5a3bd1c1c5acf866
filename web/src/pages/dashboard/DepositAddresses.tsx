import { useEmployerId } from '../../session';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Async } from '../../components/States';
import { useApi } from '../../hooks';
import { apiAbortable, errorText, Hex, NoEmployer, Pill } from './components/common';
import type { Schema } from '../../lib/api';
import { usePageTitle } from '../../company';

type Master = Schema<'VirtualMaster'>;

type Phase = 'mining' | 'waiting' | 'stopped' | 'failed' | 'done';
interface Run {
  phase: Phase;
  /** Nonces [0, next) have been tried (the server only moves forward). */
  next: bigint;
  batchStart: bigint;
  batchStartedAt: number;
  batches: number;
  /** Nonces per second over this run's finished batches. */
  rate: number | null;
  error?: string;
}

const COUNT = new Intl.NumberFormat('en-US');
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new DOMException('stopped', 'AbortError'));
    });
  });

/** Deposit addresses: the employer's virtual master, and registering it (mining a salt batch by batch). */
export function DepositAddresses() {
  usePageTitle('Deposit addresses');
  const employerId = useEmployerId();
  return (
    <>
      <p className="more-breadcrumb">
        <Link to="/dashboard/settings">Settings</Link> / Deposit addresses
      </p>
      <h1>Deposit addresses</h1>
      <p className="muted">
        Once your virtual master is registered on the Tempo address registry, every employee gets a personal deposit address derived from it. Stablecoin (TIP-20) transfers to those addresses
        land on the master address and show up in the employee's activity.
      </p>
      {employerId ? <MasterBody employerId={employerId} /> : <NoEmployer />}
    </>
  );
}

function MasterBody({ employerId }: { employerId: string }) {
  const path = `/api/employers/${employerId}/virtual-master`;
  const loaded = useApi<Master>(path);
  const [master, setMaster] = useState<Master | null>(null);
  const [run, setRun] = useState<Run | null>(null);
  const controller = useRef<AbortController | null>(null);
  const current = master ?? loaded.data;

  useEffect(() => () => controller.current?.abort(), []);

  const register = async (from: Master) => {
    const abort = new AbortController();
    controller.current = abort;
    let next = BigInt(from.next_start_nonce);
    let rate: number | null = null;
    let batches = 0;
    let waited = 0;
    setRun({ phase: 'mining', next, batchStart: next, batchStartedAt: Date.now(), batches, rate });
    try {
      for (;;) {
        const startedAt = Date.now();
        setRun({ phase: 'mining', next, batchStart: next, batchStartedAt: startedAt, batches, rate });
        const answer = await apiAbortable<Master>(path, { method: 'POST', body: { startNonce: next.toString() }, signal: abort.signal });
        if (answer.ok) {
          setMaster(answer.data);
          setRun({ phase: 'done', next: BigInt(answer.data.next_start_nonce), batchStart: next, batchStartedAt: startedAt, batches: batches + 1, rate });
          return;
        }
        const code = answer.error.code;
        if (answer.status === 504 && code === 'MINING_BUDGET_EXHAUSTED') {
          const reached = BigInt(String(answer.body.nextStartNonce ?? next + BigInt(from.budget_per_request)));
          const seconds = (Date.now() - startedAt) / 1000;
          if (seconds > 0 && reached > next) rate = Number(reached - next) / seconds;
          next = reached > next ? reached : next + BigInt(from.budget_per_request);
          batches += 1;
          waited = 0;
          continue;
        }
        if (answer.status === 409 && code === 'VIRTUAL_MASTER_REGISTERED') break;
        if (answer.status === 409 && code === 'MINING_IN_PROGRESS') {
          // Another request (an earlier, stopped one, or another tab) is mining: wait for it and resume after it.
          setRun({ phase: 'waiting', next, batchStart: next, batchStartedAt: startedAt, batches, rate });
          waited += 1;
          if (waited > 40) throw new Error('Another registration has been mining for a long time; try again later.');
          await sleep(5000, abort.signal);
          const status = await apiAbortable<Master>(path, { signal: abort.signal });
          if (status.ok) {
            setMaster(status.data);
            if (status.data.registered) break;
            const remembered = BigInt(status.data.next_start_nonce);
            if (remembered > next) next = remembered;
          }
          continue;
        }
        throw answer.error;
      }
      // Registered meanwhile (by another request): show the stored result.
      const status = await apiAbortable<Master>(path, { signal: abort.signal });
      if (status.ok) setMaster(status.data);
      setRun((r) => (r ? { ...r, phase: 'done' } : r));
    } catch (reason) {
      if (abort.signal.aborted || (reason instanceof DOMException && reason.name === 'AbortError')) {
        setRun((r) => (r ? { ...r, phase: 'stopped' } : r));
      } else {
        setRun((r) => (r ? { ...r, phase: 'failed', error: errorText(reason) } : r));
      }
    } finally {
      if (controller.current === abort) controller.current = null;
    }
  };

  const cancel = () => controller.current?.abort();
  const busy = run?.phase === 'mining' || run?.phase === 'waiting';

  if (!current) return <Async loaded={loaded}>{() => null}</Async>;
  return (
    <section className="card" aria-labelledby="master-heading">
      <div className="row more-spread">
        <h2 id="master-heading">Virtual master</h2>
        {current.registered ? <Pill tone="ok">Registered</Pill> : <Pill tone="warn">Not registered</Pill>}
      </div>
      <MasterDetails master={current} />
      {!current.registered && <RegisterControls master={current} run={run} busy={busy} onRegister={() => void register(current)} onCancel={cancel} />}
      {current.registered && run?.phase === 'done' && (
        <p className="more-ok" role="status">
          Registered: employees now have deposit addresses.
        </p>
      )}
    </section>
  );
}

/** The master's address, its registration once made, and the proof of work it takes. */
function MasterDetails({ master }: { master: Master }) {
  return (
    <dl className="more-dl">
      {master.registered && (
        <>
          <dt>Master id</dt>
          <dd className="more-mono">{master.virtual_master_id}</dd>
        </>
      )}
      <dt>Master address</dt>
      <dd className="more-mono more-break">{master.virtual_master_address}</dd>
      {master.registered && (
        <>
          <dt>Registration transaction</dt>
          <dd className="more-mono more-break">{master.virtual_master_tx_hash ?? 'Recorded on chain (hash not kept)'}</dd>
          <dt>Salt</dt>
          <dd>
            <Hex value={master.virtual_master_salt} />
          </dd>
        </>
      )}
      <dt>Proof of work</dt>
      <dd>
        {master.zero_bytes} leading zero {master.zero_bytes === 1 ? 'byte' : 'bytes'} (about {COUNT.format(expectedNonces(master.zero_bytes))} tries on average, {COUNT.format(master.budget_per_request)} per request)
      </dd>
    </dl>
  );
}

/** Register (or resume, from the nonce reached so far) and cancel, with the mining progress. */
function RegisterControls({ master, run, busy, onRegister, onCancel }: { master: Master; run: Run | null; busy: boolean; onRegister: () => void; onCancel: () => void }) {
  return (
    <>
      {master.mining && !busy && <p className="muted">The server is mining for this employer right now; registering will continue after it.</p>}
      {run && <Progress run={run} master={master} />}
      <div className="row">
        <button type="button" className="button" disabled={busy} onClick={onRegister}>
          {busy ? 'Registering…' : run?.phase === 'stopped' || BigInt(master.next_start_nonce) > 0n ? 'Register (resume)' : 'Register'}
        </button>
        {busy && (
          <button type="button" className="button secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {!run && BigInt(master.next_start_nonce) > 0n && <p className="muted more-small">{COUNT.format(BigInt(master.next_start_nonce))} nonces already tried; registering resumes from there.</p>}
    </>
  );
}

function expectedNonces(zeroBytes: number): bigint {
  return 1n << BigInt(8 * zeroBytes);
}

function Progress({ run, master }: { run: Run; master: Master }) {
  const [now, setNow] = useState(() => Date.now());
  const active = run.phase === 'mining' || run.phase === 'waiting';
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  const expected = expectedNonces(master.zero_bytes);
  const fraction = Math.min(1, Number(run.next) / Number(expected));
  const percent = Math.round(fraction * 1000) / 10;
  const batchEnd = run.batchStart + BigInt(master.budget_per_request) - 1n;
  const remaining = expected > run.next ? Number(expected - run.next) : Number(master.budget_per_request);
  const eta = run.rate ? Math.ceil(remaining / run.rate / 60) : null;
  const elapsed = Math.max(0, Math.round((now - run.batchStartedAt) / 1000));

  let status: string;
  if (run.phase === 'mining') status = `Trying nonces ${COUNT.format(run.batchStart)} to ${COUNT.format(batchEnd)}…`;
  else if (run.phase === 'waiting') status = 'Another request is still mining for this employer; waiting for it to finish…';
  else if (run.phase === 'stopped') status = 'Stopped. The server keeps its progress (a batch already sent finishes there first): registering again resumes where it left off.';
  else if (run.phase === 'failed') status = `Registration failed: ${run.error ?? 'unknown error'}`;
  else status = 'Salt found and registered.';

  return (
    <div className="more-progress">
      <label htmlFor="mining-progress">
        Nonces tried: {COUNT.format(run.next)} of ~{COUNT.format(expected)} expected
      </label>
      <progress id="mining-progress" max={100} value={percent} aria-valuetext={`${percent}% of the expected nonces tried`}>
        {percent}%
      </progress>
      <p className="more-small muted">
        {percent}% of the average effort{run.next > expected ? ' (past the average: each batch is still as likely to succeed)' : ''}
        {run.batches > 0 ? ` · ${run.batches} ${run.batches === 1 ? 'batch' : 'batches'} this session` : ''}
        {eta !== null && run.phase === 'mining' && run.next < expected ? ` · about ${eta} min left on average` : ''}
      </p>
      <p role={run.phase === 'failed' ? 'alert' : 'status'} className={run.phase === 'failed' ? 'field-error' : undefined}>
        {active && <span className="spinner" aria-hidden="true" />} {status}
        {run.phase === 'mining' && <span aria-hidden="true" className="muted"> ({elapsed} s)</span>}
      </p>
    </div>
  );
}
