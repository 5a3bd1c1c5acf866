import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { bankAccounts, offrampTransfers } from '../bridge/tables.js';
import { paymentItems, payrollRuns } from '../payroll/tables.js';
import { virtualAddressInflows } from '../virtual-addresses/tables.js';
import { advances } from '../wages/tables.js';

/**
 * GET /api/portal/activity over rows written straight into each source table: one merged feed,
 * newest first, keyset-paged without gaps or repeats (ties on time included), own rows only.
 */
let t: TestApp;
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

interface Card {
  type: string;
  id: string;
  amount: string;
  amount_base_units: string;
  occurred_at: string;
  details: Record<string, unknown>;
}
interface Page {
  activity: Card[];
  next_cursor: string | null;
}

let employerA: string;
let employerB: string;
let ada: { a: string; b: string; token: string };
let bob: { id: string; token: string };
const WALLET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const hash = () => `0x${randomBytes(32).toString('hex')}`;
/** A timestamp with microseconds, as PostgreSQL keeps them. */
const at = (iso: string) => sql`${iso}::timestamptz`;

async function employer(name: string) {
  const token = await t.token(`activity-owner-${randomUUID()}`, `owner-${randomUUID().slice(0, 6)}@activity.example`);
  const id = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name } }))).id;
  return { id, token };
}

async function hire(owner: { id: string; token: string }, email: string, name: string) {
  const response = await t.request('POST', `/api/employers/${owner.id}/team`, { token: owner.token, body: { email, full_name: name, wallet_address: WALLET } });
  expect(response.status).toBe(201);
  return (await json<{ id: string }>(response)).id;
}

async function payment(employerId: string, employeeId: string, amount: bigint, status: 'paid' | 'pending', finalizedAt: string | null, createdAt: string) {
  const [run] = await t.database.db
    .insert(payrollRuns)
    .values({ employerId, status: status === 'paid' ? 'confirmed' : 'draft', totalAmount: amount, recipientCount: 1 })
    .returning();
  const [item] = await t.database.db
    .insert(paymentItems)
    .values({ runId: run!.id, employerId, employeeId, walletAddress: WALLET, amount, status, txHash: status === 'paid' ? hash() : null, finalizedAt: finalizedAt ? at(finalizedAt) : null, createdAt: at(createdAt) } as never)
    .returning();
  return item!.id;
}

async function inflow(employerId: string, employeeId: string | null, amount: bigint, blockTimestamp: string, logIndex = 1) {
  const txHash = hash();
  await t.database.db.insert(virtualAddressInflows).values({
    txHash,
    logIndex,
    employerId,
    employeeId,
    tokenAddress: WALLET,
    virtualAddress: '0x0000ABCDfdfdFDFDfdfdfdfdFDFD7a0667ea99C2',
    userTag: '0x7a0667ea99c2',
    amount,
    blockNumber: 42n,
    senderAddress: WALLET,
    blockTimestamp: at(blockTimestamp),
  } as never);
  return `${txHash}:${logIndex}`;
}

const feed = async (token: string, query = '') => {
  const response = await t.request('GET', `/api/portal/activity${query}`, { token });
  expect(response.status).toBe(200);
  return json<Page>(response);
};

const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  const a = await employer('Activity A');
  const b = await employer('Activity B');
  employerA = a.id;
  employerB = b.id;
  const adaEmail = `ada-${randomUUID().slice(0, 6)}@activity.example`;
  ada = { a: await hire(a, adaEmail, 'Ada'), b: await hire(b, adaEmail, 'Ada'), token: '' };
  ada.token = await t.token(`activity-ada-${randomUUID()}`, adaEmail);
  const bobEmail = `bob-${randomUUID().slice(0, 6)}@activity.example`;
  bob = { id: await hire(a, bobEmail, 'Bob'), token: '' };
  bob.token = await t.token(`activity-bob-${randomUUID()}`, bobEmail);

  // Ada at employer A: one of each kind, four of them at the same instant (ties), plus a draft
  // payment and a pending advance that are no activity yet.
  const tie = '2026-03-01T12:00:00.123456Z';
  ids.payment = await payment(employerA, ada.a, 1_000_000_000n, 'paid', tie, '2026-02-20T00:00:00Z');
  ids.draft = await payment(employerA, ada.a, 5_000_000n, 'pending', null, '2026-03-05T00:00:00Z');
  const [advance] = await t.database.db
    .insert(advances)
    .values({ employeeId: ada.a, amount: 50_000_000n, status: 'claimed', txHash: hash(), claimedAt: at(tie) } as never)
    .returning();
  ids.advance = advance!.id;
  await t.database.db.insert(advances).values({ employeeId: ada.b, status: 'pending' });
  const [account] = await t.database.db.insert(bankAccounts).values({ employeeId: ada.a, bridgeAccountId: 'ext_1', destinationType: 'ach' }).returning();
  const [offramp] = await t.database.db
    .insert(offrampTransfers)
    .values({ employeeId: ada.a, employerId: employerA, bankAccountId: account!.id, amount: 200_000_000n, destinationType: 'ach', status: 'awaiting_funds', createdAt: at(tie) } as never)
    .returning();
  ids.offramp = offramp!.id;
  ids.inflowTie1 = await inflow(employerA, ada.a, 12_500_000n, tie, 1);
  ids.inflowTie2 = await inflow(employerA, ada.a, 7_000_000n, '2026-03-01T12:00:00.123999Z', 2);
  ids.inflowOld = await inflow(employerA, ada.a, 1_000_000n, '2026-01-01T00:00:00Z');
  // Ada at employer B, and rows that are not Ada's.
  ids.inflowB = await inflow(employerB, ada.b, 3_000_000n, '2026-04-01T00:00:00Z');
  ids.bob = await inflow(employerA, bob.id, 9_000_000n, '2026-03-02T00:00:00Z');
  ids.unattributed = await inflow(employerA, null, 4_000_000n, '2026-03-03T00:00:00Z');
});

