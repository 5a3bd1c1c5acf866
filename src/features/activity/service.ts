import type { Database } from '../../db/client.js';
import { listActivity, type ActivityPosition, type ActivityRow } from './store.js';

/** The employee portal's activity feed (spec 4.9): cards merged from payroll, advances, off-ramps and inflows. */
export class ActivityService {
  private readonly database: Database;

  constructor(options: { database: Database }) {
    this.database = options.database;
  }

  /** The newest `limit` cards of these employee records older than `before`, and whether more follow. */
  list(employeeIds: string[], page: { before: ActivityPosition | null; limit: number }): Promise<{ rows: ActivityRow[]; more: boolean }> {
    return listActivity(this.database.db, employeeIds, page);
  }
}
