import { randomBytes, randomInt } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { getAddress, isAddress, keccak256, toHex } from 'viem';
import type { Db } from '../../db/client.js';
import { bridgeSandboxObjects } from './tables.js';
import {
  BridgeError,
  DESTINATION_TYPES,
  type BridgeCard,
  type BridgeCustomer,
  type BridgeProvider,
  type BridgeTransfer,
  type CardStatus,
  type DestinationType,
  type KycStatus,
  type TransferStatus,
} from './provider.js';
import { validateExternalAccount } from './validation.js';

/**
 * Local mode's fiat bridge: behaves like Bridge for the paths the product meets, kept in
 * `bridge_sandbox_objects` so states survive restarts. States move with time, computed when an
 * object is read from its stored timestamps (no timers), and are written back with a
 * compare-and-set on the stored status, so concurrent readers agree on one history.
 *
 * - Customer: `not_started`; the first KYC link makes it `incomplete`; stepSeconds later
 *   `under_review`; 2 * stepSeconds after the link `approved` (`rejected` when the email contains
 *   `+reject`).
 * - Transfer: `awaiting_funds` until its deposit address holds the amount (`tokenBalance`), then
 *   `funds_received`, `payment_submitted` stepSeconds later, `payment_processed` after
 *   2 * stepSeconds; `canceled` when no funds arrived within 24 hours.
 * - Card: needs an approved customer; `pending`, `active` stepSeconds later.
 */

export interface SandboxBridgeOptions {
  /** Seconds between two automatic state changes; default 5. */
  stepSeconds?: number;
  /** The time its steps and windows run on: the service's clock in local mode (the dev clock moves it); the real time without it. */
  now?: () => Date;
  /** USDC balance (base units) of an address on the local Tempo chain. */
  tokenBalance: (address: string) => Promise<bigint>;
}

type Kind = (typeof bridgeSandboxObjects.$inferSelect)['kind'];
type Row = typeof bridgeSandboxObjects.$inferSelect;

interface CustomerData {
  email: string;
  fullName: string;
  status: KycStatus;
  /** When the first KYC link was issued: the review clock starts there. */
  linkIssuedAt: string | null;
  rejectionReasons: string[];
}

/** Only what a bank statement shows: the sandbox keeps no full account numbers. */
interface AccountData {
  customerId: string;
  destinationType: DestinationType;
  accountOwnerName: string;
  last4: string;
}

interface TransferData {
  customerId: string;
  externalAccountId: string;
  destinationType: DestinationType;
  /** Base units as a decimal string (JSON has no bigint). */
  amount: string;
  sourceAddress: string;
  depositAddress: string;
  status: TransferStatus;
  fundedAt: string | null;
  failureReason: string | null;
}

interface CardData {
  customerId: string;
  walletAddress: string | null;
  status: CardStatus;
  last4: string;
}

const FUNDING_WINDOW_SECONDS = 24 * 60 * 60;
const KYC_LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;

export class SandboxBridge implements BridgeProvider {
  readonly name = 'sandbox' as const;
  private readonly stepSeconds: number;
  private readonly now: () => Date;
  private readonly tokenBalance: (address: string) => Promise<bigint>;

  constructor(
    private readonly db: Db,
    options: SandboxBridgeOptions,
  ) {
    this.stepSeconds = options.stepSeconds ?? 5;
    this.now = options.now ?? (() => new Date());
    this.tokenBalance = options.tokenBalance;
  }

