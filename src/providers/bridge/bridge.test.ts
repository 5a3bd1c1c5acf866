import fs from 'node:fs';
import { getAddress } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/support/database.js';
import type { Database } from '../../db/client.js';
import { parseBridgeAmount } from './http.js';
import {
  BridgeError,
  BridgeHttpProvider,
  depositAddressFor,
  SandboxBridge,
  validateExternalAccount,
  type BridgeErrorKind,
  type DestinationType,
} from './index.js';

/**
 * The fiat-bridge port: the shared bank-detail validator, the database-backed sandbox (time and
 * funds driven by the test), and the Bridge adapter against recorded responses (no network).
 */

const SOURCE = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const ACH = { routingNumber: '021000021', accountNumber: '000123456789' };
const IBAN = 'DE89 3704 0044 0532 0130 00';
const CLABE = '032180000118359719';

/** Runs `work` and returns the BridgeError it throws. */
async function bridgeError(work: () => Promise<unknown>): Promise<BridgeError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof BridgeError) return error;
    throw error;
  }
  throw new Error('expected a BridgeError');
}

async function expectKind(work: () => Promise<unknown>, kind: BridgeErrorKind, message?: RegExp) {
  const error = await bridgeError(work);
  expect(error.kind).toBe(kind);
  if (message) expect(error.message).toMatch(message);
  return error;
}

describe('bank details validation', () => {
  const check = (destinationType: DestinationType, details: Record<string, string>, accountOwnerName = 'Ada Lovelace') =>
    validateExternalAccount({ destinationType, accountOwnerName, details });
  const refused = (destinationType: DestinationType, details: Record<string, string>, field: string, accountOwnerName?: string) => {
    let error: unknown;
    try {
      check(destinationType, details, accountOwnerName);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BridgeError);
    expect((error as BridgeError).kind).toBe('invalid');
    expect((error as BridgeError).message).toContain(field);
  };

  it('ACH: a 9-digit routing number with a valid ABA checksum and a 4-17 digit account number', () => {
    expect(check('ach', ACH).last4).toBe('6789');
    refused('ach', { ...ACH, routingNumber: '021000022' }, 'details.routingNumber'); // checksum
    refused('ach', { ...ACH, routingNumber: '000000000' }, 'details.routingNumber'); // no Fed district
    refused('ach', { ...ACH, routingNumber: '02100002' }, 'details.routingNumber');
    refused('ach', { accountNumber: ACH.accountNumber }, 'details.routingNumber');
    refused('ach', { ...ACH, accountNumber: '123' }, 'details.accountNumber');
    refused('ach', { ...ACH, accountNumber: '123456789012345678' }, 'details.accountNumber');
    refused('ach', { ...ACH, accountNumber: '1234-5678' }, 'details.accountNumber');
  });

  it('SEPA: an IBAN with a valid mod-97 checksum (spaces ignored) from a SEPA country', () => {
    const valid = check('sepa', { iban: IBAN.toLowerCase() });
    expect(valid).toEqual({ details: { iban: 'DE89370400440532013000' }, last4: '3000' });
    expect(check('sepa', { iban: 'GB29 NWBK 6016 1331 9268 19' }).last4).toBe('6819');
    refused('sepa', { iban: 'DE88 3704 0044 0532 0130 00' }, 'details.iban'); // checksum
    refused('sepa', { iban: 'DE89 3704' }, 'details.iban');
    refused('sepa', { iban: 'SA03 8000 0000 6080 1016 7519' }, 'details.iban'); // valid, but not SEPA
    refused('sepa', { iban: IBAN }, 'accountOwnerName', 'Ada');
  });

  it('SPEI: an 18-digit CLABE with a valid check digit', () => {
    expect(check('spei', { clabe: CLABE }).last4).toBe('9719');
    expect(check('spei', { clabe: '002010077777777771' }).last4).toBe('7771');
    refused('spei', { clabe: '032180000118359718' }, 'details.clabe');
    refused('spei', { clabe: '03218000011835971' }, 'details.clabe');
  });

  it('PIX: a key of 1-77 characters', () => {
    expect(check('pix', { pixKey: 'joao@example.com.br' }).last4).toBe('m.br');
    expect(check('pix', { pixKey: '7' }).last4).toBe('7');
    refused('pix', { pixKey: '' }, 'details.pixKey');
    refused('pix', { pixKey: 'x'.repeat(78) }, 'details.pixKey');
  });

  it('the owner name and destination type', () => {
    refused('ach', ACH, 'accountOwnerName', '   ');
    refused('wire' as DestinationType, ACH, 'destinationType');
  });
});

