/** An offset page of a list (the admin console's tables). */
export interface OffsetPage {
  offset: number;
  limit: number;
}

/** One page of rows and how many rows the whole list has. */
export interface Counted<T> {
  rows: T[];
  total: number;
}
