import { z } from 'zod';
import { formatUsd, parseUsd } from '../../money.js';
import {
  BridgeError,
  type BridgeCard,
  type BridgeCustomer,
  type BridgeProvider,
  type BridgeTransfer,
  type CardStatus,
  type DestinationType,
  type KycStatus,
  type TransferStatus,
} from './provider.js';
import { SEPA_COUNTRIES } from './bank-details.js';
import { validateExternalAccount } from './validation.js';

export const BRIDGE_API_BASE_URL = 'https://api.bridge.xyz/v0';

export interface BridgeHttpOptions {
  apiKey: string;
  /** Default https://api.bridge.xyz/v0 (Bridge's sandbox: https://api.sandbox.bridge.xyz/v0). */
  baseUrl?: string;
  /** For tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Covers the whole exchange, body included; default 10 s. */
  timeoutMs?: number;
}

/** Bridge's payout rail and fiat currency per destination type. */
const DESTINATIONS: Record<DestinationType, { rail: string; currency: string }> = {
  ach: { rail: 'ach', currency: 'usd' },
  sepa: { rail: 'sepa', currency: 'eur' },
  spei: { rail: 'spei', currency: 'mxn' },
  pix: { rail: 'pix', currency: 'brl' },
};

/**
 * Bridge's customer `status` and KYC-link `kyc_status` onto ours. The customer still has to act:
 * `incomplete` (also awaiting_ubo, awaiting_questionnaire). Bridge decides: `under_review` (also
 * manual_review, and paused or any status we do not know, so nothing unknown is ever treated as
 * approved or as final). `active` is Bridge's word for an approved customer; an offboarded
 * customer can no longer transact, so it counts as `rejected`.
 */
const KYC_STATUSES: Record<string, KycStatus> = {
  not_started: 'not_started',
  incomplete: 'incomplete',
  awaiting_ubo: 'incomplete',
  awaiting_questionnaire: 'incomplete',
  under_review: 'under_review',
  manual_review: 'under_review',
  approved: 'approved',
  active: 'approved',
  rejected: 'rejected',
  offboarded: 'rejected',
};

/**
 * Bridge's transfer `state` onto ours. `in_review` happens once Bridge holds the deposit, so it
 * is `funds_received`. The money did not reach the bank and is with Bridge or on its way back:
 * `returned` (undeliverable, returned, refund_in_flight, refunded). Someone must act: `error`
 * (error, refund_failed, missing_return_policy). A state we do not know is `funds_received`:
 * not final, so callers keep polling and never book it as paid or as failed.
 */
const TRANSFER_STATUSES: Record<string, TransferStatus> = {
  awaiting_funds: 'awaiting_funds',
  in_review: 'funds_received',
  funds_received: 'funds_received',
  payment_submitted: 'payment_submitted',
  payment_processed: 'payment_processed',
  canceled: 'canceled',
  undeliverable: 'returned',
  returned: 'returned',
  refund_in_flight: 'returned',
  refunded: 'returned',
  error: 'error',
  refund_failed: 'error',
  missing_return_policy: 'error',
};
const UNKNOWN_TRANSFER_STATUS: TransferStatus = 'funds_received';

/** Bridge's card account `status`; `inactive` is a closed card; an unknown one is not usable yet. */
const CARD_STATUSES: Record<string, CardStatus> = { pending: 'pending', active: 'active', frozen: 'frozen', inactive: 'canceled' };

/** Bridge's payout rails onto our destination types (same-day ACH is still ACH). */
const RAIL_DESTINATIONS: Record<string, DestinationType> = { ach: 'ach', ach_same_day: 'ach', sepa: 'sepa', spei: 'spei', pix: 'pix' };

const rejectionReasons = z
  .array(z.union([z.string(), z.object({ reason: z.string().nullish(), developer_reason: z.string().nullish() })]))
  .nullish();
