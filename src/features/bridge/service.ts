import { createHash } from 'node:crypto';
import type { Address } from 'viem';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database } from '../../db/client.js';
import type { Caller, FeePayment } from '../../http/context.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import type { Config } from '../../config.js';
import {
  BridgeError,
  BridgeHttpProvider,
  FINAL_TRANSFER_STATUSES,
  SandboxBridge,
  type BridgeProvider,
  type DestinationType,
  type TransferStatus,
} from '../../providers/bridge/index.js';
import { employeesAwaitingKyc, setBridgeCustomerIfUnset, setKycStatus, type EmployeeRow, type EmployersService } from '../employers/index.js';
import { notify } from '../notifications/index.js';
import * as store from './store.js';

/** Who may act on an employee's bridge records (spec 4.8). */
type Audience = 'employee' | 'owner' | 'employee_or_owner';

const kycNotApproved = () =>
  new AppError('KYC_NOT_APPROVED', "The employee's identity check (KYC) is not approved yet: the employer starts it with POST /api/employees/{id}/kyc.");

/** Maps the provider's refusals onto our answers: its validation is the caller's 400, an outage our 503 (never charged). */
function providerError(error: unknown, field: string): never {
  if (!(error instanceof BridgeError)) throw error;
  if (error.kind === 'invalid') throw badRequest(field, error.message);
  if (error.kind === 'kyc_required') throw kycNotApproved();
  if (error.kind === 'not_found') throw new AppError('BRIDGE_INCONSISTENT', `The fiat bridge no longer knows this record: ${error.message}`);
  throw new AppError('BRIDGE_UNAVAILABLE', 'The fiat bridge is not answering; nothing was created. Try again shortly.');
}

/** What the bridge service is built from. */
export interface BridgeServiceOptions {
  database: Database;
  employers: EmployersService;
  tempo: TempoChain;
  /** Null in live mode without provider keys: every bridge route answers 503. */
  provider: BridgeProvider | null;
}

/**
 * The employee's fiat side through the bridge provider port (docs/decisions.md, "Fiat bridge"):
 * KYC, bank accounts, cards and off-ramps. Money leaves only from the employee's own wallet: an
 * off-ramp reserves part of the wallet balance and gives the address the provider pays out from.
 */
export class BridgeService {
  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly tempo: TempoChain;
  private readonly bridge: BridgeProvider | null;

  constructor({ database, employers, tempo, provider }: BridgeServiceOptions) {
    this.database = database;
    this.employers = employers;
    this.tempo = tempo;
    this.bridge = provider;
  }

  /** The employee when the caller is in the audience; anyone else gets 404, like a missing record. */
  async employeeFor(caller: Caller, employeeId: string, audience: Audience): Promise<EmployeeRow> {
    const employee = await this.employers.findEmployee(employeeId);
    const isEmployee = caller.employeeIds.includes(employeeId);
    const isOwner = Boolean(employee) && caller.ownedEmployerId === employee?.employerId;
    const allowed = audience === 'employee' ? isEmployee : audience === 'owner' ? isOwner : isEmployee || isOwner;
    if (!employee || !allowed || employee.status !== 'active') throw notFound('Employee');
    return employee;
  }

  private provider(): BridgeProvider {
    if (!this.bridge) throw new AppError('BRIDGE_NOT_CONFIGURED', 'The fiat bridge is not configured on this server (BRIDGE_API_KEY).');
    return this.bridge;
  }

  /** The service's time (database.clock): the `as_of` of a balance read. */
  now(): Date {
    return this.database.clock.now();
  }

  /** The wallet's live token balance on the Tempo chain. */
  async walletBalance(employee: EmployeeRow): Promise<bigint | null> {
    return employee.walletAddress ? this.tempo.balanceOf(employee.walletAddress as Address) : null;
  }

  // ---- KYC ------------------------------------------------------------------------------------

  /** Creates the provider customer once (compare-and-set on the employee) and returns a fresh KYC link. */
  async startKyc(employee: EmployeeRow) {
    const bridge = this.provider();
    let customerId = employee.bridgeCustomerId;
    if (!customerId) {
      // The key makes the provider return the same customer to a concurrent or retried request.
      const created = await bridge
        .createCustomer({ email: employee.email, fullName: employee.fullName, idempotencyKey: `customer:${employee.id}` })
        .catch((error: unknown) => providerError(error, 'employee'));
      await setBridgeCustomerIfUnset(this.database.db, employee.id, created.customerId);
      customerId = (await this.employers.findEmployee(employee.id))!.bridgeCustomerId!;
    }
    const link = await bridge.kycLink(customerId).catch((error: unknown) => providerError(error, 'employee'));
    const { kycStatus } = await this.syncKyc({ ...employee, bridgeCustomerId: customerId });
    return { customerId, kycStatus, url: link.url, expiresAt: link.expiresAt };
  }

