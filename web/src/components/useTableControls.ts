import { useMemo, useState } from 'react';
import { rowMatches, sortRows, toCsv, type CellValue, type SortDirection } from '../lib/table';
import type { Column } from './DataTable';

export interface TableSort {
  key: string;
  direction: SortDirection;
}

export interface TableControls<T> {
  query: string;
  setQuery(query: string): void;
  sort: TableSort | null;
  /** Sorts by a column, ascending first; a second click on the same column reverses it. */
  toggleSort(key: string): void;
  /** The rows matching the query, in the chosen order. */
  shown: T[];
  /** The shown rows as a CSV file (the columns with a value), downloaded as `<name>-<date>.csv`. */
  exportCsv(name: string): void;
}

type Valued<T> = Column<T> & { value: (row: T) => CellValue };
const valued = <T,>(columns: Column<T>[]) => columns.filter((c): c is Valued<T> => c.value !== undefined);

/** Search, sort and export over the rows a page has loaded (client-side: a paged table searches its page). */
export function useTableControls<T>(rows: T[], columns: Column<T>[]): TableControls<T> {
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<TableSort | null>(null);
  const shown = useMemo(() => {
    const withValues = valued(columns);
    const found = rows.filter((row) => rowMatches(query, withValues.map((c) => c.value(row))));
    const by = sort && withValues.find((c) => c.key === sort.key);
    return by ? sortRows(found, by.value, sort.direction) : found;
  }, [rows, columns, query, sort]);

  return {
    query,
    setQuery,
    sort,
    toggleSort: (key) => setSort((current) => ({ key, direction: current?.key === key && current.direction === 'ascending' ? 'descending' : 'ascending' })),
    shown,
    exportCsv: (name) => {
      const withValues = valued(columns);
      const csv = toCsv(
        withValues.map((c) => c.label),
        shown.map((row) => withValues.map((c) => c.value(row))),
      );
      download(`${name}-${new Date().toISOString().slice(0, 10)}.csv`, csv);
    },
  };
}

/** Saves text as a file through a temporary link (no server round trip). */
function download(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked a little later: the browser reads the blob after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}
