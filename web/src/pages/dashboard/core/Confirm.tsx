import { useState, type ReactNode } from 'react';

/**
 * A button that asks before it acts: the first press shows the question with "Yes" and "Cancel"
 * (in the page, announced to screen readers), the second runs `onConfirm`.
 */
export function ConfirmButton({
  children,
  question,
  confirmLabel,
  onConfirm,
  danger = false,
  disabled = false,
}: {
  children: ReactNode;
  question: string;
  confirmLabel: string;
  onConfirm: () => void | Promise<void>;
  danger?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={`button ${danger ? 'danger' : 'secondary'}`} disabled={disabled} onClick={() => setAsking(true)}>
        {children}
      </button>
    );
  }
  return (
    <div className="core-confirm" role="group" aria-label="Confirm">
      <p role="status">{question}</p>
      <div className="row">
        <button
          type="button"
          className={`button ${danger ? 'danger' : ''}`.trim()}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await onConfirm();
            } finally {
              setBusy(false);
              setAsking(false);
            }
          }}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
        <button type="button" className="button secondary" disabled={busy} onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}
