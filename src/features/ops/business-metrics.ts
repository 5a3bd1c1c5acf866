import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../../db/client.js';
import type { SettledHook } from '../../payments/store.js';
import { jobCounts, jobsAvailable } from '../admin/index.js';
import { sanctionsState } from '../compliance/index.js';
import { outboxCounts } from '../email/index.js';
import type { DependencyHealth } from './dependencies.js';

/**
 * What the money logic reports as it happens (a port, passed in where the event occurs): counts
 * and latencies of this instance. States (payments by status, the outbox, job queues) are not
 * reported: they are read from the database at scrape, so every instance tells the whole truth.
 */
export interface BusinessEvents {
  /** A fee payment kept (served): claim-to-settlement latency by rail. */
  paymentServed(payment: { rail: string; createdAt: Date; settledAt: Date | null }): void;
  /** A spend gate (spec 8.2) refused an agent's payment. */
  spendRefused(code: string): void;
  /** A chain write signed: how long it waited for its signer's nonce (the ledger's row lock). */
  chainWriteSigned(chain: string, signer: string, nonceWaitSeconds: number): void;
  /** A reconciler (payments, payroll, agent_pay, escrow) resolved `count` items this way. */
  reconciled(reconciler: string, outcome: string, count: number): void;
}

/** The payment gate's settled hook, also reporting each kept fee's settlement latency. */
export function reportingSettled(hook: SettledHook, events: BusinessEvents): SettledHook {
  return async (db, payment) => {
    await hook(db, payment);
    events.paymentServed(payment);
  };
}

export interface BusinessMetricSources {
  /** The app's metrics registry. */
  registry: Registry;
  database: Database;
  /** The outside systems (absent: no dependency gauge). */
  health?: DependencyHealth | undefined;
}

/** Prometheus business metrics on the app's registry (docs/operations.md lists them). */
export class BusinessMetrics implements BusinessEvents {
  private readonly settlement: Histogram<'rail'>;
  private readonly refusals: Counter<'code'>;
  private readonly chainWrites: Counter<'chain' | 'signer'>;
  private readonly nonceWaits: Histogram<'chain' | 'signer'>;
  private readonly resolutions: Counter<'reconciler' | 'outcome'>;

