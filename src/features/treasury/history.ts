import type { Database } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { employersPage, utcDay, type EmployersService } from '../employers/index.js';
import type { TreasuryService } from './service.js';
import * as store from './store.js';

const DAY_MS = 86_400_000;
const EMPLOYER_PAGE = 100;

export interface BalanceHistory {
  employerId: string;
  days: number;
  /** The first day the service observed this treasury: the history cannot start earlier. */
  firstObservedDay: string | null;
  /** One per observed UTC day in the window, oldest first; days without an observation are absent. */
  snapshots: store.SnapshotRow[];
}

/** What one snapshot pass did: employers observed, and those whose read failed (retried next pass). */
export interface SnapshotPass {
  observed: number;
  failed: { employerId: string; error: unknown }[];
}

/**
 * The treasury balance over time. The contract keeps only the current balance, so the service
 * records what the hourly job observes (every employer with a treasury account); a history read adds
 * today's live balance without storing it. Nothing is interpolated or back-filled (docs/decisions.md, "Charts (#29)").
 */
export class TreasuryHistory {
  constructor(
    private readonly deps: {
      treasury: TreasuryService;
      employers: EmployersService;
      database: Database;
      /** The service's time by default (database.clock): which UTC day a snapshot belongs to. */
      now?: () => Date;
    },
  ) {}

  private now(): Date {
    return this.deps.now?.() ?? this.deps.database.clock.now();
  }

  /** Reads the balance from the chain and records it as today's snapshot. */
  async observe(employerId: string): Promise<void> {
    const observedAt = this.now();
    const { available, locked } = await this.deps.treasury.account(employerId);
    await store.recordSnapshot(this.deps.database.db, { employerId, available, locked, observedAt });
  }

  /**
   * Observes every employer that has a treasury account (employers without one have no balance
   * to chart). One failed read does not stop the others; the pass reports it. An employer created
   * mid-pass shifts the pages: one may be read twice (harmless) or wait for the next pass.
   */
  async observeAll(): Promise<SnapshotPass> {
    const pass: SnapshotPass = { observed: 0, failed: [] };
    for (let offset = 0; ; offset += EMPLOYER_PAGE) {
      const { rows } = await employersPage(this.deps.database.db, { offset, limit: EMPLOYER_PAGE });
      for (const employer of rows) {
        if (!employer.employerAccountId) continue;
        try {
          await this.observe(employer.id);
          pass.observed += 1;
        } catch (error) {
          pass.failed.push({ employerId: employer.id, error });
        }
      }
      if (rows.length < EMPLOYER_PAGE) return pass;
    }
  }

  /**
   * GET /api/employers/{id}/treasury/history: the owner's last `days` UTC days (today included);
   * today's point is the balance read now, not stored (a read changes nothing: only the job
   * records). Another tenant's id is a 404.
   */
  async history(caller: Caller, employerId: string, days: number): Promise<BalanceHistory> {
    const db = this.deps.database.db;
    await this.deps.employers.requireOwned(db, caller, employerId);
    const now = this.now();
    const today = utcDay(now);
    const fromDay = utcDay(new Date(now.getTime() - (days - 1) * DAY_MS));
    const [{ available, locked }, stored, firstStored] = await Promise.all([
      this.deps.treasury.account(employerId),
      store.snapshotsSince(db, employerId, fromDay),
      store.firstObservedDay(db, employerId),
    ]);
    const live: store.SnapshotRow = { employerId, day: today, available, locked, observedAt: now };
    const snapshots = [...stored.filter((snapshot) => snapshot.day !== today), live];
    return { employerId, days, firstObservedDay: firstStored !== null && firstStored < today ? firstStored : today, snapshots };
  }
}
