import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { createWalletClient, erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { Challenge, Receipt } from 'mppx';
import { card, loseAnswer, proofMaker, railA } from '../../../test/support/pay.js';
import { employers } from '../employers/tables.js';
import { notifications } from '../notifications/tables.js';
import { offrampTransfers } from './tables.js';
import { SandboxBridge } from '../../providers/bridge/index.js';
import { userTag, virtualAddress } from '../virtual-addresses/address.js';
import { TIP20_ONLY_WARNING } from '../virtual-addresses/routes.js';
import { BridgeService } from './service.js';

/**
 * The employee's money routes over the bridge sandbox (states move every second here): KYC, bank
 * accounts, off-ramps from the wallet (reserved against its balance), cards, the live balance and
 * the deposit address.
 */
let t: TestApp;
let server: LoopbackServer;
let owner: string;
let employerId: string;
let employee: { id: string; token: string; account: PrivateKeyAccount };

const ACH = { destinationType: 'ach', accountOwnerName: 'Ada Lovelace', details: { routingNumber: '021000021', accountNumber: '000123456789' } };
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function hire(token: string, id: string, name: string) {
  const account = privateKeyToAccount(generatePrivateKey());
  const email = `${name.toLowerCase()}-${randomUUID().slice(0, 6)}@money.example`;
  const response = await t.request('POST', `/api/employers/${id}/team`, { token, body: { email, full_name: name, wallet_address: account.address } });
  expect(response.status).toBe(201);
  const employeeId = (await json<{ id: string }>(response)).id;
  return { id: employeeId, token: await t.token(`money-${employeeId}`, email), account };
}

const fundWallet = async (address: Address, usd: string) =>
  expect((await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address, amount: usd } })).status).toBe(200);

/** The employee sends tokens from their own wallet (what their wallet app does for an off-ramp). */
async function sendFromWallet(account: PrivateKeyAccount, to: string, amount: bigint) {
  const chain = t.embeddedChains!.tempo;
  const wallet = createWalletClient({ account, chain: chain.chain, transport: chain.evm.transport });
  const hash = await wallet.writeContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'transfer', args: [to as Address, amount] });
  await chain.connection.publicClient.waitForTransactionReceipt({ hash });
}

const employeeRoute = (method: string, path: string, body?: unknown, token = employee.token) =>
  t.request(method, `/api/employees/${employee.id}${path}`, { token, ...(body === undefined ? {} : { body }) });

interface Offramp {
  transfer_id: string;
  status: string;
  amount: string;
  destination_type: string;
  deposit_instructions: { to_address: string; from_address: string; amount: string } | null;
}

