import { randomBytes, randomUUID } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { mppSessions } from '../../payments/tables.js';
import type { PaidRoute } from '../../payments/prices.js';

/**
 * The employer's receipt feed: paid calls a handler attributed to the employer, after payment.
 * The route behind the real gate takes the employer from its path, as a feature would after
 * checking the caller may act for it.
 */
const ROUTE: PaidRoute = { method: 'GET', path: '/test/for/{employerId}/{outcome}', price: 20_000n, rails: ['A', 'B', 'C'], unit: 'charge', card: false, effect: 'reads', summary: 'test' };

let t: TestApp;
let ownerA: string;
let ownerB: string;
let employerA: string;
let employerB: string;
let payer: PrivateKeyAccount;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  t.app.get('/test/for/:employerId/:outcome', t.payments!.gate(ROUTE), (c) => {
    c.var.payment.attribute(c.req.param('employerId'));
    return c.req.param('outcome') === 'fail' ? c.json({ error: 'broken', code: 'INTERNAL_ERROR' }, 500) : c.json({ ok: true }, 200);
  });
  ownerA = await t.token('receipts-owner-a');
  ownerB = await t.token('receipts-owner-b');
  const create = async (token: string) => ((await (await t.request('POST', '/api/employers', { token, body: { name: 'Co' } })).json()) as { id: string }).id;
  employerA = await create(ownerA);
  employerB = await create(ownerB);
  payer = privateKeyToAccount(generatePrivateKey());
  expect((await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:8453', address: payer.address, amount: '5' } })).status).toBe(200);
});

afterAll(async () => {
  await t.close();
});

/** Pays `path` on rail B with a fresh EIP-3009 authorization. */
async function pay(path: string): Promise<number> {
  const required = decodePaymentRequiredHeader((await t.request('GET', path)).headers.get('PAYMENT-REQUIRED')!);
  const requirement = required.accepts.find((r) => r.network === 'eip155:8453') as PaymentRequirements;
  const { payload } = await new ExactEvmScheme(payer).createPaymentPayload(2, requirement);
  const signature = Buffer.from(JSON.stringify({ x402Version: 2, accepted: requirement, payload })).toString('base64');
  return (await t.request('GET', path, { headers: { 'PAYMENT-SIGNATURE': signature } })).status;
}

interface Feed {
  employer_id: string;
  totals: { rail: string; count: number; amount_usd: string }[];
  receipts: { route: string; rail: string; amount_usd: string; payer: string; reference: string; status: string }[];
  page: number;
  limit: number;
  total: number;
}
const feed = async (employerId: string, token: string, query = '') => t.request('GET', `/api/employers/${employerId}/mpp-receipts${query}`, { token });

describe('GET /api/employers/{id}/mpp-receipts', () => {
  it("lists the settled payments made on the employer's behalf, newest first, with totals per rail", async () => {
    expect(await pay(`/test/for/${employerA}/ok`)).toBe(200);
    expect(await pay(`/test/for/${employerA}/ok`)).toBe(200);
    expect(await pay(`/test/for/${employerB}/ok`)).toBe(200);
    // Not charged, so no receipt.
    expect(await pay(`/test/for/${employerA}/fail`)).toBe(500);

    const response = await feed(employerA, ownerA);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Feed;
    expect(body).toMatchObject({ employer_id: employerA, page: 1, limit: 25, total: 2, totals: [{ rail: 'B', count: 2, amount_usd: '0.040000' }] });
    expect(body.receipts).toHaveLength(2);
    for (const receipt of body.receipts) {
      expect(receipt).toMatchObject({ route: 'GET /test/for/{employerId}/{outcome}', rail: 'B', amount_usd: '0.020000', status: 'settled' });
      expect(receipt.payer.toLowerCase()).toBe(payer.address.toLowerCase());
      expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/);
    }

    const paged = (await (await feed(employerA, ownerA, '?limit=1&page=2')).json()) as Feed;
    expect(paged).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(paged.receipts).toHaveLength(1);
    expect(paged.receipts[0]!.reference).toBe(body.receipts[1]!.reference);

    const other = (await (await feed(employerB, ownerB)).json()) as Feed;
    expect(other.total).toBe(1);
  });

  it("answers another tenant's employer exactly like a missing one", async () => {
    const foreign = await feed(employerA, ownerB);
    const missing = await feed(randomUUID(), ownerB);
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await foreign.text()).toBe(await missing.text());
  });

  it('validates its input and requires a bearer token', async () => {
    expect((await t.request('GET', `/api/employers/${employerA}/mpp-receipts`)).status).toBe(401);
    const badId = await feed('not-a-uuid', ownerA);
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { field: string }).field).toBe('id');
    for (const query of ['?limit=101', '?limit=0', '?page=0', '?page=x']) {
      const response = await feed(employerA, ownerA, query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { field: string }).field, query).toMatch(/^(limit|page)$/);
    }
  });
});

