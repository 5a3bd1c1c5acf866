import type { AnnouncementDraft } from './announcements';

/**
 * The banner exactly as `components/Banners.tsx` draws it (same classes, body as plain text), but
 * inert: the link and the dismiss button do nothing here.
 */
export function BannerPreview({ draft }: { draft: AnnouncementDraft }) {
  const title = draft.title.trim() || 'Title';
  const body = draft.body.trim() || 'Body text';
  const hasLink = draft.link_url.trim() !== '' && draft.link_label.trim() !== '';
  return (
    <figure className="ap-preview">
      <figcaption>Preview</figcaption>
      <div className={`banner banner-${draft.severity}`} data-testid="announcement-preview">
        <div className="banner-text">
          <strong>{title}</strong> <span>{body}</span>
          {hasLink && <span className="ap-preview-link"> {draft.link_label.trim()}</span>}
        </div>
        <span className="icon-button" aria-hidden="true">
          ×
        </span>
      </div>
      {!draft.title.trim() && !draft.body.trim() && <p className="muted ap-hint">Type a title and body to see the banner.</p>}
    </figure>
  );
}
