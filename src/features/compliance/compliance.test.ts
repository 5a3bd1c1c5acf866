import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, x402, type PayingFetch } from '../../../test/support/pay.js';
import { payments } from '../../payments/tables.js';
import { auditLog } from '../../audit/tables.js';
import { complianceEvents, walletBlocklist } from './tables.js';
import { ComplianceService } from './service.js';
import { sanctionsSnapshot } from './sanctions-list.js';
import { BUILTIN_SANCTIONS_SOURCE } from './store.js';

/**
 * Compliance end to end on the local server: the paid check and cleared list through the real
 * payment gate (mppx on rail A, @x402/fetch on rail B), identity by `X-Identity-Token` or
 * `X-Agent-Key`, and the owner's bearer routes.
 */
let t: TestApp;
let server: LoopbackServer;
let compliance: ComplianceService;

interface Tenant {
  token: string;
  employerId: string;
  agentKey: string;
  staff: { id: string; wallet: Address }[];
}
let acme: Tenant;
let rival: Tenant;
/** Rail-A payers (5 USD each), one per concern so no test runs out of funds. */
let payCheck: PayingFetch;
let payList: PayingFetch;
let payMisc: PayingFetch;

const SNAPSHOT = sanctionsSnapshot();
const CHECK = '/api/mpp/compliance/check';
const LIST = (employerId: string, query = '') => `/api/mpp/marketplace/compliance-list/${employerId}${query}`;
const SANCTIONED = getAddress(SNAPSHOT.entries[0]!.address);

const wallet = () => privateKeyToAccount(generatePrivateKey()).address;
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
const asOwner = (tenant: Tenant) => ({ 'X-Identity-Token': tenant.token });
const asAgent = (tenant: Tenant) => ({ 'X-Agent-Key': tenant.agentKey });

async function createTenant(sub: string): Promise<Tenant> {
  const token = await t.token(sub, `${sub}@compliance.example`);
  const created = await t.request('POST', '/api/employers', { token, body: { name: `${sub} Inc` } });
  expect(created.status).toBe(201);
  const employerId = (await json<{ id: string }>(created)).id;
  const key = await t.request('POST', `/api/employers/${employerId}/agent-key`, { token });
  expect(key.status).toBe(201);
  const staff = [];
  for (const name of ['Ada', 'Grace']) {
    const address = wallet();
    const response = await t.request('POST', `/api/employers/${employerId}/team`, {
      token,
      body: { email: `${name.toLowerCase()}-${sub}@compliance.example`, full_name: `${name} ${sub}`, wallet_address: address },
    });
    expect(response.status).toBe(201);
    staff.push({ id: (await json<{ id: string }>(response)).id, wallet: address });
  }
  return { token, employerId, agentKey: (await json<{ agent_key: string }>(key)).agent_key, staff };
}

type CheckResult = {
  wallet_address: string;
  policy_id: number;
  authorized: boolean;
  risk_score: number;
  result: 'CLEAR' | 'BLOCKED';
  checked_at: string;
  reasons: { code: string; source: string; detail: string | null; risk_score: number }[];
};

