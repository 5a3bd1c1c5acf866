import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { reputationWrites } from '../reputation/tables.js';
import { JobRunner } from '../../jobs/runner.js';
import { createLogger } from '../../log.js';
import { enqueueReputationWrite } from '../reputation/service.js';
import { ADMIN_SCOPES } from './schema.js';

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
     VALUES ('proof-1', 'B', 'eip155:8453', 'POST /api/x402/streams', '0xpayer', 50000, 'served', $1, now() - interval '1 minute'),
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
      { rail: 'B', status: 'served', count: 1, amount_usd: '0.050000' },
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

  it('answers 403 to non-admins on every scope', async () => {
    for (const token of [owner, await t.token('someone-else')]) {
      for (const scope of ADMIN_SCOPES) {
        const res = await read(`?scope=${scope}`, token);
        expect(res.status, scope).toBe(403);
        expect(await json(res)).toMatchObject({ code: 'FORBIDDEN' });
      }
    }
  });

  it('takes employer_id only with the scopes it filters', async () => {
    for (const scope of ['employers', 'jobs', 'announcements', 'email_outbox']) {
      const res = await read(`?scope=${scope}&employer_id=${employerId}`);
      expect(res.status, scope).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'employer_id' });
    }
  });

  it('lists payroll runs, newest first, with the employer and amount', async () => {
    await t.database.pool.query(
      `INSERT INTO payroll_runs (employer_id, status, total_amount, recipient_count, failure_reason, created_at)
       VALUES ($1, 'failed', 2500000000, 2, 'reverted', now() - interval '1 hour'), ($1, 'draft', 1000000, 1, NULL, now())`,
      [employerId],
    );
    const page = await json(await read(`?scope=payroll_runs&employer_id=${employerId}`));
    expect(page).toMatchObject({ scope: 'payroll_runs', total: 2, page: 1, limit: 25 });
    expect(page.items.map((r: { status: string }) => r.status)).toEqual(['draft', 'failed']);
    expect(page.items[1]).toMatchObject({ employer_id: employerId, employer_name: 'Tenant Co', total_usd: '2500.000000', recipient_count: 2, failure_reason: 'reverted' });
    expect((await json(await read('?scope=payroll_runs&limit=1'))).items).toHaveLength(1);
    expect((await json(await read('?scope=payroll_runs&employer_id=00000000-0000-4000-8000-000000000000'))).total).toBe(0);
  });

  it('lists escrows without the deliverable content', async () => {
    const secret = 'TOP-SECRET-DELIVERABLE-CONTENT';
    const inline = `data:text/plain;base64,${Buffer.from(secret).toString('base64')}`;
    await t.database.pool.query(
      `INSERT INTO escrows (employer_id, poster_agent_identifier, worker_wallet_address, worker_agent_identifier, amount, rubric_prompt,
         status, requested_expiry_hours, applied_expiry_hours, worker_reputation_tier, worker_attestation_count, expires_at,
         deliverable_uri, deliverable_sha256, deliverable_content, validator_reasoning)
       VALUES ($1, 'poster-agent', '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', 'worker-agent', 25000000, 'must include: ${secret}',
         'validating', 24, 24, 'new', 1, now() + interval '1 day', $2, 'abc123', $3, 'it said ${secret}')`,
      [employerId, inline, Buffer.from(secret)],
    );
    const res = await read('?scope=escrows');
    const text = await res.text();
    expect(text).not.toContain(secret);
    expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    const page = JSON.parse(text);
    expect(page).toMatchObject({ scope: 'escrows', total: 1 });
    expect(page.items[0]).toMatchObject({
      employer_id: employerId,
      status: 'validating',
      amount_usd: '25.000000',
      worker_agent_identifier: 'worker-agent',
      deliverable_uri: 'data:text/plain;base64,…',
      deliverable_sha256: 'abc123',
      deliverable_bytes: secret.length,
    });
    expect(page.items[0]).not.toHaveProperty('deliverable_content');
  });

  it('shows failed reputation writes alone in reputation_failures', async () => {
    const page = await json(await read('?scope=reputation_failures'));
    expect(page).toMatchObject({ scope: 'reputation_failures', total: 1 });
    expect(page.items).toEqual([expect.objectContaining({ status: 'failed', source: 'agent_pay:older-failed', last_error: 'SelfFeedback' })]);
  });

  it('answers to email_outbox and audit_log as well', async () => {
    const emails = await json(await read('?scope=email_outbox'));
    expect(emails).toMatchObject({ scope: 'email_outbox', total: 3 });
    expect(emails.items[0]).toMatchObject({ status: 'queued', to_address: expect.stringMatching(/@tenant\.example$/) });
    const audit = await json(await read(`?scope=audit_log&employer_id=${employerId}`));
    expect(audit.scope).toBe('audit_log');
    expect(audit.items.map((a: { action: string }) => a.action)).toContain('employer.created');
  });

  it('lists announcements with their state', async () => {
    const body = { title: 'Admin view', body: 'Visible in scope=announcements.', severity: 'warning', audience: 'employers' };
    const created = await json(await t.request('POST', '/api/admin/announcements', { token: admin, body: { ...body, publish_now: true } }));
    await t.request('POST', '/api/admin/announcements', { token: admin, body: { ...body, title: 'Draft one' } });
    const page = await json(await read('?scope=announcements'));
    expect(page).toMatchObject({ scope: 'announcements', total: 2 });
    expect(page.items.map((a: { title: string; state: string }) => [a.title, a.state])).toEqual([
      ['Draft one', 'draft'],
      ['Admin view', 'active'],
    ]);
    expect(page.items[1]).toMatchObject({ id: created.id, created_by: 'root', audience: 'employers', dismissals: 0 });
  });

  describe('jobs', () => {
    let runner: JobRunner | undefined;
    afterAll(async () => runner?.stop());

    it('says so when the job runner never started here', async () => {
      expect(await json(await read('?scope=jobs'))).toMatchObject({ scope: 'jobs', available: false, total: 0, items: [], counts: [] });
      expect(await json(await read('?scope=failed_jobs'))).toMatchObject({ scope: 'failed_jobs', available: false, total: 0, items: [] });
    });

    it('shows pg-boss jobs with counts per state, and failed jobs with their error', async () => {
      runner = new JobRunner(t.database, createLogger('silent'), { work: false });
      runner.define({ name: 'admin-view-probe', handle: async () => {} });
      await runner.start();
      const ok = await runner.send('admin-view-probe', { n: 1 });
      const bad = await runner.send('admin-view-probe', { n: 2, employer_id: employerId });
      await t.database.pool.query(
        `UPDATE pgboss.job SET state = 'failed', retry_count = 8, completed_on = now(), output = $2::jsonb WHERE id = $1`,
        [bad, JSON.stringify({ message: 'chain unreachable', stack: 'Error: chain unreachable\n    at x' })],
      );

      const jobs = await json(await read('?scope=jobs'));
      expect(jobs).toMatchObject({ scope: 'jobs', available: true, total: 2 });
      expect(jobs.counts).toEqual(
        expect.arrayContaining([
          { name: 'admin-view-probe', state: 'created', count: 1 },
          { name: 'admin-view-probe', state: 'failed', count: 1 },
        ]),
      );
      expect(jobs.items.map((j: { id: string }) => j.id).sort()).toEqual([ok, bad].sort());
      expect(jobs.items[0]).not.toHaveProperty('data');

      const failed = await json(await read('?scope=failed_jobs'));
      expect(failed).toMatchObject({ scope: 'failed_jobs', available: true, total: 1 });
      expect(failed.items[0]).toMatchObject({
        id: bad,
        name: 'admin-view-probe',
        state: 'failed',
        retry_count: 8,
        error: 'chain unreachable',
        data: { n: 2, employer_id: employerId },
        completed_at: expect.any(String),
      });
    }, 60_000);
  });

  it('is described in the OpenAPI document', async () => {
    const document = await json(await t.request('GET', '/api/openapi.json'));
    const route = document.paths['/api/admin'].get;
    expect(route.security).toEqual([{ bearerAuth: [] }]);
    expect(route.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['scope', 'page', 'limit', 'employer_id']));
    const scope = route.parameters.find((p: { name: string }) => p.name === 'scope');
    expect(scope.schema.enum).toEqual(expect.arrayContaining([...ADMIN_SCOPES]));
    expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
  });
});