const kycLinkBody = z.object({ customer_id: z.string().min(1), kyc_status: z.string(), rejection_reasons: rejectionReasons });
const customerBody = z.object({ id: z.string().min(1), status: z.string(), rejection_reasons: rejectionReasons });
const hostedLinkBody = z.object({ url: z.url() });
const externalAccountBody = z.object({ id: z.string().min(1), last_4: z.string().nullish(), account: z.object({ last_4: z.string().nullish() }).nullish() });
const transferBody = z.object({
  id: z.string().min(1),
  state: z.string(),
  amount: z.string(),
  destination: z.object({ payment_rail: z.string() }),
  source_deposit_instructions: z.object({ to_address: z.string().min(1) }),
  created_at: z.iso.datetime({ offset: true }),
});
const cardBody = z.object({ id: z.string().min(1), status: z.string(), card_details: z.object({ last_4: z.string().nullish() }).nullish() });

interface Answer {
  status: number;
  body: unknown;
}

/**
 * Bridge (bridge.xyz) over its REST API: `Api-Key` on every request, `Idempotency-Key` on every
 * POST, so a retried create returns Bridge's first object. Customers are created through KYC
 * links (Bridge's hosted onboarding). Off-ramps are transfers from USDC on Tempo to the
 * customer's external account; Bridge answers with the deposit address to pay.
 *
 * Besides the fields the validator requires, `details` may carry what Bridge needs for some
 * accounts: `bankName`; for ACH `checkingOrSavings` (default checking) and the owner's address
 * (`streetLine1`, `streetLine2`, `city`, `state`, `postalCode`, `country` as ISO alpha-3);
 * for SEPA `bic`; for PIX `documentNumber` (CPF or CNPJ).
 */
export class BridgeHttpProvider implements BridgeProvider {
  readonly name = 'bridge' as const;
  private readonly apiKey: string;
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;

  constructor(options: BridgeHttpOptions) {
    this.apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? BRIDGE_API_BASE_URL).replace(/\/+$/, '');
    this.fetch = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async createCustomer(input: { email: string; fullName: string; idempotencyKey: string }): Promise<BridgeCustomer> {
    const answer = await this.send('POST', '/kyc_links', { full_name: input.fullName, email: input.email, type: 'individual' }, input.idempotencyKey);
    // An email that already has a KYC link is Bridge handing back that customer, not a failure.
    const existing = answer.status === 400 ? duplicateKycLink(answer.body) : undefined;
    if (!ok(answer) && existing === undefined) throw errorFor(answer);
    const link = parse(kycLinkBody, existing ?? answer.body);
    return { customerId: link.customer_id, kycStatus: kycStatus(link.kyc_status), rejectionReasons: reasons(link.rejection_reasons) };
  }

  async customer(customerId: string): Promise<BridgeCustomer> {
    const customer = parse(customerBody, await this.call('GET', `/customers/${segment(customerId)}`));
    return { customerId: customer.id, kycStatus: kycStatus(customer.status), rejectionReasons: reasons(customer.rejection_reasons) };
  }

  async kycLink(customerId: string): Promise<{ url: string; expiresAt: Date | null }> {
    const link = parse(hostedLinkBody, await this.call('GET', `/customers/${segment(customerId)}/kyc_link`));
    // Bridge does not say how long a hosted link lives.
    return { url: link.url, expiresAt: null };
  }

  async createExternalAccount(
    customerId: string,
    input: { destinationType: DestinationType; accountOwnerName: string; details: Record<string, string>; idempotencyKey: string },
  ): Promise<{ accountId: string; last4: string }> {
    const { details, last4 } = validateExternalAccount(input);
    const body = externalAccountRequest(input.destinationType, input.accountOwnerName.trim(), details);
    const account = parse(externalAccountBody, await this.call('POST', `/customers/${segment(customerId)}/external_accounts`, body, input.idempotencyKey));
    return { accountId: account.id, last4: account.account?.last_4 ?? account.last_4 ?? last4 };
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
    const destination = DESTINATIONS[input.destinationType];
    if (!destination) throw new BridgeError('invalid', `destinationType must be one of ${Object.keys(DESTINATIONS).join(', ')}`);
    const body = {
      amount: formatUsd(input.amount),
      on_behalf_of: input.customerId,
      source: { payment_rail: 'tempo', currency: 'usdc', from_address: input.sourceAddress },
      destination: { payment_rail: destination.rail, currency: destination.currency, external_account_id: input.externalAccountId },
    };
    return toTransfer(parse(transferBody, await this.call('POST', '/transfers', body, input.idempotencyKey)));
  }

