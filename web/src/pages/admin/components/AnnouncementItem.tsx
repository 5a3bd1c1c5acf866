import { useState } from 'react';
import { api } from '../../../lib/api';
import { formatDate } from '../../../lib/format';
import type { AdminAnnouncement, AnnouncementState } from './announcements';

const STATE_TONE: Record<AnnouncementState, string> = { draft: 'pill', scheduled: 'pill pill-warn', active: 'pill pill-ok', expired: 'pill ap-pill-muted' };
const SEVERITY_TONE: Record<AdminAnnouncement['severity'], string> = { info: 'pill', success: 'pill pill-ok', warning: 'pill pill-warn', error: 'pill pill-err' };

/** One announcement in the admin list: its banner text, its figures, and its actions (edit, publish, expire, delete). */
export function AnnouncementItem({
  announcement: a,
  isEditing,
  onEdit,
  onChanged,
}: {
  announcement: AdminAnnouncement;
  isEditing: boolean;
  onEdit: () => void;
  onChanged: (message: string, deleted?: boolean) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const headingId = `announcement-${a.id}`;

  const run = async (work: () => Promise<unknown>, message: string, deleted = false) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      setConfirming(false);
      onChanged(message, deleted);
    } catch (reason) {
      setError(reason instanceof Error ? reason.message : String(reason));
    } finally {
      setBusy(false);
    }
  };

  return (
    <li className={isEditing ? 'card ap-item ap-item-editing' : 'card ap-item'} aria-labelledby={headingId} data-testid="announcement-row">
      <div className="ap-item-head">
        <h3 id={headingId}>{a.title}</h3>
        <span className={STATE_TONE[a.state]}>{a.state}</span>
        <span className={SEVERITY_TONE[a.severity]}>{a.severity}</span>
      </div>
      <p className="ap-item-body">{a.body}</p>
      {a.link_url && (
        <p className="muted">
          Link: {a.link_label} → <code className="ap-mono">{a.link_url}</code>
        </p>
      )}
      <AnnouncementMeta announcement={a} />
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <AnnouncementActions announcement={a} busy={busy} confirming={confirming} setConfirming={setConfirming} onEdit={onEdit} run={run} />
    </li>
  );
}

function AnnouncementMeta({ announcement: a }: { announcement: AdminAnnouncement }) {
  return (
    <dl className="ap-meta">
      <div>
        <dt>Audience</dt>
        <dd>{a.audience}</dd>
      </div>
      <div>
        <dt>Published</dt>
        <dd>{a.published_at ? formatDate(a.published_at) : 'not yet'}</dd>
      </div>
      <div>
        <dt>Expires</dt>
        <dd>{a.expires_at ? formatDate(a.expires_at) : 'never'}</dd>
      </div>
      <div>
        <dt>Dismissals</dt>
        <dd data-testid="dismissal-count">{a.dismissals.toLocaleString('en-US')}</dd>
      </div>
      <div>
        <dt>Created by</dt>
        <dd>{a.created_by}</dd>
      </div>
    </dl>
  );
}

/** The item's buttons, or the delete confirmation in their place. */
function AnnouncementActions({
  announcement: a,
  busy,
  confirming,
  setConfirming,
  onEdit,
  run,
}: {
  announcement: AdminAnnouncement;
  busy: boolean;
  confirming: boolean;
  setConfirming: (confirming: boolean) => void;
  onEdit: () => void;
  run: (work: () => Promise<unknown>, message: string, deleted?: boolean) => Promise<void>;
}) {
  const patch = (body: Record<string, unknown>) => api(`/api/admin/announcements/${a.id}`, { method: 'PATCH', body });
  if (confirming) {
    return (
      <div className="row ap-confirm" role="group" aria-label={`Confirm deleting ${a.title}`}>
        <span>Delete “{a.title}” and its dismissals? This cannot be undone.</span>
        <button type="button" className="button danger" disabled={busy} onClick={() => void run(() => api(`/api/admin/announcements/${a.id}`, { method: 'DELETE' }), `Deleted “${a.title}”.`, true)}>
          {busy ? 'Deleting…' : 'Yes, delete'}
        </button>
        <button type="button" className="button secondary" disabled={busy} onClick={() => setConfirming(false)} autoFocus>
          Keep it
        </button>
      </div>
    );
  }
  return (
    <div className="row ap-actions">
      <button type="button" className="button secondary" disabled={busy} onClick={onEdit} aria-label={`Edit ${a.title}`}>
        Edit
      </button>
      {(a.state === 'draft' || a.state === 'scheduled') && (
        <button type="button" className="button secondary" disabled={busy} onClick={() => void run(() => patch({ publish_now: true }), `Published “${a.title}”.`)} aria-label={`Publish ${a.title}`}>
          Publish
        </button>
      )}
      {a.state === 'active' && (
        <button
          type="button"
          className="button secondary"
          disabled={busy}
          onClick={() => void run(() => patch({ expires_at: new Date().toISOString() }), `Expired “${a.title}”.`)}
          aria-label={`Expire ${a.title}`}
        >
          Expire
        </button>
      )}
      <button type="button" className="button danger" disabled={busy} onClick={() => setConfirming(true)} aria-label={`Delete ${a.title}`}>
        Delete
      </button>
    </div>
  );
}
