import { useState } from 'react';
import { Link } from 'react-router';
import { api, type Schema } from '../lib/api';
import { useApi } from '../hooks';

export type Announcement = Schema<'Announcement'>;

/** System announcements for the caller (spec 6): on page load and every 60 s; dismissing is permanent. */
export function Banners() {
  const loaded = useApi<{ announcements: Announcement[] }>('/api/announcements/active', { refreshMs: 60_000 });
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const visible = (loaded.data?.announcements ?? []).filter((a) => !hidden.has(a.id));
  if (visible.length === 0) return null;

  const dismiss = async (id: string) => {
    setHidden((current) => new Set(current).add(id));
    await api(`/api/announcements/${id}/dismiss`, { method: 'POST' }).catch(() => undefined);
  };
  return (
    <div className="banners" aria-label="Announcements">
      {visible.map((a) => (
        <div key={a.id} className={`banner banner-${a.severity}`} role={a.severity === 'error' ? 'alert' : 'status'} data-testid="announcement-banner">
          <div className="banner-text">
            <strong>{a.title}</strong> <span>{a.body}</span>
            {a.link_url &&
              (a.link_url.startsWith('/') ? (
                <Link to={a.link_url}> {a.link_label}</Link>
              ) : (
                <a href={a.link_url} rel="noreferrer noopener" target="_blank">
                  {' '}
                  {a.link_label}
                </a>
              ))}
          </div>
          <button type="button" className="icon-button" aria-label={`Dismiss: ${a.title}`} onClick={() => void dismiss(a.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