describe('sandbox bridge', () => {
  let database: Database;
  let clock: Date;
  let balances: Map<string, bigint>;
  let balanceFails: boolean;
  let bridge: SandboxBridge;

  const tick = (seconds: number) => {
    clock = new Date(clock.getTime() + seconds * 1000);
  };
  const rows = async (kind: string, idempotencyKey: string) => {
    const { rows: found } = await database.pool.query(
      'SELECT id, data FROM bridge_sandbox_objects WHERE kind = $1 AND idempotency_key = $2',
      [kind, idempotencyKey],
    );
    return found as { id: string; data: Record<string, unknown> }[];
  };
  let seq = 0;
  const key = (label: string) => `${label}-${(seq += 1)}`;

  async function approvedCustomer(email = `worker${seq + 1}@example.com`) {
    const customer = await bridge.createCustomer({ email, fullName: 'Ada Lovelace', idempotencyKey: key('customer') });
    await bridge.kycLink(customer.customerId);
    tick(10);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('approved');
    return customer.customerId;
  }

  async function transferTo(customerId: string, amount = 25_000_000n) {
    const account = await bridge.createExternalAccount(customerId, {
      destinationType: 'ach',
      accountOwnerName: 'Ada Lovelace',
      details: ACH,
      idempotencyKey: key('account'),
    });
    return bridge.createTransfer({
      customerId,
      externalAccountId: account.accountId,
      destinationType: 'ach',
      amount,
      sourceAddress: SOURCE,
      idempotencyKey: key('transfer'),
    });
  }

  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ database, close } = await openTestDatabase());
  });
  afterAll(async () => {
    await close();
  });
  beforeEach(() => {
    clock = new Date('2025-03-01T12:00:00.000Z');
    balances = new Map();
    balanceFails = false;
    bridge = new SandboxBridge(database.db, {
      stepSeconds: 5,
      now: () => clock,
      tokenBalance: async (address) => {
        if (balanceFails) throw new Error('chain offline');
        return balances.get(address) ?? 0n;
      },
    });
  });

  it('KYC: not_started, incomplete at the first link, under_review a step later, approved after two', async () => {
    const idempotencyKey = key('customer');
    const customer = await bridge.createCustomer({ email: 'ada@example.com', fullName: 'Ada Lovelace', idempotencyKey });
    expect(customer).toEqual({ customerId: expect.stringMatching(/^cust_sbx_[0-9a-f]{24}$/), kycStatus: 'not_started', rejectionReasons: [] });
    tick(60);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('not_started'); // time alone does nothing

    const link = await bridge.kycLink(customer.customerId);
    expect(link.url).toMatch(new RegExp(`^https://sandbox\\.bridge\\.local/kyc/${customer.customerId}\\?token=[0-9a-f]{32}$`));
    expect(link.expiresAt).toEqual(new Date(clock.getTime() + 24 * 3600 * 1000));
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('incomplete');

    tick(4.999);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('incomplete');
    tick(0.001);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('under_review');
    // A second link is fresh but does not restart the review.
    const again = await bridge.kycLink(customer.customerId);
    expect(again.url).not.toBe(link.url);
    tick(5);
    expect(await bridge.customer(customer.customerId)).toEqual({ customerId: customer.customerId, kycStatus: 'approved', rejectionReasons: [] });

    // The state is written back, and a later link never undoes an approval.
    expect((await rows('customer', idempotencyKey))[0]!.data).toMatchObject({ status: 'approved' });
    await bridge.kycLink(customer.customerId);
    tick(3600);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('approved');
  });

  it('KYC: a read long after the link jumps straight to the final state', async () => {
    const customer = await bridge.createCustomer({ email: 'late@example.com', fullName: 'Late Reader', idempotencyKey: key('customer') });
    await bridge.kycLink(customer.customerId);
    tick(3600);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('approved');
  });

  it('KYC: an email containing +reject is rejected with a reason', async () => {
    const customer = await bridge.createCustomer({ email: 'mallory+reject@example.com', fullName: 'Mallory', idempotencyKey: key('customer') });
    await bridge.kycLink(customer.customerId);
    tick(5);
    expect((await bridge.customer(customer.customerId)).kycStatus).toBe('under_review');
    tick(5);
    const rejected = await bridge.customer(customer.customerId);
    expect(rejected.kycStatus).toBe('rejected');
    expect(rejected.rejectionReasons).toEqual([expect.stringContaining('+reject')]);
  });

  it('customers: the same idempotency key returns the same customer and stores one row', async () => {
    const idempotencyKey = key('customer');
    const first = await bridge.createCustomer({ email: 'once@example.com', fullName: 'Once', idempotencyKey });
    const second = await bridge.createCustomer({ email: 'once@example.com', fullName: 'Once', idempotencyKey });
    const concurrent = await Promise.all([1, 2, 3].map(() => bridge.createCustomer({ email: 'once@example.com', fullName: 'Once', idempotencyKey })));
    expect(second.customerId).toBe(first.customerId);
    expect(concurrent.map((c) => c.customerId)).toEqual([first.customerId, first.customerId, first.customerId]);
    expect(await rows('customer', idempotencyKey)).toHaveLength(1);
  });

  it('customers: unknown ids are not_found; bad input is invalid', async () => {
    await expectKind(() => bridge.customer('cust_sbx_missing'), 'not_found', /customer cust_sbx_missing not found/);
    await expectKind(() => bridge.kycLink('cust_sbx_missing'), 'not_found');
    await expectKind(() => bridge.createCustomer({ email: 'not-an-email', fullName: 'X', idempotencyKey: key('customer') }), 'invalid', /email/);
    await expectKind(() => bridge.createCustomer({ email: 'a@example.com', fullName: ' ', idempotencyKey: key('customer') }), 'invalid', /fullName/);
  });

  it('external accounts: validated, owned by an existing customer, idempotent', async () => {
    const customer = await bridge.createCustomer({ email: 'bank@example.com', fullName: 'Bank Owner', idempotencyKey: key('customer') });
    const idempotencyKey = key('account');
    const input = { destinationType: 'sepa' as const, accountOwnerName: 'Bank Owner', details: { iban: IBAN }, idempotencyKey };
    const account = await bridge.createExternalAccount(customer.customerId, input);
    expect(account).toEqual({ accountId: expect.stringMatching(/^ea_sbx_[0-9a-f]{24}$/), last4: '3000' });
    expect(await bridge.createExternalAccount(customer.customerId, input)).toEqual(account);
    const stored = await rows('external_account', idempotencyKey);
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored[0]!.data)).not.toContain('370400440532'); // no full IBAN at rest

    await expectKind(
      () => bridge.createExternalAccount('cust_sbx_missing', { ...input, idempotencyKey: key('account') }),
      'not_found',
    );
    const bad = (destinationType: DestinationType, details: Record<string, string>) =>
      bridge.createExternalAccount(customer.customerId, { destinationType, accountOwnerName: 'Bank Owner', details, idempotencyKey: key('account') });
    await expectKind(() => bad('ach', { ...ACH, routingNumber: '123456789' }), 'invalid', /details\.routingNumber/);
    await expectKind(() => bad('sepa', { iban: 'DE00 3704 0044 0532 0130 00' }), 'invalid', /details\.iban/);
    await expectKind(() => bad('spei', { clabe: '032180000118359710' }), 'invalid', /details\.clabe/);
    expect(await bad('spei', { clabe: CLABE })).toMatchObject({ last4: '9719' });
    expect(await bad('pix', { pixKey: '+5511987654321' })).toMatchObject({ last4: '4321' });
  });

  it('transfers: awaiting_funds at a deposit address of its own, then funds_received, payment_submitted, payment_processed', async () => {
    const customerId = await approvedCustomer();
    const transfer = await transferTo(customerId, 25_000_000n);
    expect(transfer).toEqual({
      transferId: expect.stringMatching(/^tr_sbx_[0-9a-f]{24}$/),
      status: 'awaiting_funds',
      amount: 25_000_000n,
      destinationType: 'ach',
      depositAddress: depositAddressFor(transfer.transferId),
      failureReason: null,
      createdAt: clock,
    });
    expect(transfer.depositAddress).toBe(getAddress(transfer.depositAddress));
    const other = await transferTo(customerId, 25_000_000n);
    expect(other.depositAddress).not.toBe(transfer.depositAddress);

    balances.set(transfer.depositAddress, 24_999_999n); // short by one unit
    tick(1);
    expect((await bridge.transfer(transfer.transferId)).status).toBe('awaiting_funds');
    balances.set(transfer.depositAddress, 25_000_000n);
    expect((await bridge.transfer(transfer.transferId)).status).toBe('funds_received');
    tick(4);
    expect((await bridge.transfer(transfer.transferId)).status).toBe('funds_received');
    tick(1);
    expect((await bridge.transfer(transfer.transferId)).status).toBe('payment_submitted');
    tick(5);
    const processed = await bridge.transfer(transfer.transferId);
    expect(processed).toMatchObject({ status: 'payment_processed', failureReason: null, amount: 25_000_000n });
    balances.delete(transfer.depositAddress); // Bridge swept the deposit; final stays final
    tick(48 * 3600);
    expect((await bridge.transfer(transfer.transferId)).status).toBe('payment_processed');
    expect(other.status).toBe('awaiting_funds');
  });

  it('transfers: concurrent readers record one funding time', async () => {
    const transfer = await transferTo(await approvedCustomer());
    balances.set(transfer.depositAddress, transfer.amount);
    const seen = await Promise.all([1, 2, 3, 4].map(() => bridge.transfer(transfer.transferId)));
    expect(seen.map((t) => t.status)).toEqual(['funds_received', 'funds_received', 'funds_received', 'funds_received']);
    const { rows: found } = await database.pool.query('SELECT data FROM bridge_sandbox_objects WHERE id = $1', [transfer.transferId]);
    expect(found[0].data).toMatchObject({ status: 'funds_received', fundedAt: clock.toISOString() });
  });

  it('transfers: canceled when no funds arrived within 24 hours; funds seen later are still paid out', async () => {
    const customerId = await approvedCustomer();
    const unfunded = await transferTo(customerId);
    const late = await transferTo(customerId);
    tick(24 * 3600);
    expect((await bridge.transfer(unfunded.transferId)).status).toBe('awaiting_funds'); // exactly 24 h
    tick(1);
    expect(await bridge.transfer(unfunded.transferId)).toMatchObject({ status: 'canceled', failureReason: 'funds not received within 24 hours' });
    balances.set(unfunded.depositAddress, unfunded.amount);
    expect((await bridge.transfer(unfunded.transferId)).status).toBe('canceled'); // final

    balances.set(late.depositAddress, late.amount);
    expect((await bridge.transfer(late.transferId)).status).toBe('funds_received');
    tick(10);
    expect((await bridge.transfer(late.transferId)).status).toBe('payment_processed');
  });

  it('transfers: idempotent by key', async () => {
    const customerId = await approvedCustomer();
    const account = await bridge.createExternalAccount(customerId, { destinationType: 'spei', accountOwnerName: 'Ada Lovelace', details: { clabe: CLABE }, idempotencyKey: key('account') });
    const input = { customerId, externalAccountId: account.accountId, destinationType: 'spei' as const, amount: 1_500_000n, sourceAddress: SOURCE, idempotencyKey: key('transfer') };
    const first = await bridge.createTransfer(input);
    tick(30);
    const again = await bridge.createTransfer(input);
    expect(again).toEqual(first);
    expect(await rows('transfer', input.idempotencyKey)).toHaveLength(1);
  });

  it('transfers: refused for a foreign or mismatched account, a bad amount or address; unknown ids are not_found', async () => {
    const alice = await approvedCustomer();
    const bob = await approvedCustomer();
    const bobsAccount = await bridge.createExternalAccount(bob, { destinationType: 'ach', accountOwnerName: 'Bob', details: ACH, idempotencyKey: key('account') });
    const base = { customerId: alice, externalAccountId: bobsAccount.accountId, destinationType: 'ach' as DestinationType, amount: 1_000_000n, sourceAddress: SOURCE };
    const create = (overrides: Partial<typeof base>) => bridge.createTransfer({ ...base, ...overrides, idempotencyKey: key('transfer') });

    await expectKind(() => create({}), 'invalid', /does not belong to customer/);
    await expectKind(() => create({ customerId: bob, destinationType: 'sepa' }), 'invalid', /does not match/);
    await expectKind(() => create({ customerId: bob, amount: 0n }), 'invalid', /amount/);
    await expectKind(() => create({ customerId: bob, sourceAddress: '0x1234' }), 'invalid', /sourceAddress/);
    await expectKind(() => create({ customerId: 'cust_sbx_missing' }), 'not_found');
    await expectKind(() => create({ customerId: bob, externalAccountId: 'ea_sbx_missing' }), 'not_found', /external account/);
    await expectKind(() => bridge.transfer('tr_sbx_missing'), 'not_found');
    // Another kind's id is not a transfer.
    await expectKind(() => bridge.transfer(bobsAccount.accountId), 'not_found');
  });

  it('transfers: a chain that cannot be read makes the bridge unavailable, not the transfer failed', async () => {
    const transfer = await transferTo(await approvedCustomer());
    balanceFails = true;
    await expectKind(() => bridge.transfer(transfer.transferId), 'unavailable', /chain offline/);
    balanceFails = false;
    expect((await bridge.transfer(transfer.transferId)).status).toBe('awaiting_funds');
  });

  it('cards: KYC required; pending, active a step later; idempotent; only visible to their customer', async () => {
    const pending = await bridge.createCustomer({ email: 'card@example.com', fullName: 'Card Holder', idempotencyKey: key('customer') });
    await expectKind(() => bridge.issueCard(pending.customerId, { idempotencyKey: key('card'), walletAddress: SOURCE }), 'kyc_required', /not_started/);
    await bridge.kycLink(pending.customerId);
    tick(5);
    await expectKind(() => bridge.issueCard(pending.customerId, { idempotencyKey: key('card'), walletAddress: null }), 'kyc_required', /under_review/);
    await expectKind(() => bridge.issueCard('cust_sbx_missing', { idempotencyKey: key('card'), walletAddress: null }), 'not_found');

    const customerId = await approvedCustomer();
    const idempotencyKey = key('card');
    const card = await bridge.issueCard(customerId, { idempotencyKey, walletAddress: SOURCE.toLowerCase() });
    expect(card).toEqual({ cardId: expect.stringMatching(/^card_sbx_[0-9a-f]{24}$/), status: 'pending', last4: expect.stringMatching(/^\d{4}$/) });
    expect(await bridge.issueCard(customerId, { idempotencyKey, walletAddress: SOURCE })).toEqual(card);
    expect(await rows('card', idempotencyKey)).toHaveLength(1);
    tick(4);
    expect((await bridge.card(customerId, card.cardId)).status).toBe('pending');
    tick(1);
    expect(await bridge.card(customerId, card.cardId)).toEqual({ ...card, status: 'active' }); // last4 fixed at creation

    const stranger = await approvedCustomer();
    await expectKind(() => bridge.card(stranger, card.cardId), 'not_found');
    await expectKind(() => bridge.card(customerId, 'card_sbx_missing'), 'not_found');
    await expectKind(() => bridge.issueCard(customerId, { idempotencyKey: key('card'), walletAddress: 'nope' }), 'invalid', /walletAddress/);
  });
});

