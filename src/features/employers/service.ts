import type { Address } from 'viem';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { Database, Db } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { AppError, notFound } from '../../errors.js';
import { formatUsd, parseUsd } from '../../money.js';
import { recordAudit } from '../../audit/store.js';
import type { UsersService } from '../users/index.js';
import { queueReleasedStream } from '../wages/index.js';
import { newAgentKey } from './paid-caller.js';
import { scheduleColumns, type PaySchedule } from './pay-schedule.js';
import { CreateEmployeeBody, withoutControlCharacters } from './schema.js';
import * as store from './store.js';
import { queueEmails, type OutgoingEmail } from '../email/index.js';

export interface NewEmployeeInput {
  email: string;
  fullName: string;
  walletAddress?: string | undefined;
  solanaWalletAddress?: string | undefined;
  annualSalaryUsd?: string | undefined;
  department?: string | undefined;
  costCentre?: string | undefined;
}

/** Whether a TIP-403 policy id exists on the Tempo chain. */
export type PolicyExists = (policyId: bigint) => Promise<boolean>;

const ANY_ADDRESS: Address = '0x0000000000000000000000000000000000000001';

/**
 * `PolicyExists` over the Tempo chain's TIP-403 registry: `isAuthorized(id, anyone)` reverts with
 * `PolicyNotFound` for an id that was never created (ids 0 and 1 are built in). Any other failure
 * (chain unreachable) is thrown: the caller answers 5xx and nothing is stored.
 */
export function tip403PolicyExists(tempo: { isAuthorized(policyId: bigint, account: Address): Promise<boolean> }): PolicyExists {
  return async (policyId) => {
    try {
      await tempo.isAuthorized(policyId, ANY_ADDRESS);
      return true;
    } catch (error) {
      if (error instanceof ChainRevertError && error.errorName === 'PolicyNotFound') return false;
      throw error;
    }
  };
}

export interface EmployerUpdate {
  name?: string | undefined;
  /** null clears it. */
  tip403PolicyId?: number | null | undefined;
  /** null clears it. */
  paySchedule?: PaySchedule | null | undefined;
}

export interface TeamMemberUpdate {
  annualSalaryUsd?: string | undefined;
  payrollPaused?: boolean | undefined;
  remove?: true | undefined;
  manualReview?: { status: 'pending' | 'approved' | 'rejected'; note?: string | undefined } | undefined;
  walletAddress?: string | null | undefined;
  solanaWalletAddress?: string | null | undefined;
  department?: string | null | undefined;
  costCentre?: string | null | undefined;
}

export interface OwnProfileUpdate {
  fullName?: string | undefined;
  walletAddress?: string | null | undefined;
  solanaWalletAddress?: string | null | undefined;
}

/** Where invite emails send people: the employee portal. */
export interface InviteOptions {
  portalUrl: string;
}

export interface BulkRowResult {
  row: number;
  status: 'created' | 'existing' | 'invalid';
  id?: string;
  email?: string;
  field?: string;
  reason?: string;
}

export interface BulkImportReport {
  employerId: string;
  totals: { rows: number; created: number; existing: number; invalid: number };
  results: BulkRowResult[];
}

export const WALLET_REVIEW_NOTE = 'The employee changed a payout wallet; approve it before payroll pays the new wallet.';
export const DUPLICATE_IN_IMPORT = 'duplicate email in this import';

/** A bulk-import row that passed validation: its result (updated once written) and what to insert. */
interface ValidImportRow {
  result: BulkRowResult;
  input: NewEmployeeInput;
  annualSalary: bigint;
}

/**
 * Validates each bulk-import row on its own: every row gets a result, in order; a repeated email
 * is invalid in the later row. The valid rows start as `existing` until written.
 */
