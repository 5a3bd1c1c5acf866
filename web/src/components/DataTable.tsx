import type { ReactNode } from 'react';
import type { CellValue } from '../lib/table';
import { useTableControls, type TableControls } from './useTableControls';

export interface Column<T> {
  key: string;
  label: string;
  render: (row: T) => ReactNode;
  /** The cell's plain value for search, sort and CSV export; a column without one takes no part in them. */
  value?: (row: T) => CellValue;
  /** Right-aligned, tabular figures. */
  num?: boolean;
  /** More classes for the column's cells. */
  className?: string;
}

/** Search, sort and CSV export above the table, over the rows given (`paged`: the rows are one page of more). */
export interface TableTools {
  /** What the rows are, for labels and the CSV file's name: "team", "audit log". */
  name: string;
  paged?: boolean;
}

interface DataTableProps<T> {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  /** Names the table for screen readers: a focusable scrolling region with a hidden caption. */
  caption?: string;
  /** Names the scrolling region only (no caption). */
  label?: string;
  /** The wrapper's scroll style: the admin and portal pages' (`ap`) or the dashboard's (`core`). */
  scroll?: 'ap' | 'core';
  tools?: TableTools;
}

/** A plain table in a horizontally scrolling wrapper (narrow screens scroll the table, not the page). */
export function DataTable<T>({ columns, rows, rowKey, caption, label, scroll = 'ap', tools }: DataTableProps<T>) {
  const controls = useTableControls(rows, columns);
  const name = caption ?? label;
  const region = name ? { role: 'region', 'aria-label': name, tabIndex: 0 } : {};
  return (
    <>
      {tools && <TableToolbar tools={tools} controls={controls} total={rows.length} />}
      <div className={`table-wrap ${scroll}-scroll`} {...region}>
        <table className="data-table">
          {caption && <caption className="ap-sr-only">{caption}</caption>}
          <HeaderRow columns={columns} controls={tools ? controls : undefined} />
          <BodyRows columns={columns} rows={tools ? controls.shown : rows} rowKey={rowKey} />
        </table>
      </div>
      {tools && controls.shown.length === 0 && controls.query.trim() !== '' && <p className="muted table-none">Nothing here matches “{controls.query.trim()}”.</p>}
    </>
  );
}

function TableToolbar<T>({ tools, controls, total }: { tools: TableTools; controls: TableControls<T>; total: number }) {
  const searchLabel = tools.paged ? `Search this page of the ${tools.name}` : `Search the ${tools.name}`;
  return (
    <div className="table-tools">
      <input type="search" aria-label={searchLabel} placeholder={tools.paged ? 'Search this page' : 'Search'} value={controls.query} onChange={(e) => controls.setQuery(e.target.value)} />
      <span className="muted" aria-live="polite">
        {controls.query.trim() ? `${controls.shown.length} of ${total} shown` : `${total} ${total === 1 ? 'row' : 'rows'}${tools.paged ? ' on this page' : ''}`}
      </span>
      <button type="button" className="button secondary" onClick={() => controls.exportCsv(tools.name.replace(/\s+/g, '-'))}>
        Export CSV
      </button>
    </div>
  );
}

/** A table whose cells stack under their labels (`data-label`) on narrow screens; the caption is for screen readers. */
export function StackedTable<T>({ columns, rows, rowKey, caption }: { columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string; caption: string }) {
  return (
    <div className="table-wrap">
      <table className="more-table">
        <caption className="more-sr">{caption}</caption>
        <HeaderRow columns={columns} />
        <BodyRows columns={columns} rows={rows} rowKey={rowKey} labelled />
      </table>
    </div>
  );
}

function HeaderRow<T>({ columns, controls }: { columns: Column<T>[]; controls?: TableControls<T> }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => {
          const active = controls?.sort?.key === column.key ? controls.sort.direction : undefined;
          return (
            <th key={column.key} scope="col" className={column.num ? 'num' : undefined} aria-sort={active}>
              {controls && column.value ? (
                <button type="button" className="th-sort" onClick={() => controls.toggleSort(column.key)}>
                  {column.label}
                  <span aria-hidden="true" className="th-sort-mark">
                    {active === 'ascending' ? '▲' : active === 'descending' ? '▼' : '↕'}
                  </span>
                </button>
              ) : (
                column.label
              )}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

function BodyRows<T>({ columns, rows, rowKey, labelled = false }: { columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string; labelled?: boolean }) {
  const cellClass = (column: Column<T>) => [column.num ? 'num' : '', column.className ?? ''].join(' ').trim() || undefined;
  return (
    <tbody>
      {rows.map((row) => (
        <tr key={rowKey(row)}>
          {columns.map((column) => (
            <td key={column.key} data-label={labelled ? column.label : undefined} className={cellClass(column)}>
              {column.render(row)}
            </td>
          ))}
        </tr>
      ))}
    </tbody>
  );
}

/** A long id or hash, shortened, with the whole value in the title. */
export function Mono({ value, short = true }: { value: string | null | undefined; short?: boolean }) {
  if (!value) return <span className="muted">—</span>;
  const shown = short && value.length > 14 ? `${value.slice(0, 8)}…${value.slice(-4)}` : value;
  return (
    <code className="ap-mono" title={value}>
      {shown}
    </code>
  );
}

/** JSON (job input, audit details, ...) folded away behind a summary. */
export function JsonDetails({ value, summary = 'Show' }: { value: unknown; summary?: string }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  if (typeof value === 'object' && Object.keys(value as object).length === 0) return <span className="muted">—</span>;
  return (
    <details className="ap-json">
      <summary>{summary}</summary>
      <pre>{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

const OK = new Set(['completed', 'confirmed', 'sent', 'settled', 'served', 'refunded', 'written', 'active', 'paid', 'payment_processed']);
const WARN = new Set(['created', 'retry', 'draft', 'submitted', 'queued', 'pending', 'posted', 'delivered', 'validating', 'scheduled', 'awaiting_funds', 'funds_received', 'payment_submitted']);
const ERR = new Set(['failed', 'cancelled', 'canceled', 'error', 'rejected_refunded', 'expired_refunded', 'expired', 'returned', 'policy_rejected']);

/** A state as a coloured pill (text carries the meaning; colour only helps). */
export function StatePill({ state }: { state: string | null | undefined }) {
  if (!state) return <span className="muted">—</span>;
  const tone = OK.has(state) ? ' pill-ok' : ERR.has(state) ? ' pill-err' : WARN.has(state) ? ' pill-warn' : '';
  return <span className={`pill${tone}`}>{state.replace(/_/g, ' ')}</span>;
}
