import type { ReactNode } from 'react';
import type { Loaded } from '../hooks';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </div>
  );
}

export function ErrorState({ error, onRetry }: { error: Error; onRetry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>{error.message}</p>
      {onRetry && (
        <button type="button" className="button secondary" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state state-empty">{children}</div>;
}

/** Loading, then an error with a retry, then the page's content. */
export function Async<T>({ loaded, label, children }: { loaded: Loaded<T>; label?: string; children: (data: T) => ReactNode }) {
  if (loaded.error) return <ErrorState error={loaded.error} onRetry={loaded.reload} />;
  if (loaded.data === null) return <Loading label={label} />;
  return <>{children(loaded.data)}</>;
}
