import type { Address } from 'viem';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database, Db } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { AppError, notFound } from '../../errors.js';
import { recordAudit } from '../../audit/store.js';
import { PaidCallers, type PaidCaller } from '../employers/index.js';
import type { EmployersService } from '../employers/index.js';
import type { EmployeeRow } from '../employers/index.js';
import { parseSdnAdvanced, sanctionsSnapshot, type SanctionsList } from './sanctions-list.js';
import { AUDIT_LOG_LIMIT, GLOBAL_POLICY_ID, type ReasonCode } from './schema.js';
import * as store from './store.js';

/**
 * Risk scale of a compliance check (docs/decisions.md, "Compliance checks"): the highest-scoring
 * reason wins; any reason makes the result BLOCKED.
 */
export const RISK_SCORES: Record<ReasonCode, number> = {
  SANCTIONED: 100,
  EMPLOYER_BLOCKLIST: 90,
  TIP403_UNAUTHORIZED: 70,
};

// OFAC's full export is tens of megabytes: a slow mirror gets two minutes.
const REFRESH_TIMEOUT_MS = 120_000;

/** The event type of every check written by `POST /api/mpp/compliance/check`. */
export const CHECK_EVENT_TYPE = 'compliance_check';
/** The screen a payroll run passed before it was stored. */
export const PAYROLL_SCREEN_EVENT_TYPE = 'payroll_screen';

export interface CheckReason {
  code: ReasonCode;
  source: string;
  detail: string | null;
  risk_score: number;
}

export interface CheckResult {
  wallet_address: string;
  policy_id: number;
  authorized: boolean;
  risk_score: number;
  result: 'CLEAR' | 'BLOCKED';
  checked_at: string;
  reasons: CheckReason[];
}

export interface CheckInput {
  walletAddress: string;
  policyId?: number | undefined;
  employerId?: string | undefined;
}

export interface ComplianceServiceOptions {
  database: Database;
  employers: EmployersService;
  tempo: Pick<TempoChain, 'isAuthorized'>;
  /** The service's slug, for the compliance list's `providerId`; default `svc`. */
  serviceSlug?: string | undefined;
}

export class ComplianceService {
  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly tempo: Pick<TempoChain, 'isAuthorized'>;
  private readonly serviceSlug: string;

  constructor(options: ComplianceServiceOptions) {
    this.database = options.database;
    this.employers = options.employers;
    this.tempo = options.tempo;
    this.serviceSlug = options.serviceSlug ?? 'svc';
  }

  /** `providerId` of the compliance list (spec 2.7): `<SERVICE_SLUG>-compliance`. */
  get providerId(): string {
    return `${this.serviceSlug}-compliance`;
  }

  /**
   * Makes the global `sanctions:builtin` rows of `wallet_blocklist` equal to the list (by default
   * the snapshot shipped with the service) and records it as the list in force, in one
   * transaction. Idempotent: a second run changes nothing.
   */
  async syncSanctionsList(list: SanctionsList = sanctionsSnapshot()) {
    const entries = list.entries.map((e) => ({ address: e.address.toLowerCase(), reason: e.reason }));
    const changes = await this.database.transaction(async (tx) => {
      const changed = await store.syncBuiltinSanctions(tx.db, entries);
      await store.recordSanctionsSynced(tx.db, { source: list.source, listDate: list.listDate, entries: list.entries.length }, this.database.clock.now());
      return changed;
    });
    return { source: list.source, listDate: list.listDate, entries: list.entries.length, ...changes };
  }

  /** At start: the snapshot, unless a refresh has already put a newer list in force. */
  async loadSanctionsSnapshot() {
    const state = await store.sanctionsState(this.database.db);
    const snapshot = sanctionsSnapshot();
    if (state && state.source !== snapshot.source) return { source: state.source, listDate: state.listDate, entries: state.entries, kept: true };
    return this.syncSanctionsList(snapshot);
  }

