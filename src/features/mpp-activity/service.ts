import type { Database } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { listEmployerSessions } from '../../payments/mpp/session-store.js';
import { employerReceiptTotals, listEmployerReceipts } from '../../payments/store.js';
import type { EmployersService } from '../employers/index.js';

/**
 * An employer's MPP and x402 fee activity: the receipts of paid calls made on its behalf, and the
 * MPP sessions (payment channels) opened for it.
 */
export class MppActivityService {
  private readonly database: Database;
  private readonly employers: EmployersService;

  constructor(options: { database: Database; employers: EmployersService }) {
    this.database = options.database;
    this.employers = options.employers;
  }

  async receipts(caller: Caller, employerId: string, page: { page: number; limit: number }) {
    const db = this.database.db;
    await this.employers.requireOwned(db, caller, employerId);
    const [list, totals] = await Promise.all([
      listEmployerReceipts(db, employerId, { offset: (page.page - 1) * page.limit, limit: page.limit }),
      employerReceiptTotals(db, employerId),
    ]);
    return { ...list, totals };
  }

  /** The employer's MPP sessions, newest activity first. */
  async sessions(caller: Caller, employerId: string, page: { page: number; limit: number }) {
    const db = this.database.db;
    await this.employers.requireOwned(db, caller, employerId);
    return listEmployerSessions(db, employerId, { offset: (page.page - 1) * page.limit, limit: page.limit });
  }
}