describe('Bridge HTTP adapter (recorded responses)', () => {
  interface Seen {
    method: string;
    url: string;
    headers: Record<string, string>;
    body: unknown;
  }
  type Reply = { status: number; body: unknown } | ((init: RequestInit) => Promise<Response>);

  const fixture = (name: string): Record<string, unknown> =>
    JSON.parse(fs.readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

  /** A fake Bridge answering `replies` in order and recording every request. */
  function fakeBridge(replies: Reply[], options: { timeoutMs?: number } = {}) {
    const seen: Seen[] = [];
    const fakeFetch: typeof fetch = async (input, init = {}) => {
      seen.push({
        method: init.method ?? 'GET',
        url: String(input),
        headers: Object.fromEntries(new Headers(init.headers)),
        body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      });
      const reply = replies.shift();
      if (!reply) throw new Error('unexpected request');
      if (typeof reply === 'function') return reply(init);
      const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      return new Response(text, { status: reply.status, headers: { 'content-type': 'application/json' } });
    };
    const provider = new BridgeHttpProvider({ apiKey: 'sk-test-8c1e', baseUrl: 'https://bridge.test/v0/', fetch: fakeFetch, ...options });
    return { provider, seen };
  }

  const CUSTOMER = '5c1f2a9e-3b7d-4e61-8f0a-6d2b9c4e7a13';

  it('creates a customer through a KYC link, with the key and idempotency key', async () => {
    const { provider, seen } = fakeBridge([{ status: 200, body: fixture('kyc-link-created') }]);
    expect(await provider.createCustomer({ email: 'ada@example.com', fullName: 'Ada Lovelace', idempotencyKey: 'kyc-emp-1' })).toEqual({
      customerId: CUSTOMER,
      kycStatus: 'not_started',
      rejectionReasons: [],
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: 'https://bridge.test/v0/kyc_links',
        headers: { 'api-key': 'sk-test-8c1e', 'idempotency-key': 'kyc-emp-1', 'content-type': 'application/json', accept: 'application/json' },
        body: { full_name: 'Ada Lovelace', email: 'ada@example.com', type: 'individual' },
      },
    ]);
  });

  it('an email Bridge already knows answers with that customer', async () => {
    const { provider } = fakeBridge([{ status: 400, body: fixture('kyc-link-duplicate') }]);
    expect(await provider.createCustomer({ email: 'ada@example.com', fullName: 'Ada Lovelace', idempotencyKey: 'kyc-emp-2' })).toEqual({
      customerId: CUSTOMER,
      kycStatus: 'approved',
      rejectionReasons: [],
    });
  });

  it('reads customers: active is approved; rejection reasons for the customer, else for the developer', async () => {
    const { provider, seen } = fakeBridge([
      { status: 200, body: fixture('customer-active') },
      { status: 200, body: fixture('customer-rejected') },
    ]);
    expect(await provider.customer(CUSTOMER)).toEqual({ customerId: CUSTOMER, kycStatus: 'approved', rejectionReasons: [] });
    expect(await provider.customer('8d4e0b27-91c3-4f5a-a6e8-3b7c2d1f9e54')).toEqual({
      customerId: '8d4e0b27-91c3-4f5a-a6e8-3b7c2d1f9e54',
      kycStatus: 'rejected',
      rejectionReasons: ['Cannot validate ID -- upload a clear photo of the full ID', 'Blurry face portrait.'],
    });
    expect(seen[0]).toMatchObject({ method: 'GET', url: `https://bridge.test/v0/customers/${CUSTOMER}`, body: undefined });
    expect(seen[0]!.headers).toEqual({ 'api-key': 'sk-test-8c1e', accept: 'application/json' }); // no idempotency key on reads
  });

  it('maps every KYC status, unknown ones to under_review', async () => {
    const cases: [string, string][] = [
      ['not_started', 'not_started'], ['incomplete', 'incomplete'], ['awaiting_ubo', 'incomplete'],
      ['awaiting_questionnaire', 'incomplete'], ['under_review', 'under_review'], ['manual_review', 'under_review'],
      ['paused', 'under_review'], ['something_new', 'under_review'], ['approved', 'approved'], ['active', 'approved'],
      ['rejected', 'rejected'], ['offboarded', 'rejected'],
    ];
    const { provider } = fakeBridge(cases.map(([status]) => ({ status: 200, body: { ...fixture('customer-active'), status } })));
    for (const [, expected] of cases) expect((await provider.customer(CUSTOMER)).kycStatus).toBe(expected);
  });

  it('fetches a fresh hosted KYC link for an existing customer', async () => {
    const { provider, seen } = fakeBridge([{ status: 200, body: fixture('customer-kyc-link') }]);
    expect(await provider.kycLink(CUSTOMER)).toEqual({ url: fixture('customer-kyc-link').url, expiresAt: null });
    expect(seen[0]).toMatchObject({ method: 'GET', url: `https://bridge.test/v0/customers/${CUSTOMER}/kyc_link` });
  });

  it('creates external accounts in Bridge shape per rail', async () => {
    const { provider, seen } = fakeBridge([
      { status: 201, body: fixture('external-account-us') },
      { status: 201, body: fixture('external-account-iban') },
      { status: 201, body: { ...fixture('external-account-us'), id: 'ea_clabe', account_type: 'clabe', account: null, last_4: null } },
      { status: 201, body: { ...fixture('external-account-us'), id: 'ea_pix', account_type: 'pix', account: null, last_4: null } },
    ]);
    const us = await provider.createExternalAccount(CUSTOMER, {
      destinationType: 'ach',
      accountOwnerName: 'Ada Lovelace',
      details: { ...ACH, bankName: 'JPMorgan Chase', streetLine1: '123 Main St', city: 'New York', state: 'NY', postalCode: '10001', country: 'USA' },
      idempotencyKey: 'ea-1',
    });
    expect(us).toEqual({ accountId: 'ea_3f9b2c1d7e', last4: '6789' });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: `https://bridge.test/v0/customers/${CUSTOMER}/external_accounts`,
      headers: { 'api-key': 'sk-test-8c1e', 'idempotency-key': 'ea-1' },
    });
    expect(seen[0]!.body).toEqual({
      account_owner_name: 'Ada Lovelace',
      bank_name: 'JPMorgan Chase',
      currency: 'usd',
      account_type: 'us',
      account: { account_number: '000123456789', routing_number: '021000021', checking_or_savings: 'checking' },
      address: { street_line_1: '123 Main St', city: 'New York', state: 'NY', postal_code: '10001', country: 'USA' },
    });

    const iban = await provider.createExternalAccount(CUSTOMER, {
      destinationType: 'sepa',
      accountOwnerName: 'Ada King Lovelace',
      details: { iban: IBAN, bic: 'COBADEFFXXX' },
      idempotencyKey: 'ea-2',
    });
    expect(iban).toEqual({ accountId: 'ea_7a41e9d0c2', last4: '3000' });
    expect(seen[1]!.body).toEqual({
      account_owner_name: 'Ada King Lovelace',
      currency: 'eur',
      account_type: 'iban',
      account_owner_type: 'individual',
      first_name: 'Ada King',
      last_name: 'Lovelace',
      iban: { account_number: 'DE89370400440532013000', country: 'DEU', bic: 'COBADEFFXXX' },
    });

    expect(await provider.createExternalAccount(CUSTOMER, { destinationType: 'spei', accountOwnerName: 'Ada Lovelace', details: { clabe: CLABE }, idempotencyKey: 'ea-3' })).toEqual({
      accountId: 'ea_clabe',
      last4: '9719',
    });
    expect(seen[2]!.body).toEqual({ account_owner_name: 'Ada Lovelace', currency: 'mxn', account_type: 'clabe', clabe: { account_number: CLABE } });

    await provider.createExternalAccount(CUSTOMER, {
      destinationType: 'pix',
      accountOwnerName: 'João Silva',
      details: { pixKey: 'joao@example.com.br', documentNumber: '12345678909' },
      idempotencyKey: 'ea-4',
    });
    expect(seen[3]!.body).toEqual({
      account_owner_name: 'João Silva',
      currency: 'brl',
      account_type: 'pix',
      pix_key: { pix_key: 'joao@example.com.br', document_number: '12345678909' },
    });
  });

  it('refuses bad bank details before calling Bridge', async () => {
    const { provider, seen } = fakeBridge([]);
    const create = (destinationType: DestinationType, details: Record<string, string>) =>
      provider.createExternalAccount(CUSTOMER, { destinationType, accountOwnerName: 'Ada Lovelace', details, idempotencyKey: 'ea-bad' });
    await expectKind(() => create('ach', { ...ACH, routingNumber: '021000022' }), 'invalid', /details\.routingNumber/);
    await expectKind(() => create('ach', { ...ACH, checkingOrSavings: 'brokerage' }), 'invalid', /checkingOrSavings/);
    await expectKind(() => create('sepa', { iban: 'DE89 3704 0044 0532 0130 01' }), 'invalid', /details\.iban/);
    await expectKind(() => create('spei', { clabe: '032180000118359711' }), 'invalid', /details\.clabe/);
    expect(seen).toEqual([]);
  });

  it('creates an off-ramp transfer from USDC on Tempo and reads the deposit address', async () => {
    const { provider, seen } = fakeBridge([{ status: 201, body: fixture('transfer-awaiting-funds') }]);
    const transfer = await provider.createTransfer({
      customerId: CUSTOMER,
      externalAccountId: 'ea_3f9b2c1d7e',
      destinationType: 'ach',
      amount: 25_500_000n,
      sourceAddress: SOURCE,
      idempotencyKey: 'offramp-7',
    });
    expect(transfer).toEqual({
      transferId: 'b2d7e4a1-6c39-4f80-9e15-d3a8c7f2b640',
      status: 'awaiting_funds',
      amount: 25_500_000n,
      destinationType: 'ach',
      depositAddress: '0x4A7c3BE1D9f2a0C6e58B1D3F7e2A9c0b6D4E8F12',
      failureReason: null,
      createdAt: new Date('2025-07-16T19:02:41.377Z'),
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: 'https://bridge.test/v0/transfers',
        headers: { 'api-key': 'sk-test-8c1e', 'idempotency-key': 'offramp-7', 'content-type': 'application/json', accept: 'application/json' },
        body: {
          amount: '25.500000',
          on_behalf_of: CUSTOMER,
          source: { payment_rail: 'tempo', currency: 'usdc', from_address: SOURCE },
          destination: { payment_rail: 'ach', currency: 'usd', external_account_id: 'ea_3f9b2c1d7e' },
        },
      },
    ]);
  });

  it('sends each rail with its currency', async () => {
    const rails: [DestinationType, string, string][] = [['sepa', 'sepa', 'eur'], ['spei', 'spei', 'mxn'], ['pix', 'pix', 'brl']];
    const { provider, seen } = fakeBridge(
      rails.map(([, rail]) => ({ status: 201, body: { ...fixture('transfer-awaiting-funds'), destination: { payment_rail: rail } } })),
    );
    for (const [destinationType, rail, currency] of rails) {
      const transfer = await provider.createTransfer({ customerId: CUSTOMER, externalAccountId: 'ea_x', destinationType, amount: 1n, sourceAddress: SOURCE, idempotencyKey: `t-${rail}` });
      expect(transfer.destinationType).toBe(destinationType);
      expect((seen.at(-1)!.body as { destination: unknown }).destination).toEqual({ payment_rail: rail, currency, external_account_id: 'ea_x' });
      expect((seen.at(-1)!.body as { amount: string }).amount).toBe('0.000001');
    }
  });

  it('reads transfers and maps Bridge states conservatively', async () => {
    const states: [string, string, boolean][] = [
      ['awaiting_funds', 'awaiting_funds', false], ['in_review', 'funds_received', false], ['funds_received', 'funds_received', false],
      ['payment_submitted', 'payment_submitted', false], ['payment_processed', 'payment_processed', false], ['canceled', 'canceled', true],
      ['undeliverable', 'returned', true], ['returned', 'returned', true], ['refund_in_flight', 'returned', true], ['refunded', 'returned', true],
      ['error', 'error', true], ['refund_failed', 'error', true], ['missing_return_policy', 'error', true], ['brand_new_state', 'funds_received', false],
    ];
    const { provider, seen } = fakeBridge([
      { status: 200, body: fixture('transfer-payment-processed') },
      { status: 200, body: fixture('transfer-returned') },
      ...states.map(([state]) => ({ status: 200, body: { ...fixture('transfer-awaiting-funds'), state } })),
    ]);
    expect(await provider.transfer('b2d7e4a1-6c39-4f80-9e15-d3a8c7f2b640')).toMatchObject({ status: 'payment_processed', amount: 25_500_000n, failureReason: null });
    expect(seen[0]).toMatchObject({ method: 'GET', url: 'https://bridge.test/v0/transfers/b2d7e4a1-6c39-4f80-9e15-d3a8c7f2b640' });
    expect(await provider.transfer('f41c8a3e-0b6d-4927-8e5a-c2d9b7f1e306')).toMatchObject({
      status: 'returned',
      destinationType: 'sepa',
      amount: 100_000_000n,
      failureReason: 'Bridge reported the transfer returned',
    });
    for (const [, status, failed] of states) {
      const transfer = await provider.transfer('b2d7e4a1-6c39-4f80-9e15-d3a8c7f2b640');
      expect(transfer.status).toBe(status);
      expect(transfer.failureReason !== null).toBe(failed);
    }
  });

  it('issues a card on Tempo for an approved customer only', async () => {
    const { provider, seen } = fakeBridge([
      { status: 200, body: fixture('customer-active') },
      { status: 201, body: fixture('card-account-pending') },
      { status: 200, body: fixture('card-account-inactive') },
      { status: 200, body: { ...fixture('customer-active'), status: 'under_review' } },
    ]);
    expect(await provider.issueCard(CUSTOMER, { idempotencyKey: 'card-1', walletAddress: SOURCE })).toEqual({ cardId: 'ca_6e2d9b41f7', status: 'pending', last4: '1264' });
    expect(seen[1]).toEqual({
      method: 'POST',
      url: `https://bridge.test/v0/customers/${CUSTOMER}/card_accounts`,
      headers: { 'api-key': 'sk-test-8c1e', 'idempotency-key': 'card-1', 'content-type': 'application/json', accept: 'application/json' },
      body: { currency: 'usdc', chain: 'tempo', crypto_account: { type: 'standard', address: SOURCE } },
    });
    expect(await provider.card(CUSTOMER, 'ca_6e2d9b41f7')).toEqual({ cardId: 'ca_6e2d9b41f7', status: 'canceled', last4: '1264' });
    expect(seen[2]).toMatchObject({ method: 'GET', url: `https://bridge.test/v0/customers/${CUSTOMER}/card_accounts/ca_6e2d9b41f7` });

    await expectKind(() => provider.issueCard(CUSTOMER, { idempotencyKey: 'card-2', walletAddress: null }), 'kyc_required', /under_review/);
    expect(seen).toHaveLength(4); // no card request after the KYC check
  });

  it('maps errors: 404 not_found, 400/422 invalid with Bridge message, 5xx and 401 unavailable', async () => {
    const { provider } = fakeBridge([
      { status: 404, body: fixture('error-404-not-found') },
      { status: 400, body: fixture('error-400-invalid') },
      { status: 422, body: { code: 'idempotency_key_expired', message: 'Idempotency Key Retry Deadline Exceeded' } },
      { status: 500, body: fixture('error-500') },
      { status: 502, body: '<html>Bad Gateway</html>' },
      { status: 401, body: { code: 'unauthorized', message: 'Invalid API key' } },
      { status: 200, body: { unexpected: true } },
    ]);
    const notFound = await expectKind(() => provider.customer('cust_missing'), 'not_found', /^Customer not found$/);
    expect(notFound.providerStatus).toBe(404);
    const invalid = await expectKind(
      () => provider.createExternalAccount(CUSTOMER, { destinationType: 'ach', accountOwnerName: 'Ada Lovelace', details: ACH, idempotencyKey: 'ea-9' }),
      'invalid',
    );
    expect(invalid.message).toBe('Routing number is not a valid ACH routing number (account.routing_number)');
    expect(invalid.providerStatus).toBe(400);
    await expectKind(() => provider.transfer('t'), 'invalid', /Retry Deadline/);
    const serverError = await expectKind(() => provider.transfer('t'), 'unavailable', /unexpected error/);
    expect(serverError.providerStatus).toBe(500);
    await expectKind(() => provider.transfer('t'), 'unavailable', /HTTP 502/);
    await expectKind(() => provider.transfer('t'), 'unavailable', /Invalid API key/);
    await expectKind(() => provider.transfer('t'), 'unavailable', /unexpected body/);
  });

  it('a network failure or a timeout is unavailable', async () => {
    const hang = (init: RequestInit) =>
      new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)));
    const { provider } = fakeBridge(
      [
        async () => {
          throw new TypeError('fetch failed');
        },
        hang,
      ],
      { timeoutMs: 30 },
    );
    await expectKind(() => provider.customer(CUSTOMER), 'unavailable', /cannot reach Bridge.*fetch failed/);
    const timeout = await expectKind(() => provider.customer(CUSTOMER), 'unavailable', /did not answer .* within 30 ms/);
    expect(timeout.providerStatus).toBeUndefined();
  });

  it('reads Bridge decimal amounts exactly', () => {
    expect(parseBridgeAmount('10.0')).toBe(10_000_000n);
    expect(parseBridgeAmount('25.500000')).toBe(25_500_000n);
    expect(parseBridgeAmount('0.000001')).toBe(1n);
    expect(parseBridgeAmount('7')).toBe(7_000_000n);
    expect(parseBridgeAmount('1.2500000000')).toBe(1_250_000n);
    expect(parseBridgeAmount('1.0000001')).toBeNull(); // finer than the token
    expect(parseBridgeAmount('-1.0')).toBeNull();
    expect(parseBridgeAmount('1e3')).toBeNull();
  });
});