function validateImportRows(rows: readonly Record<string, unknown>[]): { results: BulkRowResult[]; valid: ValidImportRow[] } {
  const results: BulkRowResult[] = [];
  const valid: ValidImportRow[] = [];
  const seen = new Set<string>();
  rows.forEach((raw, index) => {
    const row = index + 1;
    const parsed = CreateEmployeeBody.safeParse(csvCells(raw));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const email = typeof raw.email === 'string' && raw.email.trim() !== '' ? raw.email.trim().toLowerCase() : undefined;
      results.push({
        row,
        status: 'invalid',
        ...(email === undefined ? {} : { email }),
        field: issue && issue.path.length > 0 ? issue.path.join('.') : 'row',
        reason: issue?.message ?? 'is invalid',
      });
      return;
    }
    const body = parsed.data;
    if (seen.has(body.email)) {
      results.push({ row, status: 'invalid', email: body.email, field: 'email', reason: DUPLICATE_IN_IMPORT });
      return;
    }
    seen.add(body.email);
    const annualSalary = body.annual_salary_usd === undefined ? 0n : parseUsd(body.annual_salary_usd);
    if (annualSalary === null) throw new Error('annual salary passed validation but does not parse');
    const result: BulkRowResult = { row, status: 'existing', email: body.email };
    results.push(result);
    valid.push({
      result,
      annualSalary,
      input: {
        email: body.email,
        fullName: body.full_name,
        walletAddress: body.wallet_address,
        solanaWalletAddress: body.solana_wallet_address,
        department: body.department,
        costCentre: body.cost_centre,
      },
    });
  });
  return { results, valid };
}

/** Told, after the commit, of the stream stops a change queued (the wages feature stops them at once). */
export type StreamStopListener = (stopIds: string[]) => Promise<unknown>;

export class EmployersService {
  private readonly streamStopListeners: StreamStopListener[] = [];

  private readonly database: Database;
  private readonly users: UsersService;

  constructor(options: { database: Database; users: UsersService }) {
    this.database = options.database;
    this.users = options.users;
  }

  /**
   * `listener` runs after a committed change queued stream stops. It is the fast path only: the
   * stops are durable rows, and the wages job finishes any a listener failed or never saw.
   */
  onStreamStops(listener: StreamStopListener): void {
    this.streamStopListeners.push(listener);
  }

  private async streamStopsQueued(stopId: string | null): Promise<void> {
    if (!stopId) return;
    await Promise.all(this.streamStopListeners.map((listener) => listener([stopId]).catch(() => {})));
  }

  /**
   * Creates the caller's employer, or returns the one they already own (spec 4.8). Safe under
   * concurrent calls: the owner is unique, and the loser of a race reads the winner's row.
   */
  async createOrGet(
    caller: Caller,
    input: { name: string; adminWallet?: string | undefined },
    requestId: string,
  ): Promise<{ employer: store.EmployerRow; created: boolean }> {
    // The usual case (already an owner) needs one read and no transaction.
    const owned = await store.findEmployerByOwner(this.database.db, caller.userId);
    if (owned) return { employer: owned, created: false };
    return this.database.transaction(async (tx) => {
      const inserted = await store.insertEmployerIfAbsent(tx.db, {
        ownerUserId: caller.userId,
        name: input.name,
        adminWallet: input.adminWallet ?? null,
      });
      if (inserted) {
        await recordAudit(tx.db, {
          actorUserId: caller.userId,
          actorKind: 'user',
          action: 'employer.created',
          employerId: inserted.id,
          targetType: 'employer',
          targetId: inserted.id,
          requestId,
        });
        return { employer: inserted, created: true };
      }
      const existing = await store.findEmployerByOwner(tx.db, caller.userId);
      if (!existing) throw new Error('employer insert conflicted but no employer is owned');
      return { employer: existing, created: false };
    });
  }

  /**
   * The employer if the caller owns it; otherwise 404 exactly as if it did not exist, so another
   * tenant's id reveals nothing (authorisation before existence).
   */
  async requireOwned(db: Db, caller: Caller, employerId: string): Promise<store.EmployerRow> {
    const employer = await store.findOwnedEmployer(db, employerId, caller.userId);
    if (!employer) throw notFound('Employer');
    return employer;
  }

