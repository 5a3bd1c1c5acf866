import { displayUsd, formatUsd } from '../../money.js';
import type { Database, Db } from '../../db/client.js';
import type { SEVERITIES } from './tables.js';
import type { Caller } from '../../http/context.js';
import type { EmployersService } from '../employers/index.js';
import * as store from './store.js';

export type Severity = (typeof SEVERITIES)[number];

/** One event for an employer's dashboard bell (spec 6). */
export interface Notice {
  employerId: string;
  /** e.g. `payroll_confirmed`, `kyc_approved`, `agent_spike_detected`. */
  type: string;
  severity: Severity;
  title: string;
  body?: string | null;
  /** A dashboard path the bell links to. */
  link?: string | null;
  data?: Record<string, unknown>;
  /** Makes the event notify once however often its job or request is retried. */
  dedupeKey: string;
}

/**
 * Records a notice, once per dedupe key. Callers pass the transaction that made the event happen,
 * so the notice exists exactly when the event does.
 */
export function notify(db: Db, notice: Notice): Promise<boolean> {
  return store.insertNotification(db, {
    employerId: notice.employerId,
    type: notice.type,
    severity: notice.severity,
    title: notice.title,
    body: notice.body ?? null,
    linkUrl: notice.link ?? null,
    data: notice.data ?? {},
    dedupeKey: notice.dedupeKey,
  });
}

/** Spec 6: after the anomaly gate halved an authorization's per-transaction cap. */
export function agentSpikeDetected(
  db: Db,
  spike: { employerId: string; authorizationId: string; label: string; amount: bigint; median: bigint; newCap: bigint; anomalyKey: string },
): Promise<boolean> {
  return notify(db, {
    employerId: spike.employerId,
    type: 'agent_spike_detected',
    severity: 'warning',
    title: `Unusual payment by ${spike.label}: its per-payment cap was halved`,
    body: `A payment of ${displayUsd(spike.amount)} was more than 10x the 7-day median (${displayUsd(spike.median)}). The cap is now ${displayUsd(spike.newCap)} until you restore it.`,
    link: '/dashboard/settings/agents',
    data: { authorization_id: spike.authorizationId, amount_usd: formatUsd(spike.amount), median_usd: formatUsd(spike.median), per_tx_cap_usd: formatUsd(spike.newCap) },
    dedupeKey: `agent-spike:${spike.authorizationId}:${spike.anomalyKey}`,
  });
}

/** The bell's reads and acknowledgements, for the employer's owner. */
export class NotificationsService {
  private readonly database: Database;
  private readonly employers: EmployersService;

  constructor(options: { database: Database; employers: EmployersService }) {
    this.database = options.database;
    this.employers = options.employers;
  }

  async list(caller: Caller, employerId: string, options: { unreadOnly: boolean; limit: number; before: { createdAt: Date; id: string } | null }) {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    const db = this.database.db;
    const [rows, unread] = await Promise.all([store.listNotifications(db, employerId, options), store.countUnread(db, employerId)]);
    return { rows, unread };
  }

  async markRead(caller: Caller, employerId: string, ids: string[] | 'all') {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    const updated = await store.markRead(this.database.db, employerId, ids);
    return { updated, unread: await store.countUnread(this.database.db, employerId) };
  }
}