beforeAll(async () => {
  t = await startTestApp({ BRIDGE_SANDBOX_STEP_SECONDS: '1' }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  owner = await t.token('money-owner', 'owner@money.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Money Co' } }))).id;
  employee = await hire(owner, employerId, 'Ada');
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('KYC and bank accounts', () => {
  it('lets only the employer owner start KYC; the customer is created once, each call gets a fresh link', async () => {
    expect((await employeeRoute('POST', '/kyc')).status).toBe(404);
    const first = await json<{ bridge_customer_id: string; kyc_status: string; kyc_link: string }>(await employeeRoute('POST', '/kyc', undefined, owner));
    expect(first).toMatchObject({ employee_id: employee.id, kyc_status: 'incomplete', kyc_link: expect.stringMatching(/^https:\/\//) });
    const second = await json<{ bridge_customer_id: string; kyc_link: string }>(await employeeRoute('POST', '/kyc', undefined, owner));
    expect(second.bridge_customer_id).toBe(first.bridge_customer_id);
    expect(second.kyc_link).not.toBe(first.kyc_link);
  });

  it('refuses bank accounts until KYC is approved, then registers one once', async () => {
    const early = await employeeRoute('POST', '/bank-accounts', ACH);
    expect(early.status).toBe(409);
    expect(await json(early)).toMatchObject({ code: 'KYC_NOT_APPROVED' });

    await sleep(2_100); // the sandbox approves two steps after the link
    const created = await employeeRoute('POST', '/bank-accounts', { ...ACH, label: 'Checking' });
    expect(created.status).toBe(201);
    const account = await json<{ id: string; bank_account_id: string; last4: string }>(created);
    expect(account).toMatchObject({ destination_type: 'ach', last4: '6789', label: 'Checking' });
    const again = await json<{ id: string }>(await employeeRoute('POST', '/bank-accounts', { ...ACH, label: 'Checking' }));
    expect(again.id).toBe(account.id);
    const list = await json<{ bank_accounts: { id: string }[] }>(await employeeRoute('GET', '/bank-accounts'));
    expect(list.bank_accounts.map((a) => a.id)).toEqual([account.id]);

    // The approval rang the employer's bell once.
    const bell = await t.database.db.select().from(notifications).where(eq(notifications.employerId, employerId));
    expect(bell.filter((n) => n.type === 'kyc_approved')).toHaveLength(1);
  });

  it('refuses invalid account details with 400 naming the field', async () => {
    const response = await employeeRoute('POST', '/bank-accounts', { ...ACH, details: { routingNumber: '021000022', accountNumber: '1234' } });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'details' });
  });
});

describe('off-ramps', () => {
  let bankAccountId: string;

  beforeAll(async () => {
    bankAccountId = (await json<{ bank_accounts: { bank_account_id: string }[] }>(await employeeRoute('GET', '/bank-accounts'))).bank_accounts[0]!.bank_account_id;
    await fundWallet(employee.account.address, '100');
  });

  it('refuses an unregistered bank account, a mismatched rail and a non-positive amount (400 naming the field)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: '10', destinationType: 'ach', bankAccountId: 'ea_someone_else' }, 'bankAccountId'],
      [{ amount: '10', destinationType: 'sepa', bankAccountId }, 'destinationType'],
      [{ amount: '0', destinationType: 'ach', bankAccountId }, 'amount'],
      [{ amount: '-5', destinationType: 'ach', bankAccountId }, 'amount'],
      [{ amount: '10', destinationType: 'wire', bankAccountId }, 'destinationType'],
    ];
    for (const [body, field] of cases) {
      const response = await employeeRoute('POST', '/offramp', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await json(response)).toMatchObject({ field });
    }
  });

  it('reserves against the wallet: parallel requests never promise more than it holds', async () => {
    const over = await employeeRoute('POST', '/offramp', { amount: '100.000001', destinationType: 'ach', bankAccountId });
    expect(over.status).toBe(422);
    expect(await json(over)).toMatchObject({ code: 'INSUFFICIENT_BALANCE', field: 'amount' });

    const responses = await Promise.all(Array.from({ length: 5 }, () => employeeRoute('POST', '/offramp', { amount: '30', destinationType: 'ach', bankAccountId })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 422, 422]);
  });

  it('moves a funded transfer through the sandbox to a final state', async () => {
    const list = await json<{ transfers: Offramp[] }>(await employeeRoute('GET', '/offramps'));
    const waiting = list.transfers.find((tr) => tr.status === 'awaiting_funds')!;
    expect(waiting.deposit_instructions).toMatchObject({ from_address: employee.account.address, amount: '30.000000' });
    await sendFromWallet(employee.account, waiting.deposit_instructions!.to_address, 30_000_000n);

    const seen: string[] = [];
    for (let i = 0; i < 20 && seen.at(-1) !== 'payment_processed'; i += 1) {
      const { transfers } = await json<{ transfers: Offramp[] }>(await employeeRoute('GET', '/offramps'));
      const status = transfers.find((tr) => tr.transfer_id === waiting.transfer_id)!.status;
      if (seen.at(-1) !== status) seen.push(status);
      await sleep(300);
    }
    expect(seen[0]).toBe('funds_received');
    expect(seen.at(-1)).toBe('payment_processed');
  });

  it('sells the same off-ramp on the paid route to the employee only (rail A)', async () => {
    const unpaid = await fetch(`${server.url}/api/mpp/bridge/offramp`, { method: 'POST' });
    expect(unpaid.status).toBe(402);
    expect(await unpaid.json()).toMatchObject({ price: '0.250000', rails: ['A'] });

    const { pay } = await railA(t, server.url, '5');
    const body = { employeeId: employee.id, amount: '5', destinationType: 'ach', bankAccountId };
    const paid = await pay('/api/mpp/bridge/offramp', { method: 'POST', body, headers: { 'X-Identity-Token': employee.token } });
    expect(paid.status).toBe(200);
    expect(await json(paid)).toMatchObject({ success: true, status: 'awaiting_funds', amount: '5.000000', destination_type: 'ach', created_at: expect.any(String) });

    for (const headers of [{ 'X-Identity-Token': owner }, {}] as Record<string, string>[]) {
      const refused = await pay('/api/mpp/bridge/offramp', { method: 'POST', body, headers });
      expect(refused.status).toBe(404);
    }
  });

  it('moves open transfers on in the sync job', async () => {
    const sandbox = new SandboxBridge(t.database.db, { stepSeconds: 1, tokenBalance: (address) => t.chains!.tempo.balanceOf(address as Address) });
    const service = new BridgeService({ database: t.database, employers: t.services.employers, tempo: t.chains!.tempo, provider: sandbox });
    const synced = await service.syncOpen();
    expect(synced.offramps).toBeGreaterThan(0);
  });
});