  async transfer(transferId: string): Promise<BridgeTransfer> {
    return toTransfer(parse(transferBody, await this.call('GET', `/transfers/${segment(transferId)}`)));
  }

  async issueCard(customerId: string, input: { idempotencyKey: string; walletAddress: string | null }): Promise<BridgeCard> {
    // Asked first so the caller gets kyc_required rather than whatever 4xx Bridge words it as.
    const customer = await this.customer(customerId);
    if (customer.kycStatus !== 'approved') {
      throw new BridgeError('kyc_required', `customer ${customerId} has not passed KYC (status ${customer.kycStatus})`);
    }
    const body = {
      currency: 'usdc',
      // The employee's wallet lives on Tempo; a card reading a wallet on another chain would see nothing.
      chain: 'tempo',
      ...(input.walletAddress ? { crypto_account: { type: 'standard', address: input.walletAddress } } : {}),
    };
    return toCard(parse(cardBody, await this.call('POST', `/customers/${segment(customerId)}/card_accounts`, body, input.idempotencyKey)));
  }

  async card(customerId: string, cardId: string): Promise<BridgeCard> {
    return toCard(parse(cardBody, await this.call('GET', `/customers/${segment(customerId)}/card_accounts/${segment(cardId)}`)));
  }

  /** The answer's body when it is a 2xx; a BridgeError otherwise. */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<unknown> {
    const answer = await this.send(method, path, body, idempotencyKey);
    if (!ok(answer)) throw errorFor(answer);
    return answer.body;
  }

  /** One exchange; only a network failure or a timeout throws (unavailable). */
  private async send(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<Answer> {
    const headers: Record<string, string> = { 'Api-Key': this.apiKey, Accept: 'application/json' };
    if (method === 'POST') {
      if (!idempotencyKey) throw new BridgeError('invalid', 'idempotencyKey is required');
      headers['Content-Type'] = 'application/json';
      headers['Idempotency-Key'] = idempotencyKey;
    }
    try {
      const response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
      const text = await response.text();
      return { status: response.status, body: parseJson(text) };
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') {
        throw new BridgeError('unavailable', `Bridge did not answer ${method} ${path} within ${this.timeoutMs} ms`);
      }
      throw new BridgeError('unavailable', `cannot reach Bridge (${method} ${path}): ${(error as Error).message}`);
    }
  }
}

/**
 * The body of a new external account. SEPA names the owner as an individual by first and last
 * name (Bridge requires both there); the other rails take the owner's full name as given.
 */
function externalAccountRequest(type: DestinationType, owner: string, details: Record<string, string>): Record<string, unknown> {
  const common: Record<string, unknown> = { account_owner_name: owner };
  if (details.bankName) common.bank_name = details.bankName;
  switch (type) {
    case 'ach': {
      const kind = details.checkingOrSavings ?? 'checking';
      if (kind !== 'checking' && kind !== 'savings') throw new BridgeError('invalid', 'details.checkingOrSavings must be checking or savings');
      const address = details.streetLine1
        ? {
            street_line_1: details.streetLine1,
            ...(details.streetLine2 ? { street_line_2: details.streetLine2 } : {}),
            city: details.city,
            ...(details.state ? { state: details.state } : {}),
            postal_code: details.postalCode,
            country: details.country,
          }
        : undefined;
      return {
        ...common,
        currency: 'usd',
        account_type: 'us',
        account: { account_number: details.accountNumber, routing_number: details.routingNumber, checking_or_savings: kind },
        ...(address ? { address } : {}),
      };
    }
    case 'sepa': {
      // The validator made sure the name has at least two words.
      const space = owner.lastIndexOf(' ');
      const iban = details.iban!;
      return {
        ...common,
        currency: 'eur',
        account_type: 'iban',
        account_owner_type: 'individual',
        first_name: owner.slice(0, space).trim(),
        last_name: owner.slice(space + 1),
        iban: { account_number: iban, country: SEPA_COUNTRIES[iban.slice(0, 2)], ...(details.bic ? { bic: details.bic } : {}) },
      };
    }
    case 'spei':
      return { ...common, currency: 'mxn', account_type: 'clabe', clabe: { account_number: details.clabe } };
    case 'pix':
      return {
        ...common,
        currency: 'brl',
        account_type: 'pix',
        pix_key: { pix_key: details.pixKey, ...(details.documentNumber ? { document_number: details.documentNumber } : {}) },
      };
  }
}