  /** The caller's own employer; another's answers like a missing one. */
  ownedEmployer(caller: Caller, employerId: string): Promise<store.EmployerRow> {
    return this.requireOwned(this.database.db, caller, employerId);
  }

  async listTeam(caller: Caller, employerId: string, page: { page: number; limit: number }) {
    await this.requireOwned(this.database.db, caller, employerId);
    return store.listActiveEmployees(this.database.db, employerId, {
      offset: (page.page - 1) * page.limit,
      limit: page.limit,
    });
  }

  /**
   * Adds an employee, or returns the existing one with the same email at this employer. The new
   * record is linked at once to a user who already proved that email address.
   */
  async addEmployee(
    caller: Caller,
    employerId: string,
    input: NewEmployeeInput,
    requestId: string,
  ): Promise<{ employee: store.EmployeeRow; created: boolean }> {
    return this.insertEmployee(caller, employerId, input, requestId, null);
  }

  /**
   * `POST /api/employees`: adds an employee to the caller's own employer (or returns the existing
   * one of that email) and, when it is new, queues the invite email in the same transaction, so
   * concurrent calls create one record and one invite.
   */
  async createEmployee(
    caller: Caller,
    input: NewEmployeeInput,
    requestId: string,
    invite: InviteOptions,
  ): Promise<{ employee: store.EmployeeRow; created: boolean }> {
    if (!caller.ownedEmployerId) throw notFound('Employer');
    return this.insertEmployee(caller, caller.ownedEmployerId, input, requestId, invite);
  }

  private async insertEmployee(
    caller: Caller,
    employerId: string,
    input: NewEmployeeInput,
    requestId: string,
    invite: InviteOptions | null,
  ): Promise<{ employee: store.EmployeeRow; created: boolean }> {
    const annualSalary = input.annualSalaryUsd === undefined ? 0n : parseUsd(input.annualSalaryUsd);
    if (annualSalary === null) throw new Error('annual salary passed validation but does not parse');
    return this.database.transaction(async (tx) => {
      const employer = await this.requireOwned(tx.db, caller, employerId);
      const userId = await this.users.findVerifiedUserIdByEmail(tx.db, input.email);
      const inserted = await store.insertEmployeeIfAbsent(tx.db, {
        ...employeeValues(employerId, input, annualSalary),
        userId,
        invitedAt: invite ? this.database.clock.now() : null,
      });
      if (inserted) {
        if (invite) await queueEmails(tx.db, [inviteEmail(employer, inserted, invite)]);
        await recordAudit(tx.db, {
          actorUserId: caller.userId,
          actorKind: 'user',
          action: 'employee.created',
          employerId,
          targetType: 'employee',
          targetId: inserted.id,
          ...(invite ? { details: { invited: true } } : {}),
          requestId,
        });
        return { employee: inserted, created: true };
      }
      const existing = await store.findEmployeeByEmail(tx.db, employerId, input.email);
      if (!existing) throw new Error('employee insert conflicted but none exists');
      return { employee: existing, created: false };
    });
  }