interface SessionFeed {
  employer_id: string;
  sessions: {
    channel_id: string;
    payer: string;
    route: string;
    status: string;
    deposit_usd: string;
    accepted_usd: string;
    spent_usd: string;
    settled_usd: string;
    opened_at: string;
    updated_at: string;
    closed_at: string | null;
  }[];
  page: number;
  limit: number;
  total: number;
}
const sessions = async (employerId: string, token: string, query = '') => t.request('GET', `/api/employers/${employerId}/mpp-sessions${query}`, { token });
const channelId = () => `0x${randomBytes(32).toString('hex')}`;

describe('GET /api/employers/{id}/mpp-sessions', () => {
  const older = channelId();
  const newer = channelId();
  const foreign = channelId();

  beforeAll(async () => {
    const payerAddress = payer.address.toLowerCase();
    await t.database.db.insert(mppSessions).values([
      {
        id: older,
        payer: payerAddress,
        route: 'GET /api/mpp/older',
        employerId: employerA,
        deposit: 10_000_000n,
        acceptedCumulative: 2_500_000n,
        spent: 2_000_000n,
        settled: 2_000_000n,
        status: 'closed',
        openedAt: new Date('2026-01-01T10:00:00Z'),
        updatedAt: new Date('2026-01-01T11:00:00Z'),
        closedAt: new Date('2026-01-01T11:00:00Z'),
      },
      {
        id: newer,
        payer: payerAddress,
        route: 'GET /api/mpp/newer',
        employerId: employerA,
        deposit: 5_000_000n,
        acceptedCumulative: 1_250_000n,
        spent: 50_000n,
        status: 'open',
        openedAt: new Date('2026-01-01T09:00:00Z'),
        updatedAt: new Date('2026-01-02T12:00:00Z'),
      },
      { id: foreign, payer: payerAddress, route: 'GET /api/mpp/other', employerId: employerB, deposit: 1_000_000n, status: 'open' },
    ]);
  });

  it("lists the employer's sessions, most recently active first, with their amounts", async () => {
    const response = await sessions(employerA, ownerA);
    expect(response.status).toBe(200);
    const body = (await response.json()) as SessionFeed;
    expect(body).toMatchObject({ employer_id: employerA, page: 1, limit: 25, total: 2 });
    expect(body.sessions).toEqual([
      {
        channel_id: newer,
        payer: payer.address.toLowerCase(),
        route: 'GET /api/mpp/newer',
        status: 'open',
        deposit_usd: '5.000000',
        accepted_usd: '1.250000',
        spent_usd: '0.050000',
        settled_usd: '0.000000',
        opened_at: '2026-01-01T09:00:00.000Z',
        updated_at: '2026-01-02T12:00:00.000Z',
        closed_at: null,
      },
      {
        channel_id: older,
        payer: payer.address.toLowerCase(),
        route: 'GET /api/mpp/older',
        status: 'closed',
        deposit_usd: '10.000000',
        accepted_usd: '2.500000',
        spent_usd: '2.000000',
        settled_usd: '2.000000',
        opened_at: '2026-01-01T10:00:00.000Z',
        updated_at: '2026-01-01T11:00:00.000Z',
        closed_at: '2026-01-01T11:00:00.000Z',
      },
    ]);

    const paged = (await (await sessions(employerA, ownerA, '?limit=1&page=2')).json()) as SessionFeed;
    expect(paged).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(paged.sessions.map((s) => s.channel_id)).toEqual([older]);
    const beyond = (await (await sessions(employerA, ownerA, '?limit=1&page=3')).json()) as SessionFeed;
    expect(beyond).toMatchObject({ page: 3, limit: 1, total: 2, sessions: [] });

    const other = (await (await sessions(employerB, ownerB)).json()) as SessionFeed;
    expect(other.total).toBe(1);
    expect(other.sessions.map((s) => s.channel_id)).toEqual([foreign]);
  });

  it("answers another tenant's employer exactly like a missing one", async () => {
    const foreignEmployer = await sessions(employerA, ownerB);
    const missing = await sessions(randomUUID(), ownerB);
    expect(foreignEmployer.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await foreignEmployer.text()).toBe(await missing.text());
  });

  it('validates its input and requires a bearer token', async () => {
    expect((await t.request('GET', `/api/employers/${employerA}/mpp-sessions`)).status).toBe(401);
    const badId = await sessions('not-a-uuid', ownerA);
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { field: string }).field).toBe('id');
    for (const [query, field] of [
      ['?page=0', 'page'],
      ['?page=x', 'page'],
      ['?limit=101', 'limit'],
      ['?limit=0', 'limit'],
    ] as const) {
      const response = await sessions(employerA, ownerA, query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { field: string }).field, query).toBe(field);
    }
  });
});