  async createCustomer(input: { email: string; fullName: string; idempotencyKey: string }): Promise<BridgeCustomer> {
    if (!/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new BridgeError('invalid', 'email is not an email address');
    if (input.fullName.trim().length === 0) throw new BridgeError('invalid', 'fullName is required');
    const data: CustomerData = { email: input.email, fullName: input.fullName.trim(), status: 'not_started', linkIssuedAt: null, rejectionReasons: [] };
    const row = await this.create('customer', 'cust_sbx_', input.idempotencyKey, () => data);
    return toCustomer(await this.refreshCustomer(row));
  }

  async customer(customerId: string): Promise<BridgeCustomer> {
    return toCustomer(await this.customerRow(customerId));
  }

  async kycLink(customerId: string): Promise<{ url: string; expiresAt: Date | null }> {
    const row = await this.customerRow(customerId);
    const data = row.data as CustomerData;
    const now = this.now();
    if (data.status === 'not_started') await this.advance<CustomerData>(row, { ...data, status: 'incomplete', linkIssuedAt: now.toISOString() });
    const token = randomBytes(16).toString('hex');
    return {
      url: `https://sandbox.bridge.local/kyc/${encodeURIComponent(customerId)}?token=${token}`,
      expiresAt: new Date(now.getTime() + KYC_LINK_LIFETIME_MS),
    };
  }

  async createExternalAccount(
    customerId: string,
    input: { destinationType: DestinationType; accountOwnerName: string; details: Record<string, string>; idempotencyKey: string },
  ): Promise<{ accountId: string; last4: string }> {
    const { last4 } = validateExternalAccount(input);
    await this.customerRow(customerId);
    const data: AccountData = { customerId, destinationType: input.destinationType, accountOwnerName: input.accountOwnerName.trim(), last4 };
    const row = await this.create('external_account', 'ea_sbx_', input.idempotencyKey, () => data);
    return { accountId: row.id, last4: (row.data as AccountData).last4 };
  }

  async createTransfer(input: {
    customerId: string;
    externalAccountId: string;
    destinationType: DestinationType;
    amount: bigint;
    sourceAddress: string;
    idempotencyKey: string;
  }): Promise<BridgeTransfer> {
    if (input.amount <= 0n) throw new BridgeError('invalid', 'amount must be positive');
    if (!isAddress(input.sourceAddress, { strict: false })) throw new BridgeError('invalid', 'sourceAddress is not an EVM address');
    if (!DESTINATION_TYPES.includes(input.destinationType)) throw new BridgeError('invalid', `destinationType must be one of ${DESTINATION_TYPES.join(', ')}`);
    await this.customerRow(input.customerId);
    const account = (await this.find('external_account', input.externalAccountId)).data as AccountData;
    if (account.customerId !== input.customerId) {
      throw new BridgeError('invalid', `externalAccountId ${input.externalAccountId} does not belong to customer ${input.customerId}`);
    }
    if (account.destinationType !== input.destinationType) {
      throw new BridgeError('invalid', `destinationType ${input.destinationType} does not match the external account (${account.destinationType})`);
    }
    const row = await this.create('transfer', 'tr_sbx_', input.idempotencyKey, (id): TransferData => ({
      customerId: input.customerId,
      externalAccountId: input.externalAccountId,
      destinationType: input.destinationType,
      amount: input.amount.toString(),
      sourceAddress: getAddress(input.sourceAddress),
      depositAddress: depositAddressFor(id),
      status: 'awaiting_funds',
      fundedAt: null,
      failureReason: null,
    }));
    return toTransfer(await this.refreshTransfer(row));
  }

  async transfer(transferId: string): Promise<BridgeTransfer> {
    return toTransfer(await this.refreshTransfer(await this.find('transfer', transferId)));
  }

  async issueCard(customerId: string, input: { idempotencyKey: string; walletAddress: string | null }): Promise<BridgeCard> {
    if (input.walletAddress !== null && !isAddress(input.walletAddress, { strict: false })) {
      throw new BridgeError('invalid', 'walletAddress is not an EVM address');
    }
    const customer = (await this.customerRow(customerId)).data as CustomerData;
    if (customer.status !== 'approved') {
      throw new BridgeError('kyc_required', `customer ${customerId} has not passed KYC (status ${customer.status})`);
    }
    const data: CardData = {
      customerId,
      walletAddress: input.walletAddress && getAddress(input.walletAddress),
      status: 'pending',
      last4: String(randomInt(0, 10_000)).padStart(4, '0'),
    };
    const row = await this.create('card', 'card_sbx_', input.idempotencyKey, () => data);
    return toCard(await this.refreshCard(row));
  }

  async card(customerId: string, cardId: string): Promise<BridgeCard> {
    const row = await this.find('card', cardId);
    // Another customer's card answers exactly like a missing one.
    if ((row.data as CardData).customerId !== customerId) throw notFound('card', cardId);
    return toCard(await this.refreshCard(row));
  }

  private async customerRow(customerId: string): Promise<Row> {
    return this.refreshCustomer(await this.find('customer', customerId));
  }

  private async refreshCustomer(row: Row): Promise<Row> {
    const data = row.data as CustomerData;
    if (!data.linkIssuedAt || (data.status !== 'incomplete' && data.status !== 'under_review')) return row;
    const elapsed = this.secondsSince(new Date(data.linkIssuedAt));
    if (elapsed >= 2 * this.stepSeconds) {
      const rejected = data.email.toLowerCase().includes('+reject');
      return this.advance<CustomerData>(
        row,
        rejected
          ? { ...data, status: 'rejected', rejectionReasons: ['Cannot validate ID: the sandbox rejects every email containing +reject'] }
          : { ...data, status: 'approved' },
      );
    }
    if (elapsed >= this.stepSeconds && data.status === 'incomplete') return this.advance<CustomerData>(row, { ...data, status: 'under_review' });
    return row;
  }

  private async refreshTransfer(row: Row): Promise<Row> {
    const data = row.data as TransferData;
    let next = data;
    if (data.status === 'awaiting_funds') {
      // Funds at the deposit address are always processed, even when seen after the window:
      // canceling then would strand them.
      if ((await this.balanceOf(data.depositAddress)) >= BigInt(data.amount)) {
        next = { ...data, status: 'funds_received', fundedAt: this.now().toISOString() };
      } else if (this.secondsSince(row.createdAt) > FUNDING_WINDOW_SECONDS) {
        next = { ...data, status: 'canceled', failureReason: 'funds not received within 24 hours' };
      }
    }
    if (next.fundedAt && (next.status === 'funds_received' || next.status === 'payment_submitted')) {
      const elapsed = this.secondsSince(new Date(next.fundedAt));
      if (elapsed >= 2 * this.stepSeconds) next = { ...next, status: 'payment_processed' };
      else if (elapsed >= this.stepSeconds) next = { ...next, status: 'payment_submitted' };
    }
    return next.status === data.status ? row : this.advance(row, next);
  }

  private async refreshCard(row: Row): Promise<Row> {
    const data = row.data as CardData;
    if (data.status !== 'pending' || this.secondsSince(row.createdAt) < this.stepSeconds) return row;
    return this.advance<CardData>(row, { ...data, status: 'active' });
  }

  /** Create-or-return by idempotency key: a retried create never makes a second object. */
  private async create(kind: Kind, prefix: string, idempotencyKey: string, data: (id: string) => object): Promise<Row> {
    if (idempotencyKey.length === 0) throw new BridgeError('invalid', 'idempotencyKey is required');
    const id = `${prefix}${randomBytes(12).toString('hex')}`;
    const now = this.now();
    await this.db
      .insert(bridgeSandboxObjects)
      .values({ id, kind, idempotencyKey, data: data(id), createdAt: now, updatedAt: now })
      .onConflictDoNothing({ target: [bridgeSandboxObjects.kind, bridgeSandboxObjects.idempotencyKey] });
    const [row] = await this.db
      .select()
      .from(bridgeSandboxObjects)
      .where(and(eq(bridgeSandboxObjects.kind, kind), eq(bridgeSandboxObjects.idempotencyKey, idempotencyKey)));
    if (!row) throw new Error(`bridge sandbox: the ${kind} for idempotency key ${idempotencyKey} vanished`);
    return row;
  }

  private async find(kind: Kind, id: string): Promise<Row> {
    const [row] = await this.db
      .select()
      .from(bridgeSandboxObjects)
      .where(and(eq(bridgeSandboxObjects.id, id), eq(bridgeSandboxObjects.kind, kind)));
    if (!row) throw notFound(kind, id);
    return row;
  }

  /** Compare-and-set on the stored status; a reader that lost the race returns the winner's state. */
  private async advance<T extends { status: string }>(row: Row, next: T): Promise<Row> {
    const from = (row.data as { status: string }).status;
    const [updated] = await this.db
      .update(bridgeSandboxObjects)
      .set({ data: next, updatedAt: this.now() })
      .where(and(eq(bridgeSandboxObjects.id, row.id), sql`${bridgeSandboxObjects.data}->>'status' = ${from}`))
      .returning();
    return updated ?? this.find(row.kind, row.id);
  }

  private async balanceOf(address: string): Promise<bigint> {
    try {
      return await this.tokenBalance(address);
    } catch (error) {
      throw new BridgeError('unavailable', `cannot read the deposit address balance: ${(error as Error).message}`);
    }
  }

  private secondsSince(at: Date): number {
    return (this.now().getTime() - at.getTime()) / 1000;
  }
}

/** A deposit address unique to the transfer: the last 20 bytes of keccak256(id), checksummed. */
export function depositAddressFor(transferId: string): string {
  return getAddress(`0x${keccak256(toHex(transferId)).slice(-40)}`);
}

function notFound(kind: Kind, id: string): BridgeError {
  return new BridgeError('not_found', `${kind.replace('_', ' ')} ${id} not found`);
}

function toCustomer(row: Row): BridgeCustomer {
  const data = row.data as CustomerData;
  return { customerId: row.id, kycStatus: data.status, rejectionReasons: data.rejectionReasons };
}

function toTransfer(row: Row): BridgeTransfer {
  const data = row.data as TransferData;
  return {
    transferId: row.id,
    status: data.status,
    amount: BigInt(data.amount),
    destinationType: data.destinationType,
    depositAddress: data.depositAddress,
    failureReason: data.failureReason,
    createdAt: row.createdAt,
  };
}

function toCard(row: Row): BridgeCard {
  const data = row.data as CardData;
  return { cardId: row.id, status: data.status, last4: data.last4 };
}