  /**
   * `POST /api/employees/bulk`: validates every row on its own, then writes the valid ones in one
   * transaction (all of them or, if anything fails, none). Invalid rows and repeated emails (the
   * later row) are reported, not written; known emails are reported as `existing`. New employees
   * get an invite, queued in the same transaction.
   */
  async importEmployees(
    caller: Caller,
    rows: readonly Record<string, unknown>[],
    requestId: string,
    invite: InviteOptions,
  ): Promise<BulkImportReport> {
    const employerId = caller.ownedEmployerId;
    if (!employerId) throw notFound('Employer');
    const { results, valid } = validateImportRows(rows);

    if (valid.length > 0) {
      await this.database.transaction(async (tx) => {
        const employer = await this.requireOwned(tx.db, caller, employerId);
        const invitedAt = this.database.clock.now();
        const values: store.NewEmployee[] = [];
        for (const { input, annualSalary } of valid) {
          const userId = await this.users.findVerifiedUserIdByEmail(tx.db, input.email);
          values.push({ ...employeeValues(employerId, input, annualSalary), userId, invitedAt });
        }
        const inserted = await store.insertEmployeesIfAbsent(tx.db, values);
        const created = new Map(inserted.map((employee) => [employee.email, employee]));
        const known = await store.findEmployeesByEmails(
          tx.db,
          employerId,
          valid.filter((v) => !created.has(v.input.email)).map((v) => v.input.email),
        );
        const existing = new Map(known.map((employee) => [employee.email, employee]));
        for (const { result, input } of valid) {
          const employee = created.get(input.email) ?? existing.get(input.email);
          if (!employee) throw new Error(`imported employee ${input.email} is neither new nor known`);
          result.status = created.has(input.email) ? 'created' : 'existing';
          result.id = employee.id;
        }
        await queueEmails(
          tx.db,
          inserted.map((employee) => inviteEmail(employer, employee, invite)),
        );
        if (inserted.length > 0) {
          await recordAudit(tx.db, {
            actorUserId: caller.userId,
            actorKind: 'user',
            action: 'employees.imported',
            employerId,
            targetType: 'employer',
            targetId: employerId,
            details: { rows: rows.length, created_ids: inserted.map((e) => e.id), existing: known.length, invited: true },
            requestId,
          });
        }
      });
    }

    const count = (status: BulkRowResult['status']) => results.filter((r) => r.status === status).length;
    return {
      employerId,
      totals: { rows: rows.length, created: count('created'), existing: count('existing'), invalid: count('invalid') },
      results,
    };
  }

