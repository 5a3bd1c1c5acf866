import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { reputationWrites } from '../../db/schema.js';
import { enqueueReputationWrite } from '../reputation/service.js';

let t: TestApp;
let admin: string;
let owner: string;
let employerId: string;

async function json<T = Record<string, any>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

const read = (query: string, token = admin) => t.request('GET', `/api/admin${query}`, { token });

beforeAll(async () => {
  t = await startTestApp({ ADMIN_USER_IDS: 'root, ops-2' });
  admin = await t.token('root', 'root@platform.example');
  owner = await t.token('admin-test-owner', 'owner@tenant.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Tenant Co' } }))).id;
  for (const email of ['a@tenant.example', 'b@tenant.example', 'c@tenant.example']) {
    await t.request('POST', '/api/employees', { token: owner, body: { email, full_name: email } });
  }
  const { rows } = await t.database.pool.query("SELECT id FROM employees WHERE email = 'c@tenant.example'");
  await t.request('PATCH', `/api/employers/${employerId}/team/${rows[0].id}`, { token: owner, body: { remove: true } });
  // Two fee payments as the gate records them.
  await t.database.pool.query(
    `INSERT INTO payments (proof_key, rail, network, route, payer, amount, status, employer_id, created_at)
     VALUES ('proof-1', 'B', 'eip155:8453', 'POST /api/x402/streams', '0xpayer', 50000, 'settled', $1, now() - interval '1 minute'),
            ('proof-2', 'A', 'eip155:4217', 'POST /api/mpp/memo/decode', '0xother', 10000, 'voided', NULL, now())`,
    [employerId],
  );
});
afterAll(() => t.close());

describe('GET /api/admin', () => {
  it('is for platform admins only: 401 without a token, 403 for anyone else', async () => {
    const anonymous = await t.request('GET', '/api/admin?scope=overview');
    expect(anonymous.status).toBe(401);
    const tenant = await read('?scope=overview', owner);
    expect(tenant.status).toBe(403);
    expect(await json(tenant)).toMatchObject({ code: 'FORBIDDEN' });
    // Refused before validation: a non-admin learns nothing about the parameters either.
    expect((await read('?scope=nope', owner)).status).toBe(403);
    expect((await read('?scope=overview', await t.token('ops-2'))).status).toBe(200);
  });

  it('answers 400 naming scope, page or limit', async () => {
    for (const [query, field] of [
      ['', 'scope'],
      ['?scope=users', 'scope'],
      ['?scope=emails&page=0', 'page'],
      ['?scope=emails&limit=0', 'limit'],
      ['?scope=emails&limit=101', 'limit'],
      ['?scope=audit&employer_id=nope', 'employer_id'],
    ]) {
      const res = await read(query!);
      expect(res.status, query).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it('gives an overview of counts', async () => {
    const res = await read('?scope=overview');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await json(res);
    expect(body).toMatchObject({
      scope: 'overview',
      generated_at: expect.any(String),
      counts: {
        employers: 1,
        employees: { active: 2, removed: 1 },
        payroll_runs: { draft: 0, submitted: 0, confirmed: 0, failed: 0 },
        emails: { queued: 3, sent: 0, failed: 0 },
        reputation_writes: { pending: 0, written: 0, failed: 0 },
      },
    });
    expect(body.counts.payments).toEqual([
      { rail: 'A', status: 'voided', count: 1, amount_usd: '0.010000' },
      { rail: 'B', status: 'settled', count: 1, amount_usd: '0.050000' },
    ]);
  });

  it('pages employers, payments, emails and audit entries, newest first', async () => {
    const employers = await json(await read('?scope=employers'));
    expect(employers).toMatchObject({ scope: 'employers', page: 1, limit: 25, total: 1 });
    expect(employers.items[0]).toMatchObject({ id: employerId, name: 'Tenant Co', owner_user_id: 'admin-test-owner', active_employees: 2 });

    const payments = await json(await read('?scope=payments&limit=1'));
    expect(payments).toMatchObject({ scope: 'payments', limit: 1, total: 2, items: [{ rail: 'A', amount_usd: '0.010000', status: 'voided' }] });
    const second = await json(await read('?scope=payments&limit=1&page=2'));
    expect(second.items).toEqual([expect.objectContaining({ rail: 'B', employer_id: employerId, route: 'POST /api/x402/streams' })]);

    const emails = await json(await read('?scope=emails&limit=2'));
    expect(emails).toMatchObject({ scope: 'emails', total: 3 });
    expect(emails.items).toHaveLength(2);
    expect(emails.items[0]).toMatchObject({ subject: 'Tenant Co invited you to get paid', status: 'queued', dedupe_key: expect.stringMatching(/^employee-invite:/) });

    const audit = await json(await read(`?scope=audit&employer_id=${employerId}`));
    expect(audit.scope).toBe('audit');
    expect(audit.items.map((a: { action: string }) => a.action)).toEqual(
      expect.arrayContaining(['employer.created', 'employee.created', 'employee.removed']),
    );
    expect(audit.total).toBe(audit.items.length);
    const beyond = await json(await read('?scope=audit&page=99'));
    expect(beyond.items).toEqual([]);
  });

  it('shows reputation writes, failed ones first, with their error', async () => {
    const write = (sourceId: string) =>
      enqueueReputationWrite(t.database.db, { kind: 'erc8004_feedback', writeType: 'agent-pay', subject: '7', sourceType: 'agent_pay', sourceId, amount: 1_000_000n });
    await write('older-failed');
    await write('newer-pending');
    await t.database.db
      .update(reputationWrites)
      .set({ status: 'failed', attempts: 8, lastError: 'SelfFeedback' })
      .where(eq(reputationWrites.sourceId, 'older-failed'));
    const page = await json(await read('?scope=reputation_writes'));
    expect(page).toMatchObject({ scope: 'reputation_writes', total: 2 });
    expect(page.items.map((w: { source: string }) => w.source)).toEqual(['agent_pay:older-failed', 'agent_pay:newer-pending']);
    expect(page.items[0]).toMatchObject({ status: 'failed', attempts: 8, last_error: 'SelfFeedback', amount_usd: '1.000000', write_type: 'agent-pay', subject: '7' });
    expect((await json(await read('?scope=overview'))).counts.reputation_writes).toEqual({ pending: 1, written: 0, failed: 1 });
  });

  it('is described in the OpenAPI document', async () => {
    const document = await json(await t.request('GET', '/api/openapi.json'));
    const route = document.paths['/api/admin'].get;
    expect(route.security).toEqual([{ bearerAuth: [] }]);
    expect(route.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['scope', 'page', 'limit']));
    expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
  });
});