function toTransfer(body: z.infer<typeof transferBody>): BridgeTransfer {
  const status = TRANSFER_STATUSES[body.state] ?? UNKNOWN_TRANSFER_STATUS;
  const destinationType = RAIL_DESTINATIONS[body.destination.payment_rail];
  if (!destinationType) throw new BridgeError('unavailable', `Bridge transfer ${body.id} pays out over ${body.destination.payment_rail}, which this service never requests`);
  const amount = parseBridgeAmount(body.amount);
  if (amount === null) throw new BridgeError('unavailable', `Bridge transfer ${body.id} has an unreadable amount: ${body.amount}`);
  const failed = status === 'canceled' || status === 'error' || status === 'returned';
  return {
    transferId: body.id,
    status,
    amount,
    destinationType,
    depositAddress: body.source_deposit_instructions.to_address,
    failureReason: failed ? `Bridge reported the transfer ${body.state}` : null,
    createdAt: new Date(body.created_at),
  };
}

function toCard(body: z.infer<typeof cardBody>): BridgeCard {
  return { cardId: body.id, status: CARD_STATUSES[body.status] ?? 'pending', last4: body.card_details?.last_4 ?? null };
}

const kycStatus = (status: string): KycStatus => KYC_STATUSES[status] ?? 'under_review';

/** What the customer is told first; Bridge's note to developers when there is nothing else. */
function reasons(list: z.infer<typeof rejectionReasons>): string[] {
  return (list ?? []).map((item) => (typeof item === 'string' ? item : (item.reason ?? item.developer_reason ?? ''))).filter((text) => text.length > 0);
}

/**
 * Bridge's decimal amount (e.g. "10.0") as base units. More than 6 decimals is accepted only when
 * the extra digits are zeros: anything else is not an amount of a 6-decimal token.
 */
export function parseBridgeAmount(value: string): bigint | null {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!match) return null;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  return parseUsd(fraction ? `${whole}.${fraction}` : whole);
}

function duplicateKycLink(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  return record.code === 'duplicate_record' ? record.existing_kyc_link : undefined;
}

/** 404 -> not_found; 400 and 422 -> invalid with Bridge's message; anything else -> unavailable. */
function errorFor(answer: Answer): BridgeError {
  const message = providerMessage(answer.body) ?? `Bridge answered HTTP ${answer.status}`;
  if (answer.status === 404) return new BridgeError('not_found', message, answer.status);
  if (answer.status === 400 || answer.status === 422) return new BridgeError('invalid', message, answer.status);
  // 401/403 are our credentials, 409 an identical request still running, 429 and 5xx Bridge: retry later.
  return new BridgeError('unavailable', message, answer.status);
}

function providerMessage(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const { message, source } = body as { message?: unknown; source?: { key?: unknown } };
  if (typeof message !== 'string' || message.length === 0) return null;
  return typeof source?.key === 'string' && source.key.length > 0 ? `${message} (${source.key})` : message;
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new BridgeError('unavailable', `Bridge answered an unexpected body (${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'})`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300;
const segment = (id: string) => encodeURIComponent(id);