  /**
   * `PATCH /api/employers/{id}`: renames the employer, sets or clears its TIP-403 policy and its
   * pay schedule. A
   * policy id is checked on chain (when the chain is available) before anything is stored.
   */
  async updateEmployer(
    caller: Caller,
    employerId: string,
    patch: EmployerUpdate,
    requestId: string,
    policyExists: PolicyExists | undefined,
  ): Promise<store.EmployerRow> {
    await this.requireOwned(this.database.db, caller, employerId);
    const policyId = patch.tip403PolicyId === undefined || patch.tip403PolicyId === null ? patch.tip403PolicyId : BigInt(patch.tip403PolicyId);
    if (typeof policyId === 'bigint' && policyExists && !(await policyExists(policyId))) {
      throw new AppError('POLICY_NOT_FOUND', `tip403_policy_id: policy ${policyId} does not exist on the Tempo chain.`, {
        field: 'tip403_policy_id',
      });
    }
    return this.database.transaction(async (tx) => {
      const current = await store.lockOwnedEmployer(tx.db, employerId, caller.userId);
      if (!current) throw notFound('Employer');
      const changes = new ChangeSet(current);
      if (patch.name !== undefined) changes.change('name', 'name', patch.name);
      if (policyId !== undefined) changes.change('tip403_policy_id', 'tip403PolicyId', policyId, shownPolicy);
      if (patch.paySchedule !== undefined) {
        const columns = scheduleColumns(patch.paySchedule);
        changes.change('pay_schedule', 'paySchedule', columns.paySchedule);
        changes.change('pay_day', 'payDay', columns.payDay);
        changes.change('pay_anchor_date', 'payAnchorDate', columns.payAnchorDate);
      }
      if (changes.empty) return current;
      const updated = await store.updateEmployer(tx.db, employerId, changes.set);
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'employer.updated',
        employerId,
        targetType: 'employer',
        targetId: employerId,
        details: changes.details(),
        requestId,
      });
      return updated;
    });
  }

  /**
   * `PATCH /api/employers/{id}/team/{employeeId}`: the owner changes salary, pause, wallets,
   * department, cost centre, records a manual review, or removes the employee. The row is locked
   * for the read-compare-write, so concurrent edits apply one after another and the audit trail's
   * before/after values chain. A removed employee cannot be edited (409); removing again is a no-op.
   */
  async updateTeamMember(
    caller: Caller,
    employerId: string,
    employeeId: string,
    patch: TeamMemberUpdate,
    requestId: string,
  ): Promise<store.EmployeeRow> {
    const annualSalary = patch.annualSalaryUsd === undefined ? undefined : parseUsd(patch.annualSalaryUsd);
    if (annualSalary === null) throw new Error('annual salary passed validation but does not parse');
    let stopId: string | null = null;
    const updated = await this.database.transaction(async (tx) => {
      await this.requireOwned(tx.db, caller, employerId);
      const current = await store.lockEmployerEmployee(tx.db, employerId, employeeId);
      if (!current) throw notFound('Employee');
      if (current.status === 'removed') {
        const onlyRemove = Object.entries(patch).every(([key, value]) => value === undefined || key === 'remove');
        if (onlyRemove && patch.remove) return current;
        throw employeeRemoved();
      }
      const changes = new ChangeSet(current);
      if (annualSalary !== undefined) changes.change('annual_salary_usd', 'annualSalary', annualSalary, shownUsd);
      if (patch.payrollPaused !== undefined) changes.change('payroll_paused', 'payrollPaused', patch.payrollPaused);
      if (patch.walletAddress !== undefined) changes.changeWallet('wallet_address', 'walletAddress', patch.walletAddress);
      if (patch.solanaWalletAddress !== undefined) changes.change('solana_wallet_address', 'solanaWalletAddress', patch.solanaWalletAddress);
      if (patch.department !== undefined) changes.change('department', 'department', patch.department);
      if (patch.costCentre !== undefined) changes.change('cost_centre', 'costCentre', patch.costCentre);
      if (patch.manualReview) {
        changes.change('manual_review_status', 'manualReviewStatus', patch.manualReview.status);
        changes.change('manual_review_note', 'manualReviewNote', patch.manualReview.note ?? null);
        changes.change('manual_reviewed_at', 'manualReviewedAt', this.database.clock.now());
        changes.change('manual_reviewed_by', 'manualReviewedBy', caller.userId);
      }
      if (patch.remove) {
        changes.change('status', 'status', 'removed');
        changes.change('removed_at', 'removedAt', this.database.clock.now());
      }
      if (changes.empty) return current;
      const updated = await store.updateActiveEmployee(tx.db, employeeId, changes.set);
      if (!updated) throw employeeRemoved();
      stopId = await queueReleasedStream(tx.db, current, updated);
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: patch.remove ? 'employee.removed' : 'employee.updated',
        employerId,
        targetType: 'employee',
        targetId: employeeId,
        details: changes.details(),
        requestId,
      });
      return updated;
    });
    await this.streamStopsQueued(stopId);
    return updated;
  }

  /**
   * `PATCH /api/employees/{id}`: the employee edits their own name and payout wallets. Security
   * rule: a changed payout wallet puts the record back to manual review (`pending`), so the
   * employer approves the new wallet before payroll pays it; a stolen employee session alone
   * cannot redirect wages. Anyone but the employee gets 404.
   */
  async updateOwnProfile(caller: Caller, employeeId: string, patch: OwnProfileUpdate, requestId: string): Promise<store.EmployeeRow> {
    if (!caller.employeeIds.includes(employeeId)) throw notFound('Employee');
    let stopId: string | null = null;
    const updated = await this.database.transaction(async (tx) => {
      const current = await store.lockOwnActiveEmployee(tx.db, employeeId, caller.userId);
      if (!current) throw notFound('Employee');
      const changes = new ChangeSet(current);
      if (patch.fullName !== undefined) changes.change('full_name', 'fullName', patch.fullName);
      if (patch.walletAddress !== undefined) changes.changeWallet('wallet_address', 'walletAddress', patch.walletAddress);
      if (patch.solanaWalletAddress !== undefined) changes.change('solana_wallet_address', 'solanaWalletAddress', patch.solanaWalletAddress);
      const walletChanged = 'walletAddress' in changes.set || 'solanaWalletAddress' in changes.set;
      if (walletChanged) {
        changes.change('manual_review_status', 'manualReviewStatus', 'pending');
        changes.change('manual_review_note', 'manualReviewNote', WALLET_REVIEW_NOTE);
        changes.change('manual_reviewed_at', 'manualReviewedAt', null);
        changes.change('manual_reviewed_by', 'manualReviewedBy', null);
      }
      if (changes.empty) return current;
      const updated = await store.updateActiveEmployee(tx.db, employeeId, changes.set);
      if (!updated) throw notFound('Employee');
      // The old wallet's stream stops (a changed wallet is under review, and paid nothing meanwhile).
      stopId = await queueReleasedStream(tx.db, current, updated);
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'employee.profile_updated',
        employerId: current.employerId,
        targetType: 'employee',
        targetId: employeeId,
        details: { ...changes.details(), review_required: walletChanged },
        requestId,
      });
      return updated;
    });
    await this.streamStopsQueued(stopId);
    return updated;
  }

  /**
   * Generates the employer's agent key, or replaces it (the old key stops working at once). The
   * key is returned this once; only its SHA-256 and a display prefix are stored.
   */
  async rotateAgentKey(caller: Caller, employerId: string, requestId: string) {
    const key = newAgentKey();
    const employer = await this.database.transaction(async (tx) => {
      const owned = await this.requireOwned(tx.db, caller, employerId);
      const updated = await store.setAgentKey(tx.db, employerId, key);
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: owned.agentKeyHash ? 'agent_key.rotated' : 'agent_key.created',
        employerId,
        targetType: 'employer',
        targetId: employerId,
        details: { prefix: key.prefix },
        requestId,
      });
      return { updated, rotated: owned.agentKeyHash !== null };
    });
    return { key: key.key, prefix: key.prefix, rotatedAt: employer.updated.agentKeyRotatedAt!, rotated: employer.rotated };
  }

  /** The service's time (database.clock): the routes count the next pay date from it. */
  now(): Date {
    return this.database.clock.now();
  }

  /** The employer, whoever asks (callers that already authorised the request). */
  findEmployer(employerId: string) {
    return store.findEmployer(this.database.db, employerId);
  }

  /**
   * The employer's on-chain treasury account id, opening the account on first use. No
   * transaction is held across the chain write (the embedded chain journals through the pool):
   * the id is recorded by compare-and-set, so concurrent first uses record exactly one account;
   * a loser's freshly opened account stays empty and unused. One instance opens once per employer.
   */
  async ensureTreasuryAccount(employerId: string, open: (employer: store.EmployerRow) => Promise<bigint>): Promise<bigint> {
    const known = await store.findEmployer(this.database.db, employerId);
    if (!known) throw notFound('Employer');
    if (known.employerAccountId) return BigInt(known.employerAccountId);
    let opening = this.openingAccounts.get(employerId);
    if (!opening) {
      opening = this.openAccount(known, open).finally(() => this.openingAccounts.delete(employerId));
      this.openingAccounts.set(employerId, opening);
    }
    return opening;
  }

  private readonly openingAccounts = new Map<string, Promise<bigint>>();

  private async openAccount(employer: store.EmployerRow, open: (employer: store.EmployerRow) => Promise<bigint>): Promise<bigint> {
    const accountId = await open(employer);
    return this.database.transaction(async (tx) => {
      const recorded = await store.setEmployerAccountIdIfUnset(tx.db, employer.id, accountId.toString());
      if (!recorded) {
        const winner = await store.findEmployer(tx.db, employer.id);
        return BigInt(winner!.employerAccountId!);
      }
      await recordAudit(tx.db, {
        actorUserId: null,
        actorKind: 'system',
        action: 'treasury.account_opened',
        employerId: employer.id,
        targetType: 'employer',
        targetId: employer.id,
        details: { account_id: accountId.toString() },
      });
      return accountId;
    });
  }

  /** Every active employee of the employer, oldest first. */
  activeEmployees(employerId: string): Promise<store.EmployeeRow[]> {
    return store.allActiveEmployees(this.database.db, employerId);
  }

  countActiveEmployees(employerId: string): Promise<number> {
    return store.countActiveEmployees(this.database.db, employerId);
  }

  /** This employer's employees among `ids`; ids of other employers' employees are simply absent. */
  employeesByIds(employerId: string, ids: string[], db: Db = this.database.db) {
    return store.findEmployeesByIds(db, employerId, ids);
  }

  /** This employer's employees paid to any of these EVM wallets. */
  employeesByWallets(employerId: string, wallets: string[], db: Db = this.database.db) {
    return store.findEmployeesByWallets(db, employerId, wallets);
  }

  /** Active employees paid to `wallet` that the scope may see (callers that authorise the request themselves). */
  activeEmployeesPaidTo(wallet: string, scope: { employerId: string | null; employeeIds: string[] }) {
    return store.employeesByWallet(this.database.db, wallet, scope);
  }

  /** The employee, whoever asks (callers that authorise the request themselves). */
  findEmployee(employeeId: string) {
    return store.findEmployee(this.database.db, employeeId);
  }
}