const check = (body: unknown, headers: Record<string, string> = {}, pay = payCheck) => pay(CHECK, { method: 'POST', body, headers });
async function checked(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<CheckResult> {
  const response = await check(body, headers);
  expect(response.status, await response.clone().text()).toBe(200);
  return json<CheckResult>(response);
}

/** The ledger rows of a wallet, newest first. */
const eventsOf = (address: string) =>
  t.database.db.select().from(complianceEvents).where(eq(complianceEvents.walletAddress, address.toLowerCase())).orderBy(desc(complianceEvents.checkedAt));

/** The fee of the latest call with this Payment-Receipt was kept (settled) and answered `status`. */
async function expectFeeKept(response: Response, status: number, employerId: string | null = null) {
  expect(response.status).toBe(status);
  expect(response.headers.get('payment-receipt') ?? response.headers.get('payment-response')).not.toBeNull();
  const [payment] = await t.database.db
    .select()
    .from(payments)
    .where(eq(payments.requestId, response.headers.get('x-request-id')!))
    .limit(1);
  expect(payment).toMatchObject({ status: 'served', httpStatus: status, employerId });
}

const addToBlocklist = (tenant: Tenant, body: unknown, token = tenant.token) =>
  t.request('POST', `/api/employers/${tenant.employerId}/blocklist`, { token, body });

beforeAll(async () => {
  t = await startTestApp({ ADMIN_USER_IDS: 'compliance-admin' }, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  compliance = new ComplianceService({ database: t.database, employers: t.services.employers, tempo: t.chains!.tempo, serviceSlug: t.config.serviceSlug });
  await compliance.syncSanctionsList();
  acme = await createTenant('acme');
  rival = await createTenant('rival');
  [payCheck, payList, payMisc] = await Promise.all([railA(t, server.url, '20'), railA(t, server.url, '20'), railA(t, server.url, '20')]).then((payers) =>
    payers.map((p) => p.pay),
  );
});

afterAll(async () => {
  await server.close();
  await t.close();
});

// ---- POST /api/mpp/compliance/check ------------------------------------------------------------

describe('POST /api/mpp/compliance/check', () => {
  it('answers 402 without payment', async () => {
    const response = await fetch(`${server.url}${CHECK}`, { method: 'POST', body: JSON.stringify({ walletAddress: wallet() }), headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(402);
  });

  it('clears an ordinary wallet against the global policy and ledgers the check (rail A)', async () => {
    const address = wallet();
    const response = await check({ walletAddress: address, somethingElse: 'ignored' });
    await expectFeeKept(response, 200);
    const result = await json<CheckResult>(response);
    expect(result).toEqual({
      wallet_address: address.toLowerCase(),
      policy_id: 1,
      authorized: true,
      risk_score: 0,
      result: 'CLEAR',
      checked_at: expect.any(String),
      reasons: [],
    });
    const [event] = await eventsOf(address);
    expect(event).toMatchObject({ employerId: null, employeeId: null, result: 'CLEAR', eventType: 'compliance_check', policyId: 1n, authorized: true, riskScore: 0, reasons: [] });
    expect(event!.checkedAt.toISOString()).toBe(result.checked_at);
  });

  it('is paid with x402 on rail B too', async () => {
    const { pay } = await x402(t, server.url, 'B');
    const address = wallet();
    const response = await check({ walletAddress: address }, {}, pay);
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ wallet_address: address.toLowerCase(), result: 'CLEAR' });
    expect(response.headers.get('payment-response') ?? response.headers.get('x-payment-response')).not.toBeNull();
  });

  it('blocks a sanctioned wallet (any letter case) and still writes the ledger entry', async () => {
    const result = await checked({ walletAddress: SANCTIONED });
    // `authorized` answers "may it be paid": never true for a BLOCKED wallet (issue 26, item 7).
    expect(result).toMatchObject({ wallet_address: SANCTIONED.toLowerCase(), result: 'BLOCKED', risk_score: 100, authorized: false });
    expect(result.reasons).toEqual([{ code: 'SANCTIONED', source: BUILTIN_SANCTIONS_SOURCE, detail: SNAPSHOT.entries[0]!.reason, risk_score: 100 }]);
    const [event] = await eventsOf(SANCTIONED);
    expect(event).toMatchObject({ result: 'BLOCKED', riskScore: 100, eventType: 'compliance_check' });
    expect(event!.checkedAt.toISOString()).toBe(result.checked_at);
  });

  it("blocks a wallet on an employer's blocklist only in that employer's scope", async () => {
    const target = acme.staff[1]!;
    expect((await addToBlocklist(acme, { wallet_address: target.wallet, reason: 'Lost device' })).status).toBe(201);

    const scoped = await check({ walletAddress: target.wallet, employerId: acme.employerId }, asOwner(acme));
    await expectFeeKept(scoped, 200, acme.employerId);
    expect(await json(scoped)).toMatchObject({
      result: 'BLOCKED',
      authorized: false,
      risk_score: 90,
      reasons: [{ code: 'EMPLOYER_BLOCKLIST', source: 'employer', detail: 'Lost device', risk_score: 90 }],
    });
    const [event] = await eventsOf(target.wallet);
    expect(event).toMatchObject({ employerId: acme.employerId, employeeId: target.id, result: 'BLOCKED', reasons: [expect.objectContaining({ code: 'EMPLOYER_BLOCKLIST' })] });

    expect(await checked({ walletAddress: target.wallet, employerId: rival.employerId }, asAgent(rival))).toMatchObject({ result: 'CLEAR', risk_score: 0 });
    expect(await checked({ walletAddress: target.wallet })).toMatchObject({ result: 'CLEAR' });
    expect((await eventsOf(target.wallet))[0]).toMatchObject({ employerId: null, employeeId: null, result: 'CLEAR' });
  });

  it('checks TIP-403: a blacklist policy, the reject-all policy, and the employer default', async () => {
    const listed = wallet();
    const other = wallet();
    const { policyId } = await t.chains!.tempo.createPolicy('blacklist', [listed]);
    const blocked = await checked({ walletAddress: listed, policyId: Number(policyId) });
    expect(blocked).toMatchObject({ policy_id: Number(policyId), authorized: false, result: 'BLOCKED', risk_score: 70 });
    expect(blocked.reasons).toEqual([{ code: 'TIP403_UNAUTHORIZED', source: `tip403:${policyId}`, detail: expect.stringContaining(String(policyId)), risk_score: 70 }]);
    expect((await eventsOf(listed))[0]).toMatchObject({ policyId, authorized: false, result: 'BLOCKED' });
    expect(await checked({ walletAddress: other, policyId: Number(policyId) })).toMatchObject({ authorized: true, result: 'CLEAR' });
    expect(await checked({ walletAddress: other, policyId: 0 })).toMatchObject({ policy_id: 0, authorized: false, result: 'BLOCKED' });

    // Scoped without policyId: the employer's own policy; an explicit policyId wins over it.
    await t.database.pool.query('UPDATE employers SET tip403_policy_id = $1 WHERE id = $2', [policyId.toString(), rival.employerId]);
    try {
      expect(await checked({ walletAddress: listed, employerId: rival.employerId }, asOwner(rival))).toMatchObject({ policy_id: Number(policyId), authorized: false, result: 'BLOCKED' });
      expect(await checked({ walletAddress: listed, employerId: rival.employerId, policyId: 1 }, asOwner(rival))).toMatchObject({ policy_id: 1, result: 'CLEAR' });
    } finally {
      await t.database.pool.query('UPDATE employers SET tip403_policy_id = NULL WHERE id = $1', [rival.employerId]);
    }
    // Sanctions and TIP-403 together: the highest score wins, both reasons are listed.
    const both = await checked({ walletAddress: SANCTIONED, policyId: 0 });
    expect(both).toMatchObject({ risk_score: 100, result: 'BLOCKED' });
    expect(both.reasons.map((r) => r.code)).toEqual(['SANCTIONED', 'TIP403_UNAUTHORIZED']);
  });

  it('answers 422 POLICY_NOT_FOUND for an unknown policy, keeps the fee and writes no event', async () => {
    const address = wallet();
    const response = await check({ walletAddress: address, policyId: 987_654 });
    await expectFeeKept(response, 422);
    expect(await json(response)).toMatchObject({ code: 'POLICY_NOT_FOUND', field: 'policyId', policy_id: 987_654 });
    expect(await eventsOf(address)).toHaveLength(0);
  });

  it("answers another tenant's employer, a missing one and an anonymous caller alike (404, fee kept, no event)", async () => {
    const address = wallet();
    const foreign = await check({ walletAddress: address, employerId: rival.employerId }, asOwner(acme));
    await expectFeeKept(foreign, 404);
    const body = await json(foreign);
    expect(body).toMatchObject({ code: 'NOT_FOUND' });
    const viaKey = await check({ walletAddress: address, employerId: rival.employerId }, asAgent(acme));
    expect(viaKey.status).toBe(404);
    expect(await json(viaKey)).toEqual(body);
    const missing = await check({ walletAddress: address, employerId: randomUUID() }, asOwner(acme));
    expect(await json(missing)).toEqual(body);
    const anonymous = await check({ walletAddress: address, employerId: acme.employerId });
    expect(anonymous.status).toBe(404);
    expect(await json(anonymous)).toEqual(body);
    expect(await eventsOf(address)).toHaveLength(0);
    // A bad identity header is a 401 (after payment: kept).
    const badKey = await check({ walletAddress: address, employerId: acme.employerId }, { 'X-Agent-Key': 'sk_agent_nope' });
    await expectFeeKept(badKey, 401);
  });

  it.each([
    [{}, 'walletAddress'],
    [{ walletAddress: '0x1234' }, 'walletAddress'],
    [{ walletAddress: 42 }, 'walletAddress'],
    [{ walletAddress: `0x${'g'.repeat(40)}` }, 'walletAddress'],
    [{ walletAddress: wallet(), policyId: -1 }, 'policyId'],
    [{ walletAddress: wallet(), policyId: 1.5 }, 'policyId'],
    [{ walletAddress: wallet(), policyId: '1' }, 'policyId'],
    [{ walletAddress: wallet(), policyId: 2 ** 60 }, 'policyId'],
    [{ walletAddress: wallet(), employerId: 'acme' }, 'employerId'],
    [{ walletAddress: wallet(), employerId: 7 }, 'employerId'],
    ['{"walletAddress":', 'body'],
    ['[]', 'json'],
  ])('refuses %j with 400 naming %s (after payment: the fee is kept)', async (body, field) => {
    const response = await check(body, {}, payMisc);
    await expectFeeKept(response, 400);
    expect(await json(response)).toMatchObject({ field });
  });
});

// ---- GET /api/mpp/marketplace/compliance-list/{employerId} -------------------------------------

describe('GET /api/mpp/marketplace/compliance-list/{employerId}', () => {
  type List = { providerId: string; clearedWallets: number; list: { walletAddress: string; checkedAt: string; employeeId: string | null; eventType: string }[]; lastUpdated: string | null };
  const list = (tenant: Tenant, query = '', headers: Record<string, string> = asAgent(tenant)) => payList(LIST(tenant.employerId, query), { headers });

  it('answers 402 without payment', async () => {
    expect((await fetch(`${server.url}${LIST(acme.employerId)}`)).status).toBe(402);
  });

  it('lists wallets whose latest check is CLEAR; a wallet later BLOCKED or blocklisted disappears; tenants are isolated', async () => {
    const tenant = await createTenant('lister');
    const [ada, grace] = tenant.staff as [Tenant['staff'][0], Tenant['staff'][0]];
    const outsider = wallet();
    const empty = await list(tenant);
    await expectFeeKept(empty, 200, tenant.employerId);
    expect(await json(empty)).toEqual({ providerId: 'svc-compliance', clearedWallets: 0, list: [], lastUpdated: null });

    const first = await checked({ walletAddress: ada.wallet, employerId: tenant.employerId }, asAgent(tenant));
    await checked({ walletAddress: grace.wallet, employerId: tenant.employerId }, asAgent(tenant));
    const last = await checked({ walletAddress: outsider, employerId: tenant.employerId }, asOwner(tenant));
    // Checks outside the tenant's scope never show in its list.
    await checked({ walletAddress: wallet(), employerId: rival.employerId }, asOwner(rival));
    await checked({ walletAddress: wallet() });

    const all = await json<List>(await list(tenant));
    expect(all.clearedWallets).toBe(3);
    expect(all.lastUpdated).toBe(last.checked_at);
    expect(all.list.map((e) => e.walletAddress)).toEqual([outsider.toLowerCase(), grace.wallet.toLowerCase(), ada.wallet.toLowerCase()]);
    expect(all.list[2]).toEqual({ walletAddress: ada.wallet.toLowerCase(), checkedAt: first.checked_at, employeeId: ada.id, eventType: 'compliance_check' });
    expect(all.list[0]!.employeeId).toBeNull();

    const page = await json<List>(await list(tenant, '?limit=1'));
    expect(page).toMatchObject({ clearedWallets: 3, lastUpdated: last.checked_at });
    expect(page.list.map((e) => e.walletAddress)).toEqual([outsider.toLowerCase()]);

    // Grace's wallet is checked again and BLOCKED by a policy: her latest event decides.
    const { policyId } = await t.chains!.tempo.createPolicy('blacklist', [grace.wallet]);
    await checked({ walletAddress: grace.wallet, employerId: tenant.employerId, policyId: Number(policyId) }, asAgent(tenant));
    // Ada's wallet goes on the blocklist without a new check: the list drops it at once.
    expect((await addToBlocklist(tenant, { wallet_address: ada.wallet })).status).toBe(201);
    const after = await json<List>(await list(tenant, '', asOwner(tenant)));
    expect(after).toMatchObject({ clearedWallets: 1, lastUpdated: last.checked_at });
    expect(after.list.map((e) => e.walletAddress)).toEqual([outsider.toLowerCase()]);

    // The rival's list knows nothing of this tenant's wallets.
    const rivalList = await json<List>(await list(rival));
    expect(rivalList.list.map((e) => e.walletAddress)).not.toContain(outsider.toLowerCase());
  });

  it("answers another tenant's employer, a missing one and an anonymous caller alike (404, fee kept)", async () => {
    const foreign = await payList(LIST(acme.employerId), { headers: asOwner(rival) });
    await expectFeeKept(foreign, 404);
    const body = await json(foreign);
    expect(body).toMatchObject({ code: 'NOT_FOUND' });
    expect(await json(await payList(LIST(acme.employerId), { headers: asAgent(rival) }))).toEqual(body);
    expect(await json(await payList(LIST(randomUUID()), { headers: asOwner(rival) }))).toEqual(body);
    expect(await json(await payList(LIST(acme.employerId)))).toEqual(body);
  });

  it.each([['?limit=0'], ['?limit=501'], ['?limit=abc'], ['?limit=2.5'], ['?limit=-1'], ['?limit=']])('refuses %s with 400 naming limit', async (query) => {
    const response = await payMisc(LIST(acme.employerId, query), { headers: asAgent(acme) });
    await expectFeeKept(response, 400);
    expect(await json(response)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'limit' });
  });

  it('accepts limit 1 and 500, and refuses a malformed employer id with 400', async () => {
    expect((await payMisc(LIST(acme.employerId, '?limit=500'), { headers: asAgent(acme) })).status).toBe(200);
    expect((await payMisc(LIST(acme.employerId, '?limit=1'), { headers: asAgent(acme) })).status).toBe(200);
    const bad = await payMisc('/api/mpp/marketplace/compliance-list/not-a-uuid', { headers: asAgent(acme) });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ field: 'employerId' });
  });
});

