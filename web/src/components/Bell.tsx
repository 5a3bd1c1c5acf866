import { useState } from 'react';
import { Link } from 'react-router';
import { api, type Schema } from '../lib/api';
import { formatDate } from '../lib/format';
import { useApi } from '../hooks';

type Notification = Schema<'Notification'>;

/** The employer's notification bell (spec 6): unread count, the latest 20, mark all read. */
export function Bell({ employerId }: { employerId: string }) {
  const loaded = useApi<{ notifications: Notification[]; unread_count: number }>(`/api/employers/${employerId}/notifications?limit=20`, { refreshMs: 30_000 });
  const [open, setOpen] = useState(false);
  const unread = loaded.data?.unread_count ?? 0;

  const markAllRead = async () => {
    await api(`/api/employers/${employerId}/notifications/read`, { method: 'POST', body: { all: true } });
    loaded.reload();
  };
  return (
    <div className="bell">
      <button type="button" className="icon-button" aria-expanded={open} aria-label={`Notifications, ${unread} unread`} onClick={() => setOpen(!open)}>
        <svg aria-hidden="true" width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
          <path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9" />
          <path d="M13.7 21a2 2 0 0 1-3.4 0" />
        </svg>
        {unread > 0 && <span className="badge">{unread}</span>}
      </button>
      {open && (
        <div className="bell-panel" role="dialog" aria-label="Notifications">
          <div className="bell-head">
            <strong>Notifications</strong>
            {unread > 0 && (
              <button type="button" className="link-button" onClick={() => void markAllRead()}>
                Mark all read
              </button>
            )}
          </div>
          {(loaded.data?.notifications ?? []).length === 0 && <p className="muted">Nothing yet.</p>}
          <ul>
            {(loaded.data?.notifications ?? []).map((n) => (
              <li key={n.id} className={n.read ? '' : 'unread'}>
                <span className={`dot dot-${n.severity}`} aria-hidden="true" />
                <div>
                  {n.link ? <Link to={n.link} onClick={() => setOpen(false)}>{n.title}</Link> : <strong>{n.title}</strong>}
                  <p>{n.body}</p>
                  <small className="muted">{formatDate(n.created_at)}</small>
                </div>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