const employeeRemoved = () => new AppError('EMPLOYEE_REMOVED', 'This employee was removed and can no longer be edited.');

function employeeValues(employerId: string, input: NewEmployeeInput, annualSalary: bigint): store.NewEmployee {
  return {
    employerId,
    email: input.email,
    fullName: input.fullName,
    walletAddress: input.walletAddress ?? null,
    solanaWalletAddress: input.solanaWalletAddress ?? null,
    annualSalary,
    department: input.department ?? null,
    costCentre: input.costCentre ?? null,
  };
}

/** A mapped CSV row as create input: values trimmed, blank cells dropped (absent). */
function csvCells(raw: Record<string, unknown>): Record<string, unknown> {
  const cells: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'string') {
      if (value.trim() !== '') cells[key] = value.trim();
    } else if (value !== null && value !== undefined) {
      cells[key] = value; // refused by the schema, naming the field
    }
  }
  return cells;
}

/** The invite: plain text (the outbox sender adds nothing else); one per employee whatever the retries. */
function inviteEmail(employer: store.EmployerRow, employee: store.EmployeeRow, invite: InviteOptions): OutgoingEmail {
  // Stored names carry no control characters now; older rows are cleaned so a subject stays one line.
  const employerName = withoutControlCharacters(employer.name);
  return {
    toAddress: employee.email,
    subject: `${employerName} invited you to get paid`,
    bodyText:
      `Hello ${employee.fullName},\n\n` +
      `${employerName} added you to its payroll. Sign in at ${invite.portalUrl} with this email address ` +
      `(${employee.email}) to see your pay and set the wallet you are paid to.\n\n` +
      'If you did not expect this email, you can ignore it.\n',
    dedupeKey: `employee-invite:${employee.id}`,
  };
}

