import { useCallback, useEffect, useState } from 'react';
import { api, type PayrollRun, type Runs, type Transaction, type Transactions } from '../../../lib/api';

const FINAL = new Set(['confirmed', 'failed', 'partially_paid']);
const MAX_PAGES = 50;

/**
 * One run and its items. There is no `GET .../payroll/runs/{runId}` and `/api/transactions` has no
 * run filter, so the run is looked up in the runs pages (newest first) and its items in the
 * transactions around its creation time, filtered by `payroll_run_id`.
 */
async function loadRun(employerId: string, runId: string): Promise<{ run: PayrollRun | null; items: Transaction[] }> {
  let run: PayrollRun | null = null;
  for (let page = 1; page <= MAX_PAGES && !run; page++) {
    const data = await api<Runs>(`/api/employers/${employerId}/payroll/runs?page=${page}&limit=100`);
    run = data.runs.find((r) => r.id === runId) ?? null;
    if (page * data.limit >= data.total) break;
  }
  if (!run) return { run: null, items: [] };
  const created = new Date(run.created_at).getTime();
  const from = new Date(created - 5_000).toISOString();
  const to = new Date(created + 120_000).toISOString();
  const items: Transaction[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const data = await api<Transactions>(`/api/transactions?page=${page}&limit=100&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    items.push(...data.transactions.filter((t) => t.payroll_run_id === runId));
    if (page * data.limit >= data.total || items.length >= run.recipient_count) break;
  }
  return { run, items };
}

export interface LoadedRun {
  run: PayrollRun | null;
  items: Transaction[];
  loaded: boolean;
  error: Error | null;
  final: boolean;
  reload(): void;
}

/** The run and its items, polled every `pollMs` while the run is not final (draft or submitted). */
export function useRun(employerId: string | null, runId: string, pollMs = 3000): LoadedRun {
  const [state, setState] = useState<{ run: PayrollRun | null; items: Transaction[]; loaded: boolean; error: Error | null }>({ run: null, items: [], loaded: false, error: null });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const final = state.run ? FINAL.has(state.run.status) : false;

  useEffect(() => {
    if (!employerId) return;
    let live = true;
    loadRun(employerId, runId)
      .then((value) => live && setState({ ...value, loaded: true, error: null }))
      .catch((reason: unknown) => live && setState((s) => ({ ...s, loaded: true, error: reason instanceof Error ? reason : new Error(String(reason)) })));
    return () => {
      live = false;
    };
  }, [employerId, runId, tick]);

  useEffect(() => {
    if (!state.loaded || final || !state.run) return;
    const timer = setTimeout(reload, pollMs);
    return () => clearTimeout(timer);
  }, [state, final, pollMs, reload]);

  return { ...state, final, reload };
}