  /**
   * Replaces the list with OFAC's current `sdn_advanced.xml` from `url` (SANCTIONS_SDN_URL). A
   * failed download, a malformed file, or one with under half the addresses in force keeps the
   * list as it is and records the error (the admin overview and `sanctions_list_sync_failing`).
   */
  async refreshSanctionsList(url: string, options: { fetch?: typeof fetch; timeoutMs?: number } = {}) {
    try {
      const response = await (options.fetch ?? fetch)(url, { signal: AbortSignal.timeout(options.timeoutMs ?? REFRESH_TIMEOUT_MS) });
      if (!response.ok || !response.body) throw new Error(`the download answered HTTP ${response.status}`);
      const list = await parseSdnAdvanced(response.body.pipeThrough(new TextDecoderStream()), url);
      const current = await store.sanctionsState(this.database.db);
      if (list.entries.length === 0) throw new Error('the file lists no EVM-format digital currency address');
      if (current && list.entries.length < current.entries / 2) {
        throw new Error(`the file lists ${list.entries.length} addresses against ${current.entries} in force: refused as truncated`);
      }
      return { ok: true as const, ...(await this.syncSanctionsList(list)) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await store.recordSanctionsFailure(this.database.db, message, this.database.clock.now());
      return { ok: false as const, error: message };
    }
  }

  /** The list in force: source, date, size, last sync and last error (null before the first sync). */
  sanctionsListState() {
    return store.sanctionsState(this.database.db);
  }

  /**
   * Screens a wallet (spec 4.3): the sanctions list, the employer's blocklist when scoped, and a
   * TIP-403 policy. Writes a `compliance_events` row for every check, BLOCKED ones included. The
   * route has already checked that the caller acts for `employerId` (`requireActsFor`).
   */
  async check(input: CheckInput): Promise<CheckResult> {
    const wallet = input.walletAddress.toLowerCase();
    const employerId = input.employerId ?? null;
    const employer = employerId === null ? null : await this.employers.findEmployer(employerId);
    if (employerId !== null && !employer) throw notFound('Employer');

    const policyId = input.policyId !== undefined ? BigInt(input.policyId) : (employer?.tip403PolicyId ?? GLOBAL_POLICY_ID);
    const employeesOfWallet: Promise<EmployeeRow[]> =
      employerId === null ? Promise.resolve([]) : this.employers.employeesByWallets(employerId, [wallet]);
    const [hits, authorized, employees] = await Promise.all([
      store.findScreeningHits(this.database.db, employerId, [wallet]),
      this.isAuthorized(policyId, wallet),
      employeesOfWallet,
    ]);

    const reasons: CheckReason[] = hits.map((hit) =>
      hit.employerId === null
        ? { code: 'SANCTIONED', source: hit.source, detail: hit.reason, risk_score: RISK_SCORES.SANCTIONED }
        : { code: 'EMPLOYER_BLOCKLIST', source: hit.source, detail: hit.reason, risk_score: RISK_SCORES.EMPLOYER_BLOCKLIST },
    );
    if (!authorized) {
      reasons.push({
        code: 'TIP403_UNAUTHORIZED',
        source: `tip403:${policyId}`,
        detail: `not authorized by TIP-403 policy ${policyId}`,
        risk_score: RISK_SCORES.TIP403_UNAUTHORIZED,
      });
    }
    const riskScore = Math.max(0, ...reasons.map((r) => r.risk_score));
    const result = reasons.length > 0 ? 'BLOCKED' : 'CLEAR';
    // An active employee first, when two records share the wallet.
    const employee = employees.find((e) => e.status === 'active') ?? employees[0] ?? null;
    const checkedAt = this.database.clock.now();

    await store.insertEvent(this.database.db, {
      employerId,
      employeeId: employee?.id ?? null,
      walletAddress: wallet,
      policyId,
      authorized,
      riskScore,
      result,
      eventType: CHECK_EVENT_TYPE,
      reasons,
      checkedAt,
    });
    return {
      wallet_address: wallet,
      policy_id: Number(policyId),
      // What a payer reads before paying: never true for a wallet that is BLOCKED for any reason.
      authorized: result === 'CLEAR',
      risk_score: riskScore,
      result,
      checked_at: checkedAt.toISOString(),
      reasons,
    };
  }

  /** TIP-403 `isAuthorized`; a policy the registry does not know is a 422 POLICY_NOT_FOUND. */
  private async isAuthorized(policyId: bigint, wallet: string): Promise<boolean> {
    try {
      return await this.tempo.isAuthorized(policyId, wallet as Address);
    } catch (error) {
      if (error instanceof ChainRevertError && error.errorName === 'PolicyNotFound') {
        throw new AppError('POLICY_NOT_FOUND', `policyId: TIP-403 policy ${policyId} does not exist.`, {
          field: 'policyId',
          policy_id: Number(policyId),
        });
      }
      throw error;
    }
  }

  /**
   * The employer's compliance-cleared wallets (spec 2.7), for a caller acting for it (checked by
   * the route); the counting and filtering happen in SQL.
   */
  async clearedList(employerId: string, limit: number) {
    const { rows, total, lastUpdated } = await store.clearedWallets(this.database.db, employerId, limit);
    return {
      providerId: this.providerId,
      clearedWallets: total,
      list: rows.map((r) => ({
        walletAddress: r.walletAddress,
        checkedAt: r.checkedAt.toISOString(),
        employeeId: r.employeeId,
        eventType: r.eventType,
      })),
      lastUpdated: lastUpdated ? lastUpdated.toISOString() : null,
    };
  }

  /**
   * Of these wallets, the ones on the sanctions list or on this employer's blocklist, with why:
   * one query however many wallets. Keys are lower-cased; a wallet on both lists gets the
   * sanctions reason.
   */
  async blockedWallets(employerId: string, wallets: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(wallets.map((w) => w.toLowerCase()))];
    const hits = await store.findScreeningHits(this.database.db, employerId, unique);
    const blocked = new Map<string, string>();
    // Sanctions rows come first, so they win.
    for (const hit of hits) {
      if (blocked.has(hit.walletAddress)) continue;
      const list = hit.employerId === null ? 'sanctioned' : 'on the employer blocklist';
      blocked.set(hit.walletAddress, hit.reason ? `${list}: ${hit.reason}` : list);
    }
    return blocked;
  }

