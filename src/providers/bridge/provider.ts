/**
 * The fiat-bridge provider port (ARCHITECTURE.md, "providers/"): KYC'd customers, their bank
 * accounts, USDC-to-fiat off-ramp transfers and cards. Local mode runs the database-backed
 * sandbox (`sandbox.ts`), live mode Bridge's REST API (`http.ts`). Amounts are base units.
 */

export type DestinationType = 'ach' | 'sepa' | 'spei' | 'pix';
export const DESTINATION_TYPES: readonly DestinationType[] = ['ach', 'sepa', 'spei', 'pix'];

export type KycStatus = 'not_started' | 'incomplete' | 'under_review' | 'approved' | 'rejected';

export type TransferStatus =
  | 'awaiting_funds'
  | 'funds_received'
  | 'payment_submitted'
  | 'payment_processed'
  | 'canceled'
  | 'error'
  | 'returned';
/** A transfer in one of these states never changes again. */
export const FINAL_TRANSFER_STATUSES: readonly TransferStatus[] = ['payment_processed', 'canceled', 'error', 'returned'];

export type CardStatus = 'pending' | 'active' | 'frozen' | 'canceled' | 'failed';

export interface BridgeCustomer {
  customerId: string;
  kycStatus: KycStatus;
  rejectionReasons: string[];
}

export interface BridgeTransfer {
  transferId: string;
  status: TransferStatus;
  amount: bigint;
  destinationType: DestinationType;
  /** Where `amount` of USDC must arrive on Tempo for the transfer to proceed. */
  depositAddress: string;
  failureReason: string | null;
  createdAt: Date;
}

export interface BridgeCard {
  cardId: string;
  status: CardStatus;
  last4: string | null;
}

export type BridgeErrorKind = 'not_found' | 'invalid' | 'kyc_required' | 'unavailable';

/**
 * What every adapter throws. `invalid` is the caller's input (a 4xx for the end user);
 * `unavailable` is the provider (network, timeout, 5xx, our own credentials): retry later.
 */
export class BridgeError extends Error {
  constructor(
    readonly kind: BridgeErrorKind,
    message: string,
    readonly providerStatus?: number,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

export interface BridgeProvider {
  readonly name: 'sandbox' | 'bridge';
  createCustomer(input: { email: string; fullName: string; idempotencyKey: string }): Promise<BridgeCustomer>;
  customer(customerId: string): Promise<BridgeCustomer>;
  /** A fresh hosted KYC link for the customer. */
  kycLink(customerId: string): Promise<{ url: string; expiresAt: Date | null }>;
  createExternalAccount(
    customerId: string,
    input: { destinationType: DestinationType; accountOwnerName: string; details: Record<string, string>; idempotencyKey: string },
  ): Promise<{ accountId: string; last4: string }>;
  /** Off-ramp: the provider returns a deposit address on the Tempo chain where `amount` of USDC must arrive from `sourceAddress`. */
  createTransfer(input: {
    customerId: string;
    externalAccountId: string;
    destinationType: DestinationType;
    amount: bigint;
    sourceAddress: string;
    idempotencyKey: string;
  }): Promise<BridgeTransfer>;
  transfer(transferId: string): Promise<BridgeTransfer>;
  issueCard(customerId: string, input: { idempotencyKey: string; walletAddress: string | null }): Promise<BridgeCard>;
  card(customerId: string, cardId: string): Promise<BridgeCard>;
}
