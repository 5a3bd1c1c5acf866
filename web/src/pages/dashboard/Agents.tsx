import { useEmployerId } from '../../session';
import { ConfirmButton } from '../../components/ConfirmButton';
import { useId, useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError, type Schema } from '../../lib/api';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { formatUsd } from '../../lib/money';
import { useApi } from '../../hooks';
import {
  apiFieldErrors,
  checkLimits,
  EMPTY_LIMITS,
  Field,
  LimitFields,
  limitsBody,
  limitsOf,
  type Authorization,
  type FieldErrors,
  type LimitValues,
} from './components/agentFields';
import { errorText, NoEmployer, Pill, SecretOnce } from './components/common';
import { usePageTitle } from '../../company';

type PauseResult = Schema<'PauseAllResult'>;
type ResumeResult = Schema<'ResumeAllResult'>;
type PauseOutcome = { kind: 'paused'; data: PauseResult } | { kind: 'resumed'; data: ResumeResult } | null;
type WithSecret = Authorization & { hmac_secret: string | null };

const SCHEME_LABELS: Record<Authorization['identity_scheme'], string> = {
  hmac: 'HMAC shared secret',
  erc8004: 'ERC-8004 identity (owner signature)',
  ed25519: 'Ed25519 (Solana key)',
  evm: 'EVM address key (EIP-191 signature)',
  none: 'None',
};

/** Agents: authorizations with their caps, allowlist and velocity; create, edit, revoke, restore a halved cap; pause and resume all. */
export function Agents() {
  usePageTitle('Agents');
  const employerId = useEmployerId();
  return (
    <>
      <p className="more-breadcrumb">
        <Link to="/dashboard/settings">Settings</Link> / Agents
      </p>
      <h1>Agents</h1>
      {employerId ? <AgentsBody employerId={employerId} /> : <NoEmployer />}
    </>
  );
}

function AgentsBody({ employerId }: { employerId: string }) {
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const list = useApi<{ authorizations: Authorization[] }>(`/api/employers/${employerId}/agents/authorizations${includeRevoked ? '?include_revoked=true' : ''}`);
  const authorizations = list.data?.authorizations ?? null;
  return (
    <>
      <PauseAll employerId={employerId} authorizations={authorizations} onChanged={list.reload} />
      <section className="card" aria-labelledby="authorizations-heading">
        <div className="row more-spread">
          <h2 id="authorizations-heading">Authorized agents</h2>
          <label className="more-check">
            <input type="checkbox" checked={includeRevoked} onChange={(e) => setIncludeRevoked(e.target.checked)} /> Show revoked
          </label>
        </div>
        <p className="muted">Agents pay from the treasury only within these limits; every payment passes the pause, caps, velocity and allowlist gates.</p>
        <Async loaded={list}>
          {(data) =>
            data.authorizations.length === 0 ? (
              <Empty>No agents are authorized yet. Add one below.</Empty>
            ) : (
              <ul className="more-plain-list stack">
                {data.authorizations.map((a) => (
                  <li key={a.id}>
                    <AuthorizationCard employerId={employerId} authorization={a} onChanged={list.reload} />
                  </li>
                ))}
              </ul>
            )
          }
        </Async>
      </section>
      <CreateAuthorization employerId={employerId} onCreated={list.reload} />
    </>
  );
}