/** The columns a PATCH changes, with before/after values (API field names) for the audit log. */
class ChangeSet<Row extends object> {
  readonly set: Partial<Row> = {};
  private readonly before: Record<string, unknown> = {};
  private readonly after: Record<string, unknown> = {};

  constructor(private readonly row: Row) {}

  get empty(): boolean {
    return Object.keys(this.set).length === 0;
  }

  change<K extends keyof Row>(field: string, column: K, value: Row[K], show: (value: Row[K]) => unknown = shown): void {
    if (!(value instanceof Date) && value === this.row[column]) return;
    this.set[column] = value;
    this.before[field] = show(this.row[column]);
    this.after[field] = show(value);
  }

  /** EVM addresses compare without case: a re-cased address is the same wallet. */
  changeWallet<K extends keyof Row>(field: string, column: K, value: Row[K]): void {
    const current = this.row[column];
    if (typeof value === 'string' && typeof current === 'string' && value.toLowerCase() === current.toLowerCase()) return;
    this.change(field, column, value);
  }

  details(): { before: Record<string, unknown>; after: Record<string, unknown> } {
    return { before: this.before, after: this.after };
  }
}

function shown(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  return value;
}

const shownUsd = (value: bigint) => formatUsd(value);
const shownPolicy = (value: bigint | null) => (value === null ? null : Number(value));
