import { useEffect, useId, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError, tokenStore } from '../../../lib/api';
import { Empty } from '../../../components/States';

/** The employer the signed-in owner runs, or null (then the page shows {@link NoEmployer}). */
export function NoEmployer() {
  return (
    <Empty>
      <p>You do not own an employer yet.</p>
      <p>
        <Link to="/dashboard">Set one up from the overview</Link> to use this page.
      </p>
    </Empty>
  );
}

/** A readable sentence for an API or network failure. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message || `Request failed (${error.status}).`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** As `api()` (same bearer and error shape) but abortable, and with the JSON error body kept. */
export async function apiAbortable<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<{ ok: true; status: number; data: T } | { ok: false; status: number; error: ApiError; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = tokenStore.get();
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const response = await fetch(path, { method: init.method ?? 'GET', headers, body, signal: init.signal });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { error: text.slice(0, 200) };
  }
  if (response.ok) return { ok: true, status: response.status, data: parsed as T };
  const error = new ApiError(response.status, String(parsed.code ?? response.status), String(parsed.error ?? response.statusText), parsed.field as string | undefined);
  return { ok: false, status: response.status, error, body: parsed };
}

/** Copies `text`; says so for a moment (and to screen readers). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <>
      <button type="button" className="button secondary" onClick={() => void copy()}>
        {state === 'copied' ? 'Copied' : label}
      </button>
      <span className="more-sr" role="status" aria-live="polite">
        {state === 'copied' ? 'Copied to the clipboard.' : state === 'failed' ? 'Could not copy: select the text and copy it by hand.' : ''}
      </span>
    </>
  );
}

/** A secret shown once: read-only field, copy button and the warning. */
export function SecretOnce({ label, value, warning, onDone }: { label: string; value: string; warning: ReactNode; onDone: () => void }) {
  const id = useId();
  return (
    <div className="more-secret" role="region" aria-label="Shown once: copy it now">
      <p className="more-warning" role="alert">
        <strong>Shown once.</strong> {warning}
      </p>
      <label htmlFor={id}>{label}</label>
      <div className="row">
        <input id={id} className="more-mono" readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
      </div>
      <button type="button" className="link-button" onClick={onDone}>
        I have stored it: hide it
      </button>
    </div>
  );
}

export function Pill({ tone, children }: { tone?: 'ok' | 'warn' | 'err'; children: ReactNode }) {
  return <span className={`pill${tone ? ` pill-${tone}` : ''}`}>{children}</span>;
}

/** A long hex value (hash, address) shortened, the whole of it in the title and for screen readers. */
export function Hex({ value }: { value: string | null | undefined }) {
  if (!value) return <>—</>;
  const short = value.length > 18 ? `${value.slice(0, 10)}…${value.slice(-6)}` : value;
  return (
    <span className="more-mono more-nowrap" title={value}>
      <span aria-hidden="true">{short}</span>
      <span className="more-sr">{value}</span>
    </span>
  );
}
