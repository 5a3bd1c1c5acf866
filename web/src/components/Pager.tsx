/** Previous / next for a page-numbered list; `total` is the count over all pages. */
export function Pager({
  page,
  limit,
  total,
  onPage,
  label,
  busy = false,
}: {
  page: number;
  limit: number;
  total: number;
  onPage: (page: number) => void;
  label: string;
  busy?: boolean;
}) {
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <nav className="pager row" aria-label={`${label} pages`}>
      <button type="button" className="button secondary" disabled={busy || page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span className="muted" aria-live="polite">
        Page {page} of {pages} ({total === 1 ? '1 record' : `${total} records`})
      </span>
      <button type="button" className="button secondary" disabled={busy || page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
