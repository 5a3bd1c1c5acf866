import { useEffect, useRef, useState } from 'react';
import { Async, Empty, ErrorState } from '../../components/States';
import { useApi } from '../../hooks';
import { useSession } from '../../session';
import { AnnouncementForm } from './components/AnnouncementForm';
import { AnnouncementItem } from './components/AnnouncementItem';
import { STATES, type AdminAnnouncement, type AdminAnnouncementList, type AnnouncementState } from './components/announcements';
import { Pager } from '../../components/Pager';
import { usePageTitle } from '../../company';

const LIMIT = 20;

/** `/admin/announcements`: system banners (spec 2.12, 3.2): list, create, edit, publish, expire, delete. */
export function AdminAnnouncements() {
  usePageTitle('Announcements');
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