  /**
   * Records the screen a payroll run passed (sanctions, blocklist and the employer's TIP-403
   * policy, checked by payroll) as a CLEAR check of each recipient, in the run's own transaction:
   * the compliance page then shows what the wizard said, "screened on submit".
   */
  async recordPayrollScreen(db: Db, employer: { id: string; tip403PolicyId: bigint | null }, recipients: { employeeId: string; wallet: string }[]): Promise<void> {
    const screen = { employerId: employer.id, policyId: employer.tip403PolicyId ?? GLOBAL_POLICY_ID, eventType: PAYROLL_SCREEN_EVENT_TYPE, checkedAt: this.database.clock.now() };
    await store.insertClearEvents(db, screen, recipients);
  }

  /** 404 (exactly like a missing employer) unless the paid caller acts for it. */
  static requireActsFor(paid: PaidCaller, employerId: string): void {
    if (!PaidCallers.actsFor(paid, employerId)) throw notFound('Employer');
  }

  // ---- owner routes (bearer) ---------------------------------------------------------------------

  /** Active employees, oldest first, each with its current wallet's standing in this employer's ledger and lists. */
  private async employeesWithLatestCheck(employerId: string): Promise<store.EmployeeCompliance[]> {
    const employees = await this.employers.activeEmployees(employerId);
    const wallets = [...new Set(employees.flatMap((e) => (e.walletAddress ? [e.walletAddress.toLowerCase()] : [])))];
    const standing = await store.walletStanding(this.database.db, employerId, wallets);
    return employees.map((e) => ({
      id: e.id,
      fullName: e.fullName,
      walletAddress: e.walletAddress,
      manualReviewStatus: e.manualReviewStatus,
      ...(e.walletAddress ? standing.get(e.walletAddress.toLowerCase())! : { latestResult: null, latestCheckedAt: null, blockedNow: null }),
    }));
  }