function PauseAll({ employerId, authorizations, onChanged }: { employerId: string; authorizations: Authorization[] | null; onChanged: () => void }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState<'pause' | 'resume' | null>(null);
  const [reasonError, setReasonError] = useState<string | null>(null);
  const [result, setResult] = useState<PauseOutcome>(null);
  const [error, setError] = useState<string | null>(null);
  const reasonRef = useRef<HTMLInputElement>(null);

  const summary = pauseSummary(authorizations, result);

  const pause = async (event: FormEvent) => {
    event.preventDefault();
    const text = reason.trim();
    if (!text) {
      setReasonError('Enter a reason: it is recorded on every paused agent.');
      reasonRef.current?.focus();
      return;
    }
    setBusy('pause');
    setError(null);
    setReasonError(null);
    try {
      const data = await api<PauseResult>(`/api/employers/${employerId}/agents/pause-all`, { method: 'POST', body: { reason: text } });
      setResult({ kind: 'paused', data });
      setReason('');
      onChanged();
    } catch (reason) {
      if (reason instanceof ApiError && reason.field === 'reason') setReasonError(reason.message.replace(/^reason:\s*/, ''));
      else setError(reason instanceof ApiError && reason.code === 'HUMAN_OWNER_ONLY' ? 'Only the human owner may pause agents, and this request carried an agent credential.' : errorText(reason));
    } finally {
      setBusy(null);
    }
  };
  const resume = async () => {
    setBusy('resume');
    setError(null);
    try {
      const data = await api<ResumeResult>(`/api/employers/${employerId}/agents/pause-all`, { method: 'DELETE' });
      setResult({ kind: 'resumed', data });
      onChanged();
    } catch (reason) {
      setError(errorText(reason));
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className={`card${summary.allPaused ? ' more-card-alert' : ''}`} aria-labelledby="pause-heading">
      <h2 id="pause-heading">Emergency pause</h2>
      <PauseState summary={summary} reading={authorizations === null} />
      <form className="inline-form" onSubmit={(e) => void pause(e)} noValidate>
        <label htmlFor="pause-reason">Reason</label>
        <input
          ref={reasonRef}
          id="pause-reason"
          value={reason}
          maxLength={500}
          placeholder="e.g. Unexpected spending"
          onChange={(e) => setReason(e.target.value)}
          aria-invalid={reasonError ? true : undefined}
          aria-describedby={reasonError ? 'pause-reason-error' : undefined}
        />
        <button type="submit" className="button danger" disabled={busy !== null}>
          {busy === 'pause' ? 'Pausing…' : 'Pause all agents'}
        </button>
        <button type="button" className="button secondary" disabled={busy !== null} onClick={() => void resume()}>
          {busy === 'resume' ? 'Resuming…' : 'Resume all agents'}
        </button>
      </form>
      {reasonError && (
        <p id="pause-reason-error" className="field-error" role="alert">
          {reasonError}
        </p>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {result && (
        <p className="muted" aria-live="polite">
          {result.kind === 'paused'
            ? `Paused ${result.data.paused_count} ${result.data.paused_count === 1 ? 'agent' : 'agents'}${result.data.paused_authorizations.length ? `: ${result.data.paused_authorizations.map((a) => a.label).join(', ')}` : ''} (${formatDate(result.data.paused_at)}).`
            : `Resumed ${result.data.resumed_count} ${result.data.resumed_count === 1 ? 'agent' : 'agents'}${result.data.resumed_authorizations.length ? `: ${result.data.resumed_authorizations.map((a) => a.label).join(', ')}` : ''} (${formatDate(result.data.resumed_at)}).`}
        </p>
      )}
      <p className="muted more-small">Only you, the human owner, can pause or resume: requests carrying an agent credential are refused.</p>
    </section>
  );
}

/** Which of the active agents are paused, since when and why (the last pause's answer until the list reloads). */
function pauseSummary(authorizations: Authorization[] | null, result: PauseOutcome) {
  const active = (authorizations ?? []).filter((a) => !a.revoked_at);
  const paused = active.filter((a) => a.paused_at);
  const allPaused = (active.length > 0 && paused.length === active.length) || (result?.kind === 'paused' && paused.length === active.length);
  const reasons = [...new Set(paused.map((a) => a.pause_reason ?? ''))].filter(Boolean);
  const shownReason = result?.kind === 'paused' ? result.data.pause_reason : reasons.length === 1 ? reasons[0] : null;
  const pausedSince = paused.map((a) => a.paused_at!).sort()[0] ?? (result?.kind === 'paused' ? result.data.paused_at : null);
  return { active, paused, allPaused, shownReason, pausedSince };
}

/** The pause banner: all paused (with since when and why), some paused, or all active. */
function PauseState({ summary: { active, paused, allPaused, shownReason, pausedSince }, reading }: { summary: ReturnType<typeof pauseSummary>; reading: boolean }) {
  if (allPaused) {
    return (
      <div className="more-callout more-callout-err more-paused" role="status">
        <p className="more-paused-title">
          All agents paused
        </p>
        <p>
          {active.length === 0 ? 'No agent was active to pause. ' : `${paused.length} of ${active.length} ${active.length === 1 ? 'agent is' : 'agents are'} paused; every payment they attempt is refused. `}
          {pausedSince && <>Since {formatDate(pausedSince)}. </>}
          {shownReason && <>Reason: “{shownReason}”.</>}
        </p>
      </div>
    );
  }
  if (paused.length > 0) {
    return (
      <div className="more-callout more-callout-warn" role="status">
        <p className="more-paused-title">
          {paused.length} of {active.length} agents paused
        </p>
        <p>Agents added after the last pause are active. Pause all again to stop them too.</p>
      </div>
    );
  }
  return (
    <p role="status" className="more-ok">
      {reading ? 'Reading the agents…' : active.length === 0 ? 'No active agents.' : `All ${active.length} ${active.length === 1 ? 'agent is' : 'agents are'} active.`}
    </p>
  );
}

function AuthorizationCard({ employerId, authorization: a, onChanged }: { employerId: string; authorization: Authorization; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const headingId = useId();
  const path = `/api/employers/${employerId}/agents/authorizations/${a.id}`;
  const revoked = Boolean(a.revoked_at);

  const act = async (run: () => Promise<void>, done: string) => {
    setMessage(null);
    try {
      await run();
      setMessage({ ok: true, text: done });
      onChanged();
    } catch (reason) {
      setMessage({ ok: false, text: errorText(reason) });
    }
  };

  return (
    <article className={`more-agent${revoked ? ' more-agent-revoked' : a.paused_at ? ' more-agent-paused' : ''}`} aria-labelledby={headingId}>
      <div className="row more-spread">
        <h3 id={headingId}>{a.label}</h3>
        <span className="row">
          {revoked ? <Pill>Revoked</Pill> : a.paused_at ? <Pill tone="err">Paused</Pill> : <Pill tone="ok">Active</Pill>}
          {a.cap_halved_at && !revoked && <Pill tone="warn">Cap halved</Pill>}
        </span>
      </div>
      <AuthorizationDetails authorization={a} />
      {secret && (
        <SecretOnce
          label="HMAC secret"
          value={secret}
          warning="Give this secret to the agent now: it signs its requests with it, and it cannot be shown again. The previous secret no longer works."
          onDone={() => setSecret(null)}
        />
      )}
      {!revoked && !editing && (
        <div className="row more-actions">
          <button type="button" className="button secondary" onClick={() => setEditing(true)} aria-label={`Edit limits of ${a.label}`}>
            Edit limits
          </button>
          {a.cap_halved_at && (
            <ConfirmButton
              label="Restore cap"
              question={
                <>
                  Restore the per-transaction cap of {a.label} to {a.per_tx_cap_original_usd ? formatUsd(a.per_tx_cap_original_usd) : 'its original value'}? It was halved because of unusual spending.
                </>
              }
              confirmLabel="Restore cap"
              onConfirm={() => act(() => api(`${path}/restore-cap`, { method: 'POST' }).then(() => undefined), 'Cap restored.')}
            />
          )}
          {a.identity_scheme === 'hmac' && (
            <ConfirmButton
              label="Rotate secret"
              question={<>Issue a new HMAC secret for {a.label}? The current secret stops working at once.</>}
              confirmLabel="Rotate secret"
              onConfirm={() =>
                act(async () => {
                  const rotated = await api<WithSecret>(`${path}/rotate-secret`, { method: 'POST' });
                  setSecret(rotated.hmac_secret);
                }, 'New secret issued.')
              }
            />
          )}
          <ConfirmButton
            label="Revoke"
            danger
            question={<>Revoke {a.label}? It will not be able to pay again; this cannot be undone (authorize it again to restore access).</>}
            confirmLabel="Revoke agent"
            onConfirm={() => act(() => api(path, { method: 'DELETE' }).then(() => undefined), `${a.label} revoked.`)}
          />
        </div>
      )}
      {editing && (
        <EditLimits
          authorization={a}
          path={path}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            setMessage({ ok: true, text: 'Limits saved.' });
            onChanged();
          }}
        />
      )}
      {message && (
        <p role={message.ok ? 'status' : 'alert'} className={message.ok ? 'more-ok' : 'field-error'}>
          {message.text}
        </p>
      )}
    </article>
  );
}

/** What an agent may spend, whom it may pay, and its pause or revocation. */
function AuthorizationDetails({ authorization: a }: { authorization: Authorization }) {
  const revoked = Boolean(a.revoked_at);
  return (
    <dl className="more-dl">
      <dt>Identifier</dt>
      <dd className="more-mono more-break">{a.agent_identifier}</dd>
      <dt>Identity proof</dt>
      <dd>{SCHEME_LABELS[a.identity_scheme] ?? a.identity_scheme}</dd>
      <dt>Per-transaction cap</dt>
      <dd>
        {formatUsd(a.per_tx_cap_usd)}
        {a.per_tx_cap_original_usd && (
          <span className="more-tone-warn">
            {' '}
            (halved from {formatUsd(a.per_tx_cap_original_usd)}
            {a.cap_halved_at ? ` on ${formatDate(a.cap_halved_at)}` : ''} after unusual spending)
          </span>
        )}
      </dd>
      <dt>Per-day cap</dt>
      <dd>{formatUsd(a.per_day_cap_usd)}</dd>
      {(a.elevated_per_tx_cap_usd || a.elevated_per_day_cap_usd) && (
        <>
          <dt>Elevated caps</dt>
          <dd>
            {a.elevated_per_tx_cap_usd ? `${formatUsd(a.elevated_per_tx_cap_usd)} per transaction` : 'per transaction unchanged'}, {a.elevated_per_day_cap_usd ? `${formatUsd(a.elevated_per_day_cap_usd)} per day` : 'per day unchanged'}
          </dd>
        </>
      )}
      <dt>Velocity</dt>
      <dd>
        {a.velocity_per_minute} {a.velocity_per_minute === 1 ? 'payment' : 'payments'} per minute
      </dd>
      <dt>Allowed recipients</dt>
      <dd>
        {a.allowed_recipients === null || a.allowed_recipients.length === 0 ? (
          'Any recipient'
        ) : (
          <ul className="more-plain-list">
            {a.allowed_recipients.map((r) => (
              <li key={r} className="more-mono more-break">
                {r}
              </li>
            ))}
          </ul>
        )}
      </dd>
      {a.paused_at && (
        <>
          <dt>Paused</dt>
          <dd>
            {formatDate(a.paused_at)}
            {a.pause_reason ? `: “${a.pause_reason}”` : ''}
          </dd>
        </>
      )}
      <dt>{revoked ? 'Revoked' : 'Added'}</dt>
      <dd>{formatDate(revoked ? a.revoked_at : a.created_at)}</dd>
    </dl>
  );
}

function EditLimits({ authorization, path, onCancel, onSaved }: { authorization: Authorization; path: string; onCancel: () => void; onSaved: () => void }) {
  const before = limitsOf(authorization);
  const [values, setValues] = useState<LimitValues>(before);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found = checkLimits(values);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    // Only what changed: re-sending the per-transaction cap would replace a halved cap.
    const body = limitsBody(values, before);
    if (Object.keys(body).length === 0) {
      setErrors({ form: 'Nothing changed.' });
      return;
    }
    setBusy(true);
    try {
      await api(path, { method: 'PATCH', body });
      onSaved();
    } catch (reason) {
      setErrors(apiFieldErrors(reason, 'Could not save.'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="more-form" onSubmit={(e) => void submit(e)} noValidate aria-label={`Edit limits of ${authorization.label}`}>
      <LimitFields values={values} onChange={setValues} errors={errors} halved={Boolean(authorization.cap_halved_at)} />
      {errors.form && (
        <p className="field-error" role="alert">
          {errors.form}
        </p>
      )}
      <div className="row">
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Saving…' : 'Save limits'}
        </button>
        <button type="button" className="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function CreateAuthorization({ employerId, onCreated }: { employerId: string; onCreated: () => void }) {
  const [values, setValues] = useState<LimitValues>(EMPTY_LIMITS);
  const [identifier, setIdentifier] = useState('');
  const [scheme, setScheme] = useState<'' | 'hmac' | 'erc8004' | 'ed25519' | 'evm'>('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<WithSecret | null>(null);
  const id = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found = checkLimits(values, identifier);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      const result = await api<WithSecret>(`/api/employers/${employerId}/agents/authorizations`, {
        method: 'POST',
        body: { ...limitsBody(values), agent_identifier: identifier.trim(), ...(scheme ? { identity_scheme: scheme } : {}) },
      });
      setCreated(result);
      setValues(EMPTY_LIMITS);
      setIdentifier('');
      setScheme('');
      onCreated();
    } catch (reason) {
      setErrors(
        reason instanceof ApiError && reason.code === 'AGENT_IDENTIFIER_TAKEN' ? { agent_identifier: 'An active authorization already uses this identifier.' } : apiFieldErrors(reason, 'Could not authorize the agent.'),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="create-heading">
      <h2 id="create-heading">Authorize an agent</h2>
      {created && (
        <div className="more-callout more-callout-ok" role="status">
          <p>
            <strong>{created.label}</strong> is authorized ({SCHEME_LABELS[created.identity_scheme]}).
          </p>
          {created.hmac_secret && (
            <SecretOnce
              label="HMAC secret"
              value={created.hmac_secret}
              warning="Give this secret to the agent now: it signs every request with it, and it cannot be shown again."
              onDone={() => setCreated(null)}
            />
          )}
        </div>
      )}
      <form className="more-form" onSubmit={(e) => void submit(e)} noValidate>
        <Field
          id={`${id}-identifier`}
          label="Agent identifier"
          hint="What the agent sends in X-Agent-Identifier: erc8004:tempo:<id>, a Solana key, an EVM address, an agent-card URI or an opaque token."
          error={errors.agent_identifier}
        >
          {(p) => <input {...p} className="more-mono" value={identifier} spellCheck={false} autoComplete="off" onChange={(e) => setIdentifier(e.target.value)} required />}
        </Field>
        <Field id={`${id}-scheme`} label="Identity proof" hint="Automatic: ERC-8004 for erc8004: identifiers, Ed25519 for Solana keys, otherwise an HMAC secret shown once. An EVM address may sign with its own key instead." error={errors.identity_scheme}>
          {(p) => (
            <select {...p} value={scheme} onChange={(e) => setScheme(e.target.value as typeof scheme)}>
              <option value="">Automatic</option>
              <option value="hmac">HMAC shared secret</option>
              <option value="erc8004">ERC-8004 identity</option>
              <option value="ed25519">Ed25519 (Solana key)</option>
              <option value="evm">EVM address key (EIP-191)</option>
            </select>
          )}
        </Field>
        <LimitFields values={values} onChange={setValues} errors={errors} />
        {errors.form && (
          <p className="field-error" role="alert">
            {errors.form}
          </p>
        )}
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Authorizing…' : 'Authorize agent'}
        </button>
      </form>
    </section>
  );
}