  constructor(sources: BusinessMetricSources) {
    const registers = [sources.registry];
    this.settlement = new Histogram({
      name: 'payment_settlement_seconds',
      help: 'Fee payments kept: seconds from claim to settlement, by rail (this instance).',
      labelNames: ['rail'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.refusals = new Counter({ name: 'agent_spend_refusals_total', help: 'Agent payments refused by a spend gate, by code (this instance).', labelNames: ['code'], registers });
    this.chainWrites = new Counter({ name: 'chain_writes_total', help: 'Chain writes signed, by chain and signer (this instance).', labelNames: ['chain', 'signer'], registers });
    this.nonceWaits = new Histogram({
      name: 'chain_nonce_wait_seconds',
      help: "Seconds a chain write waited for its signer's next nonce (the row lock every instance shares).",
      labelNames: ['chain', 'signer'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.resolutions = new Counter({
      name: 'reconciler_resolutions_total',
      help: 'Items a reconciler job resolved, by reconciler and outcome (this instance).',
      labelNames: ['reconciler', 'outcome'],
      registers,
    });
    registerStateGauges(registers, sources);
  }

  paymentServed(payment: { rail: string; createdAt: Date; settledAt: Date | null }): void {
    if (payment.settledAt) this.settlement.observe({ rail: payment.rail }, Math.max(0, (payment.settledAt.getTime() - payment.createdAt.getTime()) / 1000));
  }

  spendRefused(code: string): void {
    this.refusals.inc({ code });
  }

  chainWriteSigned(chain: string, signer: string, nonceWaitSeconds: number): void {
    this.chainWrites.inc({ chain, signer });
    this.nonceWaits.observe({ chain, signer }, nonceWaitSeconds);
  }

  reconciled(reconciler: string, outcome: string, count: number): void {
    if (count > 0) this.resolutions.inc({ reconciler, outcome }, count);
  }
}

/** Gauges read at scrape: one cheap GROUP BY each (indexes on status), the same on every instance. */
function registerStateGauges(registers: Registry[], { database, health }: BusinessMetricSources): void {
  type Rows = Record<string, string | number>[];
  /** `query`: the platform's own tables in SQL; a feature's through its index (a function). */
  const counted = (name: string, help: string, query: string | (() => Promise<Rows>), labels: readonly string[]) =>
    new Gauge({
      name,
      help,
      labelNames: labels,
      registers,
      async collect() {
        this.reset();
        // A database that does not answer leaves the gauge empty: /metrics still serves the rest
        // (the HTTP 5xx counts are what shows such an outage).
        const read = typeof query === 'string' ? database.pool.query<Record<string, string>>(query).then((r) => r.rows) : query();
        const rows: Rows = await read.catch(() => []);
        for (const row of rows) this.set(Object.fromEntries(labels.map((l) => [l, String(row[l] ?? '')])), Number(row.value));
      },
    });
  counted('payments', 'Fee payments by rail and status (refunding and refunded are the refunds).', 'SELECT rail, status, count(*) AS value FROM payments GROUP BY rail, status', ['rail', 'status']);
  counted(
    'payments_refunded_base_units',
    'Sum of refunded fees in base units (6 decimals), by rail.',
    "SELECT rail, sum(amount) AS value FROM payments WHERE status = 'refunded' GROUP BY rail",
    ['rail'],
  );
  counted('email_outbox', 'Outbox emails by status.', async () => (await outboxCounts(database.db)).map((r) => ({ status: r.status, value: r.count })), ['status']);
  const sanctions = (value: (state: NonNullable<Awaited<ReturnType<typeof sanctionsState>>>) => number) => async () => {
    const state = await sanctionsState(database.db);
    return state ? [{ value: value(state) }] : [];
  };
  counted('sanctions_list_entries', 'EVM-format addresses on the sanctions list in force.', sanctions((s) => s.entries), []);
  counted('sanctions_list_synced_timestamp_seconds', 'When the sanctions list in force was put in force (unix seconds).', sanctions((s) => s.syncedAt.getTime() / 1000), []);
  counted('sanctions_list_sync_failing', '1 when the last sanctions refresh failed (the list in force stayed), else 0.', sanctions((s) => (s.lastError === null ? 0 : 1)), []);
  counted(
    'chain_signer_next_nonce',
    'Each signing key\'s next nonce: the writes it has signed ever, every instance together.',
    'SELECT chain, address AS signer, next_nonce AS value FROM chain_signers',
    ['chain', 'signer'],
  );
  counted(
    'chain_writes_unmined',
    'Signed chain writes not yet seen mined, by chain and signer.',
    'SELECT chain, address AS signer, count(*) AS value FROM chain_writes GROUP BY chain, address',
    ['chain', 'signer'],
  );
  new Gauge({
    name: 'job_queue_jobs',
    help: 'pg-boss jobs per queue and state: created and retry are the backlog, failed the retained failures.',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      this.reset();
      // No job runner has ever started on this database (no pgboss schema), or it does not answer: empty.
      const counts = (await jobsAvailable(database.db).catch(() => false)) ? await jobCounts(database.db).catch(() => []) : [];
      for (const { name, state, count } of counts) this.set({ queue: name, state }, count);
    },
  });
  if (health) {
    new Gauge({
      name: 'dependency_up',
      help: 'Whether each outside system answered its last probe (1) or not (0); probes are reused for 10 s.',
      labelNames: ['dependency'],
      registers,
      async collect() {
        this.reset();
        for (const [dependency, state] of Object.entries(await health.check())) this.set({ dependency }, state.ok ? 1 : 0);
      },
    });
  }
}