afterAll(async () => {
  await t?.close();
});

describe('GET /api/portal/activity', () => {
  it('merges the four sources newest first, across every employer the employee works for', async () => {
    const page = await feed(ada.token);
    expect(page.next_cursor).toBeNull();
    expect(page.activity.map((card) => [card.type, card.id])).toEqual([
      ['virtual_inflow', ids.inflowB],
      // Same millisecond: by type, then id, descending.
      ...[ids.inflowTie1!, ids.inflowTie2!].sort().reverse().map((id) => ['virtual_inflow', id]),
      ['payroll_payment', ids.payment],
      ['offramp', ids.offramp],
      ['advance', ids.advance],
      ['virtual_inflow', ids.inflowOld],
    ]);
    const byId = Object.fromEntries(page.activity.map((card) => [card.id, card]));
    expect(byId[ids.payment!]).toMatchObject({
      amount: '1000.000000',
      amount_base_units: '1000000000',
      occurred_at: '2026-03-01T12:00:00.123Z',
      details: { direction: 'in', employee_id: ada.a, employer_id: employerA, status: 'paid', chain: 'tempo' },
    });
    expect(byId[ids.offramp!]).toMatchObject({ amount: '200.000000', details: { direction: 'out', status: 'awaiting_funds', destination_type: 'ach' } });
    expect(byId[ids.advance!]).toMatchObject({ amount: '50.000000', details: { direction: 'in', status: 'claimed' } });
    expect(byId[ids.inflowB!]).toMatchObject({
      amount: '3.000000',
      occurred_at: '2026-04-01T00:00:00.000Z',
      details: { direction: 'in', employee_id: ada.b, employer_id: employerB, sender_address: WALLET, log_index: 1, block_number: '42' },
    });
  });

  it('pages with `before` without gaps or repeats, ties included', async () => {
    const all = (await feed(ada.token)).activity.map((card) => card.id);
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await feed(ada.token, `?limit=${limit}${cursor ? `&before=${cursor}` : ''}`);
        expect(page.activity.length).toBeLessThanOrEqual(limit);
        seen.push(...page.activity.map((card) => card.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(all);
    }
  });

  it('filters to one of the caller’s employee records with employeeId, and 404s on anyone else’s', async () => {
    const onlyB = await feed(ada.token, `?employeeId=${ada.b}`);
    expect(onlyB.activity.map((card) => card.id)).toEqual([ids.inflowB]);
    expect((await t.request('GET', `/api/portal/activity?employeeId=${bob.id}`, { token: ada.token })).status).toBe(404);
  });

  it("shows another employee only their own cards; unattributed inflows show to no one", async () => {
    const page = await feed(bob.token);
    expect(page.activity.map((card) => card.id)).toEqual([ids.bob]);
    const adaIds = (await feed(ada.token)).activity.map((card) => card.id);
    expect(adaIds).not.toContain(ids.bob);
    expect(adaIds).not.toContain(ids.unattributed);
  });

  it('answers 401 without a bearer, 404 to a user who is no employee, 400 on bad paging', async () => {
    expect((await t.request('GET', '/api/portal/activity')).status).toBe(401);
    const stranger = await t.token(`activity-stranger-${randomUUID()}`, 'stranger@activity.example');
    expect((await t.request('GET', '/api/portal/activity', { token: stranger })).status).toBe(404);
    for (const query of ['?limit=0', '?limit=201', '?before=not-a-cursor', `?before=${Buffer.from('1|payday|x').toString('base64url')}`]) {
      const response = await t.request('GET', `/api/portal/activity${query}`, { token: ada.token });
      expect(response.status, query).toBe(400);
    }
    expect((await feed(ada.token, '?limit=200')).activity).toHaveLength(7);
  });

  it('is in the OpenAPI document with its query and card schema', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { parameters: { name: string }[]; security: unknown[]; responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const route = document.paths['/api/portal/activity']!.get!;
    expect(route.parameters.map((p) => p.name).sort()).toEqual(['before', 'employeeId', 'limit']);
    expect(route.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(route.responses).sort()).toEqual(['200', '400', '401', '404']);
    expect(Object.keys(document.components.schemas.ActivityCard!.properties).sort()).toEqual(['amount', 'amount_base_units', 'details', 'id', 'occurred_at', 'type']);
  });
});