  /** Reads the customer's KYC state from the provider; a change to a final state rings the employer's bell once. */
  async syncKyc(employee: Pick<EmployeeRow, 'id' | 'employerId' | 'fullName' | 'bridgeCustomerId'>) {
    const customer = await this.provider().customer(employee.bridgeCustomerId!);
    await this.database.transaction(async (tx) => {
      if (!(await setKycStatus(tx.db, employee.id, customer.kycStatus))) return;
      if (customer.kycStatus !== 'approved' && customer.kycStatus !== 'rejected') return;
      const approved = customer.kycStatus === 'approved';
      await notify(tx.db, {
        employerId: employee.employerId,
        type: approved ? 'kyc_approved' : 'kyc_rejected',
        severity: approved ? 'success' : 'warning',
        title: approved ? `${employee.fullName} passed the identity check` : `${employee.fullName} did not pass the identity check`,
        body: approved ? 'They can now register bank accounts, cash out and get a card.' : customer.rejectionReasons.join('; ') || null,
        link: `/dashboard/team/${employee.id}`,
        data: { employee_id: employee.id, kyc_status: customer.kycStatus },
        dedupeKey: `kyc:${employee.id}:${customer.kycStatus}`,
      });
    });
    return customer;
  }

  private async requireApprovedCustomer(employee: EmployeeRow): Promise<string> {
    if (!employee.bridgeCustomerId) throw kycNotApproved();
    if (employee.kycStatus !== 'approved' && (await this.syncKyc(employee)).kycStatus !== 'approved') throw kycNotApproved();
    return employee.bridgeCustomerId;
  }

  // ---- bank accounts --------------------------------------------------------------------------

  async addBankAccount(employee: EmployeeRow, input: { destinationType: DestinationType; accountOwnerName: string; details: Record<string, string>; label: string | null }) {
    const customerId = await this.requireApprovedCustomer(employee);
    // The same account sent twice is one account: the key is a digest of what identifies it.
    const key = createHash('sha256').update(JSON.stringify([employee.id, input.destinationType, input.details])).digest('hex');
    const account = await this.provider()
      .createExternalAccount(customerId, { destinationType: input.destinationType, accountOwnerName: input.accountOwnerName, details: input.details, idempotencyKey: key })
      .catch((error: unknown) => providerError(error, 'details'));
    return store.insertBankAccount(this.database.db, {
      employeeId: employee.id,
      bridgeAccountId: account.accountId,
      destinationType: input.destinationType,
      label: input.label,
      last4: account.last4,
    });
  }

  listBankAccounts(employee: EmployeeRow) {
    return store.listBankAccounts(this.database.db, employee.id);
  }

  // ---- cards ----------------------------------------------------------------------------------

  /** The live card, its status refreshed from the provider; null when none was issued. */
  async card(employee: EmployeeRow) {
    const card = await store.liveCard(this.database.db, employee.id);
    if (!card?.bridgeCardId || !employee.bridgeCustomerId || card.status === 'active') return card;
    const fresh = await this.provider()
      .card(employee.bridgeCustomerId, card.bridgeCardId)
      .catch(() => null); // a stale status is better than no answer
    return fresh && fresh.status !== card.status ? store.updateCard(this.database.db, card.id, { status: fresh.status, last4: fresh.last4 }) : card;
  }

  /** Issues the employee's card, or returns the live one (one per employee). */
  async issueCard(employee: EmployeeRow): Promise<{ card: store.CardRow; created: boolean }> {
    const customerId = await this.requireApprovedCustomer(employee);
    const request = await store.insertCardRequest(this.database.db, employee.id);
    if (!request) return { card: (await this.card(employee))!, created: false };
    try {
      const issued = await this.provider().issueCard(customerId, { idempotencyKey: `card:${request.id}`, walletAddress: employee.walletAddress });
      return { card: await store.updateCard(this.database.db, request.id, { bridgeCardId: issued.cardId, status: issued.status, last4: issued.last4 }), created: true };
    } catch (error) {
      await store.updateCard(this.database.db, request.id, { status: 'failed' });
      return providerError(error, 'employee');
    }
  }

  // ---- off-ramps ------------------------------------------------------------------------------

