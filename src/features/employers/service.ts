import type { Database, Db } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import { parseUsd } from '../../money.js';
import { recordAudit } from '../audit/store.js';
import type { UsersService } from '../users/service.js';
import { newAgentKey } from './paid-caller.js';
import * as store from './store.js';

export interface NewEmployeeInput {
  email: string;
  fullName: string;
  walletAddress?: string | undefined;
  solanaWalletAddress?: string | undefined;
  annualSalaryUsd?: string | undefined;
  department?: string | undefined;
  costCentre?: string | undefined;
}

export class EmployersService {
  constructor(
    private readonly database: Database,
    private readonly users: UsersService,
  ) {}

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
    const annualSalary = input.annualSalaryUsd === undefined ? 0n : parseUsd(input.annualSalaryUsd);
    if (annualSalary === null) throw new Error('annual salary passed validation but does not parse');
    return this.database.transaction(async (tx) => {
      await this.requireOwned(tx.db, caller, employerId);
      const userId = await this.users.findVerifiedUserIdByEmail(tx.db, input.email);
      const inserted = await store.insertEmployeeIfAbsent(tx.db, {
        employerId,
        userId,
        email: input.email,
        fullName: input.fullName,
        walletAddress: input.walletAddress ?? null,
        solanaWalletAddress: input.solanaWalletAddress ?? null,
        annualSalary,
        department: input.department ?? null,
        costCentre: input.costCentre ?? null,
      });
      if (inserted) {
        await recordAudit(tx.db, {
          actorUserId: caller.userId,
          actorKind: 'user',
          action: 'employee.created',
          employerId,
          targetType: 'employee',
          targetId: inserted.id,
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

  /** The employer, whoever asks (callers that already authorised the request). */
  findEmployer(employerId: string) {
    return store.findEmployer(this.database.db, employerId);
  }

  /**
   * The employer's on-chain treasury account id, opening the account on first use. The employer's
   * row stays locked while `open` runs, so concurrent first uses open exactly one account.
   */
  async ensureTreasuryAccount(employerId: string, open: (employer: store.EmployerRow) => Promise<bigint>): Promise<bigint> {
    const known = await store.findEmployer(this.database.db, employerId);
    if (!known) throw notFound('Employer');
    if (known.employerAccountId) return BigInt(known.employerAccountId);
    return this.database.transaction(async (tx) => {
      const employer = await store.lockEmployer(tx.db, employerId);
      if (!employer) throw notFound('Employer');
      if (employer.employerAccountId) return BigInt(employer.employerAccountId);
      const accountId = await open(employer);
      await store.setEmployerAccountId(tx.db, employerId, accountId.toString());
      await recordAudit(tx.db, {
        actorUserId: null,
        actorKind: 'system',
        action: 'treasury.account_opened',
        employerId,
        targetType: 'employer',
        targetId: employerId,
        details: { account_id: accountId.toString() },
      });
      return accountId;
    });
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

  /** The employee, whoever asks (callers that authorise the request themselves). */
  findEmployee(employeeId: string) {
    return store.findEmployee(this.database.db, employeeId);
  }
}
