import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from './lib/api';

export interface Loaded<T> {
  data: T | null;
  error: ApiError | Error | null;
  loading: boolean;
  reload(): void;
}

/** GETs `path` (null: nothing yet) and keeps loading / error / data for the page's states. */
export function useApi<T>(path: string | null, options: { refreshMs?: number } = {}): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [loading, setLoading] = useState(path !== null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    if (path === null) return;
    let live = true;
    setLoading(true);
    api<T>(path)
      .then((value) => {
        if (!live) return;
        setData(value);
        setError(null);
      })
      .catch((reason: unknown) => live && setError(reason instanceof Error ? reason : new Error(String(reason))))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [path, tick]);

  useEffect(() => {
    if (!options.refreshMs || path === null) return;
    const timer = setInterval(reload, options.refreshMs);
    return () => clearInterval(timer);
  }, [options.refreshMs, path, reload]);

  return { data, error, loading, reload };
}