describe('cards', () => {
  it('issues one card per employee, to the employee or the owner, and reports it going active', async () => {
    expect(await json(await employeeRoute('GET', '/card'))).toEqual({ employee_id: employee.id, card: null });
    const issued = await employeeRoute('POST', '/card');
    expect(issued.status).toBe(201);
    const { card } = await json<{ card: { id: string; status: string } }>(issued);
    expect(card.status).toBe('pending');
    const again = await employeeRoute('POST', '/card', undefined, owner);
    expect(again.status).toBe(200);
    expect((await json<{ card: { id: string } }>(again)).card.id).toBe(card.id);
    await sleep(1_100);
    expect(await json(await employeeRoute('GET', '/card', undefined, owner))).toMatchObject({ card: { id: card.id, status: 'active', last4: expect.stringMatching(/^\d{4}$/) } });
  });

  it('refuses a card before KYC, and another tenant', async () => {
    const newcomer = await hire(owner, employerId, 'Grace');
    const response = await t.request('POST', `/api/employees/${newcomer.id}/card`, { token: newcomer.token });
    expect(response.status).toBe(409);
    const rival = await t.token('money-rival', 'rival@money.example');
    await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival' } });
    expect((await employeeRoute('GET', '/card', undefined, rival)).status).toBe(404);
    expect((await employeeRoute('POST', '/kyc', undefined, rival)).status).toBe(404);
  });
});

describe('GET /api/employees/{id}/balance', () => {
  it("answers the employee's live wallet balance, and 404 to anyone else", async () => {
    const balance = await t.chains!.tempo.balanceOf(employee.account.address);
    expect(await json(await employeeRoute('GET', '/balance'))).toMatchObject({
      employee_id: employee.id,
      wallet_address: employee.account.address,
      network: 'eip155:4217',
      balance: balance.toString(),
    });
    expect((await employeeRoute('GET', '/balance', undefined, owner)).status).toBe(404);
    expect((await t.request('GET', `/api/employees/${randomUUID()}/balance`, { token: employee.token })).status).toBe(404);
  });
});

describe('GET /api/portal/deposit-address', () => {
  it('derives the user tag from the two ids (test vector)', () => {
    expect(userTag('3f2504e0-4f89-41d3-9a0c-0305e82c3301', '7c9e6679-7425-40de-944b-e07fc1f90ae7')).toBe('0x7a0667ea99c2');
    expect(virtualAddress('0x0000abcd', '0x7a0667ea99c2').toLowerCase()).toBe('0x0000abcdfdfdfdfdfdfdfdfdfdfd7a0667ea99c2');
  });

  it('is unavailable until the employer registers a master, then derived; always with the TIP-20 warning', async () => {
    const before = await json(await t.request('GET', '/api/portal/deposit-address', { token: employee.token }));
    expect(before).toMatchObject({ employee_id: employee.id, available: false, address: null, warning: TIP20_ONLY_WARNING });

    await t.database.db.update(employers).set({ virtualMasterId: '0x1234abcd' }).where(eq(employers.id, employerId));
    const after = await json<{ address: string; user_tag: string }>(await t.request('GET', '/api/portal/deposit-address', { token: employee.token }));
    expect(after).toMatchObject({ available: true, virtual_master_id: '0x1234abcd', user_tag: userTag(employerId, employee.id) });
    expect(after.address.toLowerCase()).toBe(`0x1234abcd${'fd'.repeat(10)}${userTag(employerId, employee.id).slice(2)}`);
  });

  it('answers 404 to a user who is nobody\'s employee, and 400 for an id that is not one', async () => {
    expect((await t.request('GET', '/api/portal/deposit-address', { token: owner })).status).toBe(404);
    const wrong = await t.request('GET', `/api/portal/deposit-address?employeeId=${randomUUID()}`, { token: employee.token });
    expect(wrong.status).toBe(404);
    const malformed = await t.request('GET', '/api/portal/deposit-address?employeeId=nope', { token: employee.token });
    expect(await json(malformed)).toMatchObject({ field: 'employeeId' });
  });
});