// ---- owner routes -------------------------------------------------------------------------------

describe('GET /api/employers/{id}/compliance', () => {
  it('summarises the employees, their latest checks, the blocklist and the audit log', async () => {
    const tenant = await createTenant('overview');
    const [ada, grace] = tenant.staff as [Tenant['staff'][0], Tenant['staff'][0]];
    await checked({ walletAddress: ada.wallet, employerId: tenant.employerId }, asAgent(tenant));
    expect((await addToBlocklist(tenant, { wallet_address: grace.wallet, reason: 'Fraud report' })).status).toBe(201);
    await checked({ walletAddress: grace.wallet, employerId: tenant.employerId }, asAgent(tenant));
    expect((await addToBlocklist(tenant, { wallet_address: wallet() })).status).toBe(201);
    // An employee without any check, and one without a wallet.
    for (const [name, extra] of [['Alan', { wallet_address: wallet() }], ['Edsger', {}]] as const) {
      const added = await t.request('POST', `/api/employers/${tenant.employerId}/team`, {
        token: tenant.token,
        body: { email: `${name.toLowerCase()}@overview.example`, full_name: name, ...extra },
      });
      expect(added.status).toBe(201);
    }

    const response = await t.request('GET', `/api/employers/${tenant.employerId}/compliance`, { token: tenant.token });
    expect(response.status).toBe(200);
    const overview = await json<{
      employer_id: string;
      summary: Record<string, number>;
      employees: { id: string; full_name: string; wallet_address: string | null; latest_result: string | null; latest_checked_at: string | null; manual_review_status: string; blocked_now: string | null }[];
      audit_log: { action: string; actor_kind: string; actor_user_id: string | null; target_type: string | null; details: Record<string, unknown> }[];
    }>(response);
    expect(overview.employer_id).toBe(tenant.employerId);
    expect(overview.summary).toEqual({ employees: 4, checked: 2, clear: 1, blocked: 1, unchecked: 2, blocklist_entries: 2 });
    expect(overview.employees).toHaveLength(4);
    expect(overview.employees[0]).toMatchObject({ id: ada.id, wallet_address: ada.wallet, latest_result: 'CLEAR', latest_checked_at: expect.any(String), manual_review_status: 'none', blocked_now: null });
    expect(overview.employees[1]).toMatchObject({ id: grace.id, latest_result: 'BLOCKED', blocked_now: 'employer blocklist: Fraud report' });
    expect(overview.employees[2]).toMatchObject({ full_name: 'Alan', latest_result: null, latest_checked_at: null });
    expect(overview.employees[3]).toMatchObject({ full_name: 'Edsger', wallet_address: null, latest_result: null });
    expect(overview.audit_log.length).toBeLessThanOrEqual(50);
    expect(overview.audit_log[0]).toMatchObject({ action: 'employee.created', actor_kind: 'user' });
    expect(overview.audit_log.filter((a) => a.action === 'blocklist.added')).toHaveLength(2);
    expect(overview.audit_log.find((a) => a.action === 'blocklist.added' && a.details.wallet_address === grace.wallet.toLowerCase())).toMatchObject({
      actor_user_id: expect.any(String),
      target_type: 'wallet_blocklist',
      details: { reason: 'Fraud report' },
    });
  });

  it("answers another owner's employer and a missing one alike, and refuses bad ids and missing tokens", async () => {
    const foreign = await t.request('GET', `/api/employers/${acme.employerId}/compliance`, { token: rival.token });
    const missing = await t.request('GET', `/api/employers/${randomUUID()}/compliance`, { token: rival.token });
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toEqual(await json(missing));
    const bad = await t.request('GET', '/api/employers/nope/compliance', { token: rival.token });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ field: 'id' });
    expect((await t.request('GET', `/api/employers/${acme.employerId}/compliance`)).status).toBe(401);
  });
});