  /**
   * Starts an off-ramp from the employee's wallet to a registered bank account. The amount is
   * reserved against the wallet balance under a lock on the employee, so parallel requests
   * cannot promise more than the wallet holds; a refused creation releases it. A paid off-ramp
   * keeps the fee that bought it: a redeemed fee (its first answer was lost) gets that off-ramp
   * again, never a second one.
   */
  async offramp(employee: EmployeeRow, input: { amount: bigint; destinationType: DestinationType; bankAccountId: string }, fee: FeePayment | null = null) {
    const earlier = fee?.redeemed ? await store.offrampForFee(this.database.db, fee.id) : null;
    if (earlier?.bridgeTransferId) return earlier;
    const account = await store.findBankAccount(this.database.db, employee.id, input.bankAccountId);
    if (!account) throw badRequest('bankAccountId', 'is not a bank account registered for this employee');
    if (account.destinationType !== input.destinationType) {
      throw badRequest('destinationType', `does not match the bank account, which takes ${account.destinationType}`);
    }
    const customerId = await this.requireApprovedCustomer(employee);
    // Reserved but never created at the provider (a crash, or its refusal): asked again under the
    // same idempotency key, so the provider still makes at most one transfer of it.
    if (earlier) return this.createTransfer(earlier, customerId, account.bridgeAccountId);
    if (!employee.walletAddress) throw new AppError('NO_WALLET', 'This employee has no wallet to cash out from.');
    const balance = await this.tempo.balanceOf(employee.walletAddress as Address);
    const reserved = await this.database.transaction((tx) =>
      store.reserveOfframp(
        tx.db,
        {
          employeeId: employee.id,
          employerId: employee.employerId,
          bankAccountId: account.id,
          amount: input.amount,
          destinationType: input.destinationType,
          sourceAddress: employee.walletAddress!,
          feePaymentId: fee?.id ?? null,
        },
        balance,
      ),
    );
    if (!reserved) {
      throw new AppError('INSUFFICIENT_BALANCE', 'The amount is more than the wallet holds beyond off-ramps already waiting for funds.', {
        field: 'amount',
      });
    }
    return this.createTransfer(reserved, customerId, account.bridgeAccountId);
  }

  /** Creates a reserved off-ramp at the provider (its row id is the idempotency key), or records why not. */
  private async createTransfer(reserved: store.OfframpRow, customerId: string, externalAccountId: string) {
    try {
      const transfer = await this.provider().createTransfer({
        customerId,
        externalAccountId,
        destinationType: reserved.destinationType,
        amount: reserved.amount,
        sourceAddress: reserved.sourceAddress!,
        idempotencyKey: reserved.id,
      });
      return store.updateOfframp(this.database.db, reserved.id, { status: transfer.status, bridgeTransferId: transfer.transferId, depositAddress: transfer.depositAddress });
    } catch (error) {
      await store.updateOfframp(this.database.db, reserved.id, { status: 'error', failureReason: error instanceof Error ? error.message : String(error) });
      return providerError(error, 'amount');
    }
  }

  /** The employee's off-ramps, newest first, open ones refreshed from the provider. */
  async offramps(employee: EmployeeRow, limit: number) {
    const rows = await store.employeeOfframps(this.database.db, employee.id, limit);
    return Promise.all(rows.map((row) => (isOpen(row) ? this.refreshOfframp(row).catch(() => row) : row)));
  }

  private async refreshOfframp(row: store.OfframpRow): Promise<store.OfframpRow> {
    const transfer = await this.provider().transfer(row.bridgeTransferId!);
    if (transfer.status === row.status) return row;
    return store.updateOfframp(this.database.db, row.id, { status: transfer.status, failureReason: transfer.failureReason });
  }

  /** The sync job's round: KYC states and open off-ramps, moved on from the provider. */
  async syncOpen(limit = 100): Promise<{ kyc: number; offramps: number }> {
    if (!this.bridge) return { kyc: 0, offramps: 0 };
    const waiting = await employeesAwaitingKyc(this.database.db, limit);
    for (const employee of waiting) await this.syncKyc(employee);
    const open = await store.openOfframps(this.database.db, limit);
    for (const row of open) await this.refreshOfframp(row);
    return { kyc: waiting.length, offramps: open.length };
  }
}

const isOpen = (row: store.OfframpRow) => row.bridgeTransferId !== null && !FINAL_TRANSFER_STATUSES.includes(row.status as TransferStatus);

/** The configured bridge: the sandbox in local mode, the provider's API with a key in live mode, else none. */
export function bridgeProviderFor(config: Pick<Config, 'mode' | 'bridge'>, database: Database, tempo: TempoChain): BridgeProvider | null {
  if (config.mode === 'local') {
    return new SandboxBridge(database.db, {
      stepSeconds: config.bridge.sandboxStepSeconds,
      now: () => database.clock.now(),
      tokenBalance: (address) => tempo.balanceOf(address as Address),
    });
  }
  return config.bridge.apiKey ? new BridgeHttpProvider({ apiKey: config.bridge.apiKey, ...(config.bridge.baseUrl ? { baseUrl: config.bridge.baseUrl } : {}) }) : null;
}