describe('charge before acting', () => {
  const OFFRAMP = '/api/mpp/bridge/offramp';
  let bankAccountId: string;
  const send = (proof: Record<string, string>, amount: string) =>
    fetch(`${server.url}${OFFRAMP}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Identity-Token': employee.token, ...proof },
      body: JSON.stringify({ employeeId: employee.id, amount, destinationType: 'ach', bankAccountId }),
    });
  const offrampsOf = () => t.database.db.select().from(offrampTransfers).where(eq(offrampTransfers.employeeId, employee.id));
  const feeBalance = (payer: string) => t.chains!.tempo.balanceOf(payer as Address);



  beforeAll(async () => {
    bankAccountId = (await json<{ bank_accounts: { bank_account_id: string }[] }>(await employeeRoute('GET', '/bank-accounts'))).bank_accounts[0]!.bank_account_id;
    await fundWallet(employee.account.address, '100');
  });

  it('two off-ramps at once from a payer who can cover one fee: one created, the other refused (402) before anything was created', async () => {
    const payer = await proofMaker(t, server.url, 'A', '0.25');
    const proofs = [await payer.proof(OFFRAMP), await payer.proof(OFFRAMP)];
    const before = (await offrampsOf()).length;

    const responses = await Promise.all(['7', '8'].map((amount, i) => send(proofs[i]!, amount)));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
    expect((await json<{ code: string }>(responses.find((r) => r.status === 402)!)).code).toBe('PAYMENT_SETTLEMENT_FAILED');

    const created = await json<{ transfer_id: string; amount: string }>(responses.find((r) => r.status === 200)!);
    const rows = await offrampsOf();
    expect(rows).toHaveLength(before + 1);
    expect(rows.find((row) => row.id === created.transfer_id)).toMatchObject({ amount: BigInt(Number(created.amount) * 1e6), feePaymentId: expect.any(String) });
    expect(await feeBalance(payer.payer)).toBe(0n);
  });

  it('a fee whose answer was lost: the same proof and request get the first off-ramp again, with no second one and no second charge', async () => {
    const payer = await proofMaker(t, server.url, 'A', '5');
    const proof = await payer.proof(OFFRAMP);
    const first = await send(proof, '9');
    expect(first.status).toBe(200);
    const answer = await json<{ transfer_id: string }>(first);
    const paymentId = await loseAnswer(t, { payer: payer.payer });
    const before = (await offrampsOf()).length;

    const again = await send(proof, '9');
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(answer);
    expect(await offrampsOf()).toHaveLength(before);
    const { rows } = await t.database.pool.query<{ id: string }>('SELECT id FROM offramp_transfers WHERE fee_payment_id = $1', [paymentId]);
    expect(rows.map((row) => row.id)).toEqual([answer.transfer_id]);
    expect(await feeBalance(payer.payer)).toBe(4_750_000n);

    // Served now: a third time is a replay.
    const third = await send(proof, '9');
    expect(third.status).toBe(402);
    expect((await json<{ code: string }>(third)).code).toBe('PAYMENT_ALREADY_USED');
  });

  it('a fee whose request died between reserving and recording the transfer: the redemption asks the provider again and gets the same transfer', async () => {
    const payer = await proofMaker(t, server.url, 'A', '5');
    const proof = await payer.proof(OFFRAMP);
    const first = await send(proof, '6');
    expect(first.status).toBe(200);
    const answer = await json<{ transfer_id: string; bridge_transfer_id: string }>(first);
    await loseAnswer(t, { payer: payer.payer });
    // The provider created the transfer, but its answer never reached the row.
    await t.database.pool.query("UPDATE offramp_transfers SET status = 'pending', bridge_transfer_id = NULL, deposit_address = NULL WHERE id = $1", [answer.transfer_id]);
    const before = (await offrampsOf()).length;

    const again = await send(proof, '6');
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(answer);
    expect(await offrampsOf()).toHaveLength(before);
  });
});

describe('the card fallback on the off-ramp (spec 4.1.5): a card credit', () => {
  const OFFRAMP = '/api/mpp/bridge/offramp';
  let bankAccountId: string;
  const spts: string[] = [];
  const cardPayer = () => card(server.url, 'pm_card_visa', (spt) => spts.push(spt));
  const offrampBody = (amount: string) => ({ employeeId: employee.id, amount, destinationType: 'ach', bankAccountId });
  const identity = (token = employee.token) => ({ 'X-Identity-Token': token });
  const sandboxCharges = async () =>
    (await t.database.pool.query<{ amount: string; amount_refunded: string }>('SELECT amount, amount_refunded FROM card_sandbox_payment_intents WHERE token_id = ANY($1)', [spts])).rows;
  const creditOf = async (token: string, id: string) => t.request('GET', `/api/card-credits/${id}`, { headers: identity(token) });

  beforeAll(async () => {
    bankAccountId = (await json<{ bank_accounts: { bank_account_id: string }[] }>(await employeeRoute('GET', '/bank-accounts'))).bank_accounts[0]!.bank_account_id;
    await fundWallet(employee.account.address, '100');
  });

  it("offers the processor's $0.50 minimum as a card credit next to rail A's $0.25", async () => {
    const response = await fetch(`${server.url}${OFFRAMP}`, { method: 'POST' });
    expect(response.status).toBe(402);
    const challenges = Challenge.fromResponseList(response);
    expect(challenges.map((c) => c.method)).toEqual(['tempo', 'stripe']);
    expect(challenges[1]).toMatchObject({ intent: 'charge', request: { amount: '50', currency: 'usd' } });
    expect(challenges[1]!.description).toMatch(/card credit.*draws 0\.250000/);
  });

  it('refuses a top-up it could not hold for anyone before charging the card', async () => {
    const before = spts.length;
    const refused = await cardPayer()(OFFRAMP, { method: 'POST', body: offrampBody('5') });
    expect(refused.status).toBe(402);
    expect(await json(refused)).toMatchObject({ code: 'PAYMENT_INVALID', error: expect.stringContaining('X-Identity-Token') });
    expect(spts.length).toBeGreaterThan(before); // the client made its token; the service never used it
    expect(await sandboxCharges()).toEqual([]);
  });

  it('pays an off-ramp with a $0.50 top-up, pays the next one from what is left, then asks for a new top-up', async () => {
    const first = await cardPayer()(OFFRAMP, { method: 'POST', body: offrampBody('5'), headers: identity() });
    expect(first.status).toBe(200);
    expect(await json(first)).toMatchObject({ success: true, status: 'awaiting_funds', amount: '5.000000' });
    expect(Receipt.fromResponse(first)).toMatchObject({ method: 'stripe', status: 'success' });
    const creditId = first.headers.get('Payment-Credit')!;
    expect(first.headers.get('Payment-Credit-Remaining')).toBe('0.250000');
    expect(await sandboxCharges()).toEqual([{ amount: '50', amount_refunded: '0' }]);

    // The next call draws the rest: no card, no new charge.
    const draw = (token = employee.token) => fetch(`${server.url}${OFFRAMP}`, { method: 'POST', headers: { 'content-type': 'application/json', 'Payment-Credit': creditId, ...identity(token) }, body: JSON.stringify(offrampBody('4')) });
    const second = await draw();
    expect(second.status).toBe(200);
    expect(second.headers.get('Payment-Credit-Remaining')).toBe('0.000000');
    expect(await sandboxCharges()).toHaveLength(1);

    const third = await draw();
    expect(third.status).toBe(402);
    expect(await json(third)).toMatchObject({ code: 'PAYMENT_INVALID', error: expect.stringContaining('pay again to top it up') });
    expect(Challenge.fromResponseList(third).map((c) => c.method)).toContain('stripe');

    // Another caller naming the credit: as if it did not exist.
    const stranger = await t.token('money-stranger', 'stranger@money.example');
    expect(await json(await draw(stranger))).toMatchObject({ code: 'PAYMENT_INVALID', error: expect.stringContaining(`no card credit ${creditId} for this caller`) });
    expect((await creditOf(stranger, creditId)).status).toBe(404);

    // Both fees are in the employer's billing, as card payments, and so is the credit.
    const receipts = await json<{ receipts: { route: string; rail: string; amount_usd: string }[] }>(await t.request('GET', `/api/employers/${employerId}/mpp-receipts`, { token: owner }));
    expect(receipts.receipts.filter((r) => r.rail === 'card' && r.route === `POST ${OFFRAMP}`).map((r) => r.amount_usd)).toEqual(['0.250000', '0.250000']);
    const billed = await json<{ credits: Record<string, unknown>[]; total: number }>(await t.request('GET', `/api/employers/${employerId}/card-credits`, { token: owner }));
    expect(billed.credits).toEqual([
      expect.objectContaining({ id: creditId, status: 'open', funded_usd: '0.500000', drawn_usd: '0.500000', remaining_usd: '0.000000', refunded_usd: '0.000000' }),
    ]);
    // Nothing left to refund.
    const empty = await t.request('POST', `/api/employers/${employerId}/card-credits/${creditId}/refund`, { token: owner });
    expect(empty.status).toBe(409);
    expect(await json(empty)).toMatchObject({ code: 'CREDIT_EMPTY' });
  });

  it('sends the remainder back to the card once, for the holder or the owner; a refunded credit pays for nothing', async () => {
    const first = await cardPayer()(OFFRAMP, { method: 'POST', body: offrampBody('3'), headers: identity() });
    expect(first.status).toBe(200);
    const creditId = first.headers.get('Payment-Credit')!;
    expect(await json(await creditOf(employee.token, creditId))).toMatchObject({ id: creditId, status: 'open', remaining_usd: '0.250000', route: `POST ${OFFRAMP}` });

    const refunds = await Promise.all([
      t.request('POST', `/api/card-credits/${creditId}/refund`, { headers: identity() }),
      t.request('POST', `/api/employers/${employerId}/card-credits/${creditId}/refund`, { token: owner }),
    ]);
    for (const refund of refunds) {
      expect(refund.status).toBe(200);
      expect(await json(refund)).toMatchObject({ status: 'refunded', remaining_usd: '0.000000', refunded_usd: '0.250000', refunded_at: expect.any(String) });
    }
    const charge = (await sandboxCharges()).at(-1)!;
    expect(charge).toEqual({ amount: '50', amount_refunded: '25' });

    // The holder's own list, newest first: this credit, then the one drawn empty before it.
    const held = await json<{ credits: { id: string; status: string }[]; total: number }>(await t.request('GET', '/api/card-credits?limit=2', { headers: identity() }));
    expect(held.credits[0]).toMatchObject({ id: creditId, status: 'refunded' });
    expect(held.total).toBeGreaterThanOrEqual(2);
    const strangers = await json<{ credits: unknown[] }>(await t.request('GET', '/api/card-credits', { headers: identity(await t.token('money-stranger-2', 'stranger2@money.example')) }));
    expect(strangers.credits).toEqual([]);

    const draw = await fetch(`${server.url}${OFFRAMP}`, { method: 'POST', headers: { 'content-type': 'application/json', 'Payment-Credit': creditId, ...identity() }, body: JSON.stringify(offrampBody('1')) });
    expect(draw.status).toBe(402);
  });

  it('validates and authorises the credit routes', async () => {
    const badId = await t.request('GET', '/api/card-credits/not-a-uuid', { headers: identity() });
    expect(badId.status).toBe(400);
    expect(await json(badId)).toMatchObject({ field: 'id' });
    const anonymous = await t.request('GET', `/api/card-credits/${randomUUID()}`);
    expect(anonymous.status).toBe(401);
    expect((await t.request('GET', '/api/card-credits')).status).toBe(401);
    // A signed-in person's bearer is the same identity as their X-Identity-Token.
    const byBearer = await json<{ credits: unknown[] }>(await t.request('GET', '/api/card-credits', { token: employee.token }));
    expect(byBearer.credits.length).toBeGreaterThan(0);
    const badLimit = await t.request('GET', '/api/card-credits?limit=0', { headers: identity() });
    expect(badLimit.status).toBe(400);
    expect(await json(badLimit)).toMatchObject({ field: 'limit' });
    expect((await t.request('GET', `/api/card-credits/${randomUUID()}`, { headers: identity() })).status).toBe(404);
    const otherOwner = await t.token('money-other-owner', 'other-owner@money.example');
    expect((await t.request('GET', `/api/employers/${employerId}/card-credits`, { token: otherOwner })).status).toBe(404);
    const malformed = await fetch(`${server.url}${OFFRAMP}`, { method: 'POST', headers: { 'Payment-Credit': 'nope' } });
    expect(malformed.status).toBe(402);
    expect(await json(malformed)).toMatchObject({ code: 'PAYMENT_INVALID', error: expect.stringContaining('Payment-Credit') });
  });
});