  /** `GET /api/employers/{id}/compliance`: summary, employees with their latest check, audit log. */
  async overview(caller: Caller, employerId: string) {
    const db = this.database.db;
    await this.employers.requireOwned(db, caller, employerId);
    const [employees, blocklistEntries, audit, sanctions] = await Promise.all([
      this.employeesWithLatestCheck(employerId),
      store.countBlocklist(db, employerId),
      store.recentAudit(db, employerId, AUDIT_LOG_LIMIT),
      store.sanctionsState(db),
    ]);
    const checked = employees.filter((e) => e.latestResult !== null).length;
    const clear = employees.filter((e) => e.latestResult === 'CLEAR').length;
    return {
      employer_id: employerId,
      summary: {
        employees: employees.length,
        checked,
        clear,
        blocked: checked - clear,
        unchecked: employees.length - checked,
        blocklist_entries: blocklistEntries,
      },
      employees: employees.map((e) => ({
        id: e.id,
        full_name: e.fullName,
        wallet_address: e.walletAddress,
        latest_result: e.latestResult,
        latest_checked_at: e.latestCheckedAt ? e.latestCheckedAt.toISOString() : null,
        manual_review_status: e.manualReviewStatus,
        blocked_now: e.blockedNow,
      })),
      audit_log: audit.map((a) => ({
        id: a.id,
        action: a.action,
        actor_kind: a.actorKind,
        actor_user_id: a.actorUserId,
        target_type: a.targetType,
        target_id: a.targetId,
        details: (a.details ?? {}) as Record<string, unknown>,
        created_at: a.createdAt.toISOString(),
      })),
      sanctions_list: sanctions && { source: sanctions.source, list_date: sanctions.listDate, entries: sanctions.entries, synced_at: sanctions.syncedAt.toISOString() },
    };
  }

  async listBlocklist(caller: Caller, employerId: string): Promise<store.BlocklistRow[]> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    return store.listBlocklist(this.database.db, employerId);
  }

  /** Adds a wallet to the employer's blocklist, or returns the entry that already blocks it. */
  async addToBlocklist(
    caller: Caller,
    employerId: string,
    input: { walletAddress: string; reason?: string | undefined },
    requestId: string,
  ): Promise<{ entry: store.BlocklistRow; created: boolean }> {
    const walletAddress = input.walletAddress.toLowerCase();
    return this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const inserted = await store.insertBlocklistIfAbsent(tx.db, { employerId, walletAddress, reason: input.reason ?? null });
      if (inserted) {
        await recordAudit(tx.db, {
          actorUserId: caller.userId,
          actorKind: 'user',
          action: 'blocklist.added',
          employerId,
          targetType: 'wallet_blocklist',
          targetId: inserted.id,
          details: { wallet_address: walletAddress, reason: inserted.reason },
          requestId,
        });
        return { entry: inserted, created: true };
      }
      const existing = await store.findBlocklistEntry(tx.db, employerId, walletAddress);
      if (!existing) throw new Error('blocklist insert conflicted but no entry exists');
      return { entry: existing, created: false };
    });
  }

  /** Removes an entry of the employer's blocklist; another employer's entry is a 404 like a missing one. */
  async removeFromBlocklist(caller: Caller, employerId: string, entryId: string, requestId: string): Promise<void> {
    await this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const removed = await store.deleteBlocklistEntry(tx.db, employerId, entryId);
      if (!removed) throw notFound('Blocklist entry');
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'blocklist.removed',
        employerId,
        targetType: 'wallet_blocklist',
        targetId: removed.id,
        details: { wallet_address: removed.walletAddress, reason: removed.reason },
        requestId,
      });
    });
  }
}