describe('/api/employers/{id}/blocklist', () => {
  type Entry = { id: string; employer_id: string; wallet_address: string; reason: string | null; source: string; created_at: string; created?: boolean };

  it('creates or returns an entry, lists, and deletes it, auditing each change', async () => {
    const tenant = await createTenant('blocker');
    const address = wallet();
    const created = await addToBlocklist(tenant, { wallet_address: address, reason: 'Chargeback' });
    expect(created.status).toBe(201);
    const entry = await json<Entry>(created);
    expect(entry).toMatchObject({ employer_id: tenant.employerId, wallet_address: address.toLowerCase(), reason: 'Chargeback', source: 'employer', created: true });

    const again = await addToBlocklist(tenant, { wallet_address: address.toLowerCase(), reason: 'Different reason' });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ id: entry.id, reason: 'Chargeback', created: false });

    const listed = await t.request('GET', `/api/employers/${tenant.employerId}/blocklist`, { token: tenant.token });
    expect(listed.status).toBe(200);
    const { entries } = await json<{ entries: Entry[] }>(listed);
    expect(entries.map((e) => e.id)).toEqual([entry.id]);

    // Another owner can neither see nor delete it.
    expect((await t.request('GET', `/api/employers/${tenant.employerId}/blocklist`, { token: rival.token })).status).toBe(404);
    expect((await t.request('DELETE', `/api/employers/${tenant.employerId}/blocklist/${entry.id}`, { token: rival.token })).status).toBe(404);
    const viaOwnEmployer = await t.request('DELETE', `/api/employers/${rival.employerId}/blocklist/${entry.id}`, { token: rival.token });
    expect(viaOwnEmployer.status).toBe(404);
    expect(await json(viaOwnEmployer)).toMatchObject({ code: 'NOT_FOUND' });

    const deleted = await t.request('DELETE', `/api/employers/${tenant.employerId}/blocklist/${entry.id}`, { token: tenant.token });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await t.request('DELETE', `/api/employers/${tenant.employerId}/blocklist/${entry.id}`, { token: tenant.token })).status).toBe(404);
    expect(await json(await t.request('GET', `/api/employers/${tenant.employerId}/blocklist`, { token: tenant.token }))).toEqual({ employer_id: tenant.employerId, entries: [] });

    const audit = await t.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.employerId, tenant.employerId), eq(auditLog.targetId, entry.id)))
      .orderBy(auditLog.createdAt);
    expect(audit.map((a) => a.action)).toEqual(['blocklist.added', 'blocklist.removed']);
  });

  it('honours Idempotency-Key on POST', async () => {
    const tenant = acme;
    const body = { wallet_address: wallet() };
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await t.request('POST', `/api/employers/${tenant.employerId}/blocklist`, { token: tenant.token, body, headers });
    const second = await t.request('POST', `/api/employers/${tenant.employerId}/blocklist`, { token: tenant.token, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it.each([
    [{}, 'wallet_address'],
    [{ wallet_address: 'nope' }, 'wallet_address'],
    [{ wallet_address: `0x${'a'.repeat(40)}`, reason: '' }, 'reason'],
    [{ wallet_address: `0x${'a'.repeat(40)}`, reason: 'x'.repeat(501) }, 'reason'],
    [{ wallet_address: `0x${'a'.repeat(40)}`, reason: 'line\nbreak' }, 'reason'],
    [{ wallet_address: `0x${'a'.repeat(40)}`, reason: 5 }, 'reason'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const response = await addToBlocklist(acme, body);
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('refuses malformed ids with 400 and missing tokens with 401', async () => {
    const bad = await t.request('DELETE', `/api/employers/${acme.employerId}/blocklist/nope`, { token: acme.token });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ field: 'entryId' });
    expect((await t.request('GET', '/api/employers/nope/blocklist', { token: acme.token })).status).toBe(400);
    expect((await t.request('GET', `/api/employers/${acme.employerId}/blocklist`)).status).toBe(401);
    expect((await t.request('POST', `/api/employers/${acme.employerId}/blocklist`, { body: { wallet_address: wallet() } })).status).toBe(401);
  });
});

// ---- service methods ----------------------------------------------------------------------------

describe('ComplianceService.syncSanctionsList', () => {
  const builtinRows = () =>
    t.database.db
      .select({ walletAddress: walletBlocklist.walletAddress, reason: walletBlocklist.reason })
      .from(walletBlocklist)
      .where(and(isNull(walletBlocklist.employerId), eq(walletBlocklist.source, BUILTIN_SANCTIONS_SOURCE)))
      .orderBy(walletBlocklist.walletAddress);
  const expected = () =>
    SNAPSHOT.entries.map((e) => ({ walletAddress: e.address.toLowerCase(), reason: e.reason })).sort((a, b) => a.walletAddress.localeCompare(b.walletAddress));

  it('mirrors the file, idempotently, leaving other lists alone', async () => {
    expect(await builtinRows()).toEqual(expected());
    expect(await compliance.syncSanctionsList()).toMatchObject({ entries: SNAPSHOT.entries.length, inserted: 0, updated: 0, removed: 0 });
    expect(await builtinRows()).toEqual(expected());

    // Another global source and employer rows survive; a changed file converges in one run.
    const manual = wallet().toLowerCase();
    await t.database.db.insert(walletBlocklist).values({ employerId: null, walletAddress: manual, source: 'sanctions:manual', reason: 'operator' });
    const [kept, changed, ...rest] = SNAPSHOT.entries;
    const added = wallet();
    const edited = { ...SNAPSHOT, entries: [kept!, { ...changed!, reason: 'new reason' }, { address: added, reason: 'added' }] };
    expect(await compliance.syncSanctionsList(edited)).toMatchObject({ inserted: 1, updated: 1, removed: rest.length });
    expect(await compliance.syncSanctionsList(edited)).toMatchObject({ inserted: 0, updated: 0, removed: 0 });
    expect((await builtinRows()).map((r) => r.walletAddress).sort()).toEqual([kept!.address, changed!.address, added].map((a) => a.toLowerCase()).sort());

    expect(await compliance.syncSanctionsList()).toMatchObject({ inserted: rest.length, updated: 1, removed: 1 });
    expect(await builtinRows()).toEqual(expected());
    const [{ n }] = (await t.database.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM wallet_blocklist WHERE wallet_address = ${manual}`)).rows as [{ n: number }];
    expect(n).toBe(1);
    expect((await builtinRows()).length).toBe(SNAPSHOT.entries.length);
  });
});

describe('the sanctions list: the OFAC snapshot, and refreshes from the official format', () => {
  /** The snapshot's rows as published: asset and mixed-case address. */
  const csvRows = () =>
    readFileSync(new URL('./ofac-sdn-evm-addresses-2024-09-27.csv', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((row) => ({ asset: row.split(',')[0]!, address: row.split(',')[1]!.trim() }));
  const csvAddresses = () => csvRows().map((row) => row.address);

  /** A file in the shape of OFAC's sdn_advanced.xml, carrying `listed` as ETH and USDT addresses. */
  const sdnAdvanced = (listed: string[], date = { year: 2026, month: 11, day: 20 }) => `<?xml version="1.0" encoding="utf-8"?>
<Sanctions xmlns="https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ADVANCED_XML">
  <DateOfIssue><Year>${date.year}</Year><Month>${date.month}</Month><Day>${date.day}</Day></DateOfIssue>
  <ReferenceValueSets>
    <FeatureTypeValues>
      <FeatureType ID="344" FeatureTypeGroupID="26">Digital Currency Address - XBT</FeatureType>
      <FeatureType ID="345" FeatureTypeGroupID="26">Digital Currency Address - ETH</FeatureType>
      <FeatureType ID="887" FeatureTypeGroupID="26">Digital Currency Address - USDT</FeatureType>
      <FeatureType ID="25">Vessel Call Sign</FeatureType>
    </FeatureTypeValues>
  </ReferenceValueSets>
  <DistinctParties>
    <DistinctParty FixedRef="1"><Profile ID="1">
      <Feature ID="1" FeatureTypeID="344"><FeatureVersion ID="1"><VersionDetail DetailTypeID="1432">1AjZPMsnmpdK2Rv9KQNfMurTXinscVro9V</VersionDetail></FeatureVersion></Feature>
      <Feature ID="2" FeatureTypeID="25"><FeatureVersion ID="2"><VersionDetail DetailTypeID="1432">0x0000000000000000000000000000000000000025</VersionDetail></FeatureVersion></Feature>
${listed.map((address, i) => `      <Feature ID="${10 + i}" FeatureTypeID="${i % 2 ? 887 : 345}"><FeatureVersion ID="${10 + i}"><VersionDetail DetailTypeID="1432">${address}</VersionDetail></FeatureVersion></Feature>`).join('\n')}
    </Profile></DistinctParty>
  </DistinctParties>
</Sanctions>`;

  let file = '';
  let served: LoopbackServer;
  beforeAll(async () => {
    served = await serveOnLoopback(async () => new Response(file, { headers: { 'content-type': 'application/xml' } }));
  });
  afterAll(async () => {
    await served.close();
    await compliance.syncSanctionsList(); // the snapshot again, for the tests after
  });

  it('the snapshot blocks every one of its 156 distinct EVM addresses, whatever asset listed it', async () => {
    const addresses = csvAddresses();
    expect(addresses).toHaveLength(165);
    expect(new Set(addresses.map((a) => a.toLowerCase())).size).toBe(156);
    const blocked = await compliance.blockedWallets(acme.employerId, addresses);
    expect(blocked.size).toBe(156);
    expect([...blocked.values()].every((why) => why.startsWith('sanctioned: OFAC SDN: Digital Currency Address - '))).toBe(true);
    const usdt = csvRows().find((row) => row.asset === 'USDT')!.address;
    expect((await compliance.check({ walletAddress: usdt })).result).toBe('BLOCKED');
    expect(await compliance.sanctionsListState()).toMatchObject({ listDate: '2024-09-27', entries: 156, lastError: null });
    // The owner's compliance page says what the checks screen against.
    const page = await json<{ sanctions_list: unknown }>(await t.request('GET', `/api/employers/${acme.employerId}/compliance`, { token: acme.token }));
    expect(page.sanctions_list).toMatchObject({ list_date: '2024-09-27', entries: 156, source: expect.stringContaining('snapshot') });
  });

  it('a refresh blocks a newly listed address at once; a malformed or truncated file keeps the list in force', async () => {
    const newlyListed = wallet();
    const listed = [...new Set(csvAddresses().map((a) => a.toLowerCase()))];
    expect((await compliance.check({ walletAddress: newlyListed })).result).toBe('CLEAR');
    file = sdnAdvanced([...listed, newlyListed]);
    const refreshed = await compliance.refreshSanctionsList(served.url);
    expect(refreshed).toMatchObject({ ok: true, entries: 157, listDate: '2026-11-20', inserted: 1, removed: 0 });
    expect((await compliance.check({ walletAddress: newlyListed })).result).toBe('BLOCKED');
    // Listed under USDT: screened all the same; another feature type's value and a bitcoin address are not.
    expect(await compliance.blockedWallets(acme.employerId, [newlyListed, '0x0000000000000000000000000000000000000025'])).toEqual(
      new Map([[newlyListed.toLowerCase(), expect.stringMatching(/^sanctioned: OFAC SDN: Digital Currency Address - (ETH|USDT)$/)]]),
    );

    const overview = async () => (await json<{ sanctions_list: Record<string, unknown> }>(await t.request('GET', '/api/admin?scope=overview', { token: await t.token('compliance-admin', 'admin@platform.example') }))).sanctions_list;
    expect(await overview()).toMatchObject({ source: served.url, list_date: '2026-11-20', entries: 157, last_error: null });

    for (const [broken, why] of [
      [sdnAdvanced([...listed, newlyListed]).slice(0, 2_000), /not well-formed XML/],
      ['<html><body>Service unavailable</body></html>', /not the SDN advanced export/],
      [sdnAdvanced(listed.slice(0, 40)), /refused as truncated/],
    ] as const) {
      file = broken;
      const outcome = await compliance.refreshSanctionsList(served.url);
      expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(why) });
      expect((await compliance.check({ walletAddress: newlyListed })).result).toBe('BLOCKED');
      expect(await overview()).toMatchObject({ entries: 157, list_date: '2026-11-20', last_error: expect.stringMatching(why) });
    }
    const unreachable = await compliance.refreshSanctionsList('http://127.0.0.1:9/sdn_advanced.xml');
    expect(unreachable.ok).toBe(false);
    expect((await compliance.sanctionsListState())?.entries).toBe(157);
    const metrics = await (await t.request('GET', '/metrics')).text();
    expect(metrics).toMatch(/^sanctions_list_sync_failing 1$/m);
    expect(metrics).toMatch(/^sanctions_list_entries 157$/m);

    // At the next start the refreshed list stays in force: the older snapshot does not replace it.
    expect(await compliance.loadSanctionsSnapshot()).toMatchObject({ kept: true, entries: 157 });
    expect((await compliance.check({ walletAddress: newlyListed })).result).toBe('BLOCKED');
  });
});

describe('ComplianceService.blockedWallets', () => {
  it("returns the sanctioned and the employer's blocklisted wallets among many, lower-cased, in one call", async () => {
    const blocked = wallet();
    const onRivalList = wallet();
    expect((await addToBlocklist(acme, { wallet_address: blocked, reason: 'Chargeback' })).status).toBe(201);
    expect((await addToBlocklist(rival, { wallet_address: onRivalList })).status).toBe(201);
    const clean = Array.from({ length: 50 }, wallet);
    const result = await compliance.blockedWallets(acme.employerId, [...clean, blocked, SANCTIONED, SANCTIONED.toLowerCase(), onRivalList]);
    expect(result).toEqual(
      new Map([
        [blocked.toLowerCase(), 'on the employer blocklist: Chargeback'],
        [SANCTIONED.toLowerCase(), `sanctioned: ${SNAPSHOT.entries[0]!.reason}`],
      ]),
    );
    expect(await compliance.blockedWallets(acme.employerId, [])).toEqual(new Map());
  });
});

describe('OpenAPI', () => {
  it('describes every compliance route, with the price table and the schemas that validate it', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as Record<string, any>;
    const validation = await new Validator().validate(document as never);
    expect(validation.errors ?? []).toEqual([]);
    const check = document.paths[CHECK].post;
    expect(check['x-payment']).toMatchObject({ price: '0.050000', rails: ['A', 'B', 'C'] });
    expect(Object.keys(check.responses)).toEqual(expect.arrayContaining(['200', '400', '402', '404', '422']));
    expect(document.components.schemas.ComplianceCheckRequest.required).toEqual(['walletAddress']);
    const list = document.paths['/api/mpp/marketplace/compliance-list/{employerId}'].get;
    expect(list['x-payment']).toMatchObject({ price: '0.500000', rails: ['A'] });
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['employerId', 'limit', 'x-agent-key', 'x-identity-token']);
    expect(document.components.schemas.ComplianceList.required).toEqual(expect.arrayContaining(['providerId', 'clearedWallets', 'list']));
    expect(document.paths['/api/employers/{id}/compliance'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(document.paths['/api/employers/{id}/blocklist'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(document.paths['/api/employers/{id}/blocklist/{entryId}'].delete.responses)).toEqual(expect.arrayContaining(['204', '404']));
  });
});
