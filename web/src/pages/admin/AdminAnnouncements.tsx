import { useEffect, useRef, useState } from 'react';
import { api } from '../../lib/api';
import { Async, Empty, ErrorState } from '../../components/States';
import { formatDate } from '../../lib/format';
import { useApi } from '../../hooks';
import { useSession } from '../../session';
import { AnnouncementForm } from './components/AnnouncementForm';
import { STATES, type AdminAnnouncement, type AdminAnnouncementList, type AnnouncementState } from './components/announcements';
import { Pager } from '../../components/Pager';

const LIMIT = 20;
const STATE_TONE: Record<AnnouncementState, string> = { draft: 'pill', scheduled: 'pill pill-warn', active: 'pill pill-ok', expired: 'pill ap-pill-muted' };
const SEVERITY_TONE: Record<AdminAnnouncement['severity'], string> = { info: 'pill', success: 'pill pill-ok', warning: 'pill pill-warn', error: 'pill pill-err' };

/** `/admin/announcements`: system banners (spec 2.12, 3.2): list, create, edit, publish, expire, delete. */
export function AdminAnnouncements() {
  const { session } = useSession();
  const [page, setPage] = useState(1);
  const [stateFilter, setStateFilter] = useState<AnnouncementState | ''>('');
  const query = `page=${page}&limit=${LIMIT}${stateFilter ? `&state=${stateFilter}` : ''}`;
  const list = useApi<AdminAnnouncementList>(session?.is_platform_admin === false ? null : `/api/admin/announcements?${query}`);
  const [editing, setEditing] = useState<AdminAnnouncement | null>(null);
  const [notice, setNotice] = useState<string>('');
  const formRegion = useRef<HTMLDivElement>(null);

  // Editing moves focus to the form's heading, so keyboard and screen-reader users land on it.
  useEffect(() => {
    if (!editing) return;
    const heading = formRegion.current?.querySelector<HTMLElement>('h2');
    heading?.focus();
    heading?.scrollIntoView({ block: 'start', behavior: 'smooth' });
  }, [editing]);

  if (session && !session.is_platform_admin) {
    return (
      <>
        <h1>Announcements</h1>
        <ErrorState error={new Error('This area is for platform admins only.')} />
      </>
    );
  }

  const saved = (announcement: AdminAnnouncement, action: 'draft' | 'publish' | 'save') => {
    setNotice(
      action === 'publish' ? `Published “${announcement.title}”.` : action === 'draft' ? `Saved “${announcement.title}” as a draft.` : `Saved “${announcement.title}”.`,
    );
    setEditing(null);
    list.reload();
  };

  return (
    <>
      <h1>Announcements</h1>
      <p className="muted">Banners shown at the top of every page to the audience you choose. A dismissal is permanent; editing does not show it again.</p>
      <p className="ap-notice" role="status" aria-live="polite">
        {notice}
      </p>

      <div ref={formRegion}>
        <AnnouncementForm key={editing?.id ?? 'new'} editing={editing} onSaved={saved} onCancel={() => setEditing(null)} />
      </div>

      <section className="ap-section" aria-labelledby="announcement-list-heading">
        <div className="ap-panel-head">
          <h2 id="announcement-list-heading">All announcements</h2>
          <div className="ap-filter">
            <label htmlFor="announcement-state-filter">Show</label>
            <select
              id="announcement-state-filter"
              value={stateFilter}
              onChange={(e) => {
                setStateFilter(e.target.value as AnnouncementState | '');
                setPage(1);
              }}
            >
              <option value="">every state</option>
              {STATES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
        </div>
        <Async loaded={list}>
          {(listData) =>
            listData.announcements.length === 0 ? (
              <Empty>{stateFilter ? `No ${stateFilter} announcements.` : 'No announcements yet: write the first one above.'}</Empty>
            ) : (
              <ul className="ap-list">
                {listData.announcements.map((a) => (
                  <AnnouncementItem
                    key={a.id}
                    announcement={a}
                    isEditing={editing?.id === a.id}
                    onEdit={() => {
                      setNotice('');
                      setEditing(a);
                    }}
                    onChanged={(message, deleted) => {
                      setNotice(message);
                      if (deleted && editing?.id === a.id) setEditing(null);
                      list.reload();
                    }}
                  />
                ))}
              </ul>
            )
          }
        </Async>
        {list.data && <Pager page={list.data.page} limit={list.data.limit} total={list.data.total} onPage={setPage} label="Announcements" busy={list.loading} />}
      </section>
    </>
  );
}

function AnnouncementItem({
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
  const patch = (body: Record<string, unknown>) => api(`/api/admin/announcements/${a.id}`, { method: 'PATCH', body });

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
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {confirming ? (
        <div className="row ap-confirm" role="group" aria-label={`Confirm deleting ${a.title}`}>
          <span>Delete “{a.title}” and its dismissals? This cannot be undone.</span>
          <button type="button" className="button danger" disabled={busy} onClick={() => void run(() => api(`/api/admin/announcements/${a.id}`, { method: 'DELETE' }), `Deleted “${a.title}”.`, true)}>
            {busy ? 'Deleting…' : 'Yes, delete'}
          </button>
          <button type="button" className="button secondary" disabled={busy} onClick={() => setConfirming(false)} autoFocus>
            Keep it
          </button>
        </div>
      ) : (
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
      )}
    </li>
  );
}
