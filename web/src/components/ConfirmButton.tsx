import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * A button that asks before it acts: the first press shows the question with Confirm and Cancel
 * (focus moves to Confirm; Escape cancels).
 */
export function ConfirmButton({
  label,
  children,
  question,
  confirmLabel = 'Confirm',
  onConfirm,
  danger = false,
  disabled = false,
  className,
}: {
  /** The button's text (or `children`). */
  label?: string;
  children?: ReactNode;
  question: ReactNode;
  confirmLabel?: string;
  onConfirm: () => Promise<void> | void;
  danger?: boolean;
  disabled?: boolean;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openerRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  const close = () => {
    setAsking(false);
    setTimeout(() => openerRef.current?.focus(), 0);
  };
  if (!asking) {
    return (
      <button ref={openerRef} type="button" className={className ?? `button ${danger ? 'danger' : 'secondary'}`} disabled={disabled} onClick={() => setAsking(true)}>
        {children ?? label}
      </button>
    );
  }
  return (
    <div
      className="more-confirm"
      role="group"
      aria-label={label ?? 'Confirm'}
      onKeyDown={(event) => {
        if (event.key === 'Escape') close();
      }}
    >
      <p>{question}</p>
      <div className="row">
        <button
          ref={confirmRef}
          type="button"
          className={`button ${danger ? 'danger' : ''}`}
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
        <button type="button" className="button secondary" disabled={busy} onClick={close}>
          Cancel
        </button>
      </div>
    </div>
  );
}
