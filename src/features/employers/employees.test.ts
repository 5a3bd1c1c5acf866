import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { DUPLICATE_IN_IMPORT, WALLET_REVIEW_NOTE } from './service.js';

/** POST /api/employees, POST /api/employees/bulk, PATCH /api/employees/{id}. */

let t: TestApp;
let owner: string;
let employerId: string;

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await t.database.pool.query(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return rows[0].n as number;
}

beforeAll(async () => {
  t = await startTestApp();
  owner = await t.token('staff-owner', 'owner@staff.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Staff Co' } }))).id;
});
afterAll(() => t.close());

describe('POST /api/employees', () => {
  it("creates the employee at the caller's employer and queues one invite", async () => {
    const res = await t.request('POST', '/api/employees', {
      token: owner,
      body: { email: 'Invitee@Staff.example', full_name: 'Ivy Invitee', annual_salary_usd: '72000' },
    });
    expect(res.status).toBe(201);
    const employee = await json<{ id: string; invited_at: string }>(res);
    expect(employee).toMatchObject({ employer_id: employerId, email: 'invitee@staff.example', annual_salary_usd: '72000.000000', created: true });
    expect(employee.invited_at).toEqual(expect.any(String));

    const { rows } = await t.database.pool.query('SELECT to_address, subject, body_text, status FROM email_outbox WHERE dedupe_key = $1', [
      `employee-invite:${employee.id}`,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ to_address: 'invitee@staff.example', subject: 'Staff Co invited you to get paid', status: 'queued' });
    expect(rows[0].body_text).toContain(`${t.config.publicBaseUrl}/portal`);
    expect(rows[0].body_text).toContain('Ivy Invitee');

    // The same email again: the existing record, no second invite.
    const again = await t.request('POST', '/api/employees', { token: owner, body: { email: 'invitee@staff.example', full_name: 'Other' } });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ id: employee.id, full_name: 'Ivy Invitee', created: false });
    expect(await count("email_outbox WHERE to_address = 'invitee@staff.example'")).toBe(1);
  });

  it('creates one record and one invite when the same email is posted ten times at once', async () => {
    const body = { email: 'burst@staff.example', full_name: 'Burst' };
    const results = await Promise.all(Array.from({ length: 10 }, () => t.request('POST', '/api/employees', { token: owner, body })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(9);
    const ids = new Set(await Promise.all(results.map(async (r) => (await json<{ id: string }>(r)).id)));
    expect(ids.size).toBe(1);
    expect(await count("employees WHERE email = 'burst@staff.example'")).toBe(1);
    expect(await count("email_outbox WHERE to_address = 'burst@staff.example'")).toBe(1);
    expect(await count("audit_log WHERE action = 'employee.created' AND target_id = $1", [[...ids][0]])).toBe(1);
  });

  it('answers 404 to a caller who owns no employer, 401 without a token, 400 naming the field', async () => {
    const stranger = await t.token('no-employer', 'nobody@staff.example');
    const res = await t.request('POST', '/api/employees', { token: stranger, body: { email: 'x@staff.example', full_name: 'X' } });
    expect(res.status).toBe(404);
    const missing = await t.request('PATCH', `/api/employers/${randomUUID()}`, { token: stranger, body: { name: 'x' } });
    expect(await json(res)).toEqual(await json(missing)); // "Employer not found." either way
    expect((await t.request('POST', '/api/employees', { body: { email: 'x@staff.example', full_name: 'X' } })).status).toBe(401);
    for (const [body, field] of [
      [{ full_name: 'X' }, 'email'],
      [{ email: 'x@staff.example' }, 'full_name'],
      [{ email: 'x@staff.example', full_name: 'X\nBcc: victim@example.com' }, 'full_name'],
      [{ email: 'x@staff.example', full_name: 'X', annual_salary_usd: '1e5' }, 'annual_salary_usd'],
    ] as const) {
      const bad = await t.request('POST', '/api/employees', { token: owner, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(await json(bad)).toMatchObject({ field });
    }
    expect(await count("employees WHERE email = 'x@staff.example'")).toBe(0);
  });
});

describe('POST /api/employees/bulk', () => {
  type Report = {
    employer_id: string;
    totals: { rows: number; created: number; existing: number; invalid: number };
    results: { row: number; status: string; id?: string; email?: string; field?: string; reason?: string }[];
  };
  const bulk = (rows: unknown, headers: Record<string, string> = {}, token = owner) =>
    t.request('POST', '/api/employees/bulk', { token, body: { rows }, headers });

  it('reports every row, writes the valid ones and invites the new employees', async () => {
    await t.request('POST', `/api/employers/${employerId}/team`, { token: owner, body: { email: 'known@bulk.example', full_name: 'Known' } });
    const res = await bulk([
      { email: 'one@bulk.example', full_name: 'One', annual_salary_usd: '50000', department: 'Eng', wallet_address: '' },
      { email: 'KNOWN@bulk.example', full_name: 'Known Again' },
      { email: 'not-an-email', full_name: 'Bad Email' },
      { email: 'two@bulk.example', full_name: 'Two', annual_salary_usd: '$50,000' },
      { email: ' three@bulk.example ', full_name: ' Three ', wallet_address: ' 0x3333333333333333333333333333333333333333 ', cost_centre: '  ' },
      { email: 'one@bulk.example', full_name: 'One Duplicate' },
      { email: 'four@bulk.example', full_name: '' },
      { email: 'five@bulk.example', full_name: 'Five', annual_salary_usd: 5 },
      { email: 'six@bulk.example', full_name: 'Six', unmapped_column: 'ignored' },
    ]);
    expect(res.status).toBe(200);
    const report = await json<Report>(res);
    expect(report.employer_id).toBe(employerId);
    expect(report.totals).toEqual({ rows: 9, created: 3, existing: 1, invalid: 5 });
    expect(report.results).toEqual([
      { row: 1, status: 'created', id: expect.any(String), email: 'one@bulk.example' },
      { row: 2, status: 'existing', id: expect.any(String), email: 'known@bulk.example' },
      { row: 3, status: 'invalid', email: 'not-an-email', field: 'email', reason: expect.any(String) },
      { row: 4, status: 'invalid', email: 'two@bulk.example', field: 'annual_salary_usd', reason: expect.stringContaining('decimal') },
      { row: 5, status: 'created', id: expect.any(String), email: 'three@bulk.example' },
      { row: 6, status: 'invalid', email: 'one@bulk.example', field: 'email', reason: DUPLICATE_IN_IMPORT },
      { row: 7, status: 'invalid', email: 'four@bulk.example', field: 'full_name', reason: expect.any(String) },
      { row: 8, status: 'invalid', email: 'five@bulk.example', field: 'annual_salary_usd', reason: expect.any(String) },
      { row: 9, status: 'created', id: expect.any(String), email: 'six@bulk.example' },
    ]);
    const { rows } = await t.database.pool.query(
      "SELECT email, full_name, wallet_address, cost_centre, annual_salary::text AS salary, invited_at FROM employees WHERE email LIKE '%@bulk.example' ORDER BY email",
    );
    expect(rows.map((r) => r.email)).toEqual(['known@bulk.example', 'one@bulk.example', 'six@bulk.example', 'three@bulk.example']);
    expect(rows.find((r) => r.email === 'three@bulk.example')).toMatchObject({
      full_name: 'Three',
      wallet_address: '0x3333333333333333333333333333333333333333',
      cost_centre: null,
      invited_at: expect.any(Date),
    });
    expect(rows.find((r) => r.email === 'one@bulk.example')).toMatchObject({ full_name: 'One', salary: '50000000000' });
    expect(await count("email_outbox WHERE to_address LIKE '%@bulk.example'")).toBe(3);
    expect(await count("email_outbox WHERE to_address = 'known@bulk.example'")).toBe(0);
  });

  it('writes nothing at all when something fails mid-import, reports 5xx, and the same key may retry', async () => {
    // A database-level failure zod cannot foresee: queuing the invite of one row fails.
    await t.database.pool.query(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.to_address = 'boom@atomic.example' THEN RAISE EXCEPTION 'forced failure'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON email_outbox FOR EACH ROW EXECUTE FUNCTION refuse_boom();
    `);
    const rows = [
      ...Array.from({ length: 20 }, (_, i) => ({ email: `ok${i}@atomic.example`, full_name: `Ok ${i}` })),
      { email: 'boom@atomic.example', full_name: 'Boom' },
      { email: 'bad', full_name: 'Invalid' },
    ];
    const failed = await bulk(rows, { 'idempotency-key': 'atomic-1' });
    expect(failed.status).toBe(500);
    expect(await json(failed)).toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(await count("employees WHERE email LIKE '%@atomic.example'")).toBe(0);
    expect(await count("email_outbox WHERE to_address LIKE '%@atomic.example'")).toBe(0);
    expect(await count("audit_log WHERE action = 'employees.imported' AND details->>'rows' = '22'")).toBe(0);

    await t.database.pool.query('DROP TRIGGER refuse_boom ON email_outbox; DROP FUNCTION refuse_boom();');
    const retried = await bulk(rows, { 'idempotency-key': 'atomic-1' });
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect((await json<Report>(retried)).totals).toEqual({ rows: 22, created: 21, existing: 0, invalid: 1 });
    expect(await count("employees WHERE email LIKE '%@atomic.example'")).toBe(21);
    const replay = await bulk(rows, { 'idempotency-key': 'atomic-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await count("email_outbox WHERE to_address LIKE '%@atomic.example'")).toBe(21);
  });

  it('imports 1000 rows in one request', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ email: `p${i}@thousand.example`, full_name: `Person ${i}`, annual_salary_usd: '1000' }));
    const started = Date.now();
    const res = await bulk(rows);
    expect(res.status).toBe(200);
    expect((await json<Report>(res)).totals).toEqual({ rows: 1000, created: 1000, existing: 0, invalid: 0 });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await count("employees WHERE email LIKE '%@thousand.example'")).toBe(1000);
    expect(await count("email_outbox WHERE to_address LIKE '%@thousand.example'")).toBe(1000);
  });

  it('answers 400 naming rows for an empty, oversized or malformed list; 401; 404 without an employer', async () => {
    for (const [rows, field] of [
      [[], 'rows'],
      [Array.from({ length: 1001 }, (_, i) => ({ email: `x${i}@big.example`, full_name: 'X' })), 'rows'],
      ['a,b,c', 'rows'],
      [[{ email: 'a@b.example', full_name: 'A' }, 'not a row'], 'rows.1'],
      [[['a@b.example', 'A']], 'rows.0'],
    ] as const) {
      const res = await bulk(rows);
      expect(res.status, JSON.stringify(rows).slice(0, 80)).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    expect(await count("employees WHERE email LIKE '%@big.example'")).toBe(0);
    expect((await t.request('POST', '/api/employees/bulk', { body: { rows: [] } })).status).toBe(401);
    const stranger = await t.token('bulk-stranger', 'stranger@bulk.example');
    const res = await bulk([{ email: 'y@bulk.example', full_name: 'Y' }], {}, stranger);
    expect(res.status).toBe(404);
    expect(await json(res)).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('PATCH /api/employees/{id}', () => {
  let employeeId: string;
  let employee: string;
  beforeAll(async () => {
    const res = await t.request('POST', `/api/employers/${employerId}/team`, {
      token: owner,
      body: { email: 'self@staff.example', full_name: 'Sam Self', wallet_address: '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
    });
    employeeId = (await json<{ id: string }>(res)).id;
    // Signing in with the verified email links the user to the record.
    employee = await t.token('sam-user', 'self@staff.example');
    await t.request('PATCH', `/api/employees/${employeeId}`, { token: employee, body: { full_name: 'Sam Self' } });
  });
  const patch = (body: unknown, token = employee, id = employeeId) => t.request('PATCH', `/api/employees/${id}`, { token, body });

  it('lets the employee change their name without a review', async () => {
    const res = await patch({ full_name: 'Samantha Self' });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: employeeId, full_name: 'Samantha Self', manual_review_status: 'none' });
  });

  it('puts a changed payout wallet under review until the employer approves it', async () => {
    // The same wallet in another letter case is not a change; wallets are kept in their EIP-55 spelling (#33).
    const same = await patch({ wallet_address: '0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    expect(await json(same)).toMatchObject({ manual_review_status: 'none', wallet_address: getAddress('0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa') });

    const res = await patch({ wallet_address: '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      wallet_address: getAddress('0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),
      manual_review_status: 'pending',
      manual_review_note: WALLET_REVIEW_NOTE,
      manual_reviewed_at: null,
      // The same reason payroll gives when it refuses the employee (the wizard greys the row with it).
      unpayable_reason: 'new wallet awaiting review',
    });
    const { rows } = await t.database.pool.query(
      "SELECT actor_user_id, details FROM audit_log WHERE target_id = $1 AND action = 'employee.profile_updated' ORDER BY created_at DESC LIMIT 1",
      [employeeId],
    );
    expect(rows[0]).toMatchObject({
      actor_user_id: 'sam-user',
      details: {
        before: { wallet_address: getAddress('0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), manual_review_status: 'none' },
        after: { wallet_address: getAddress('0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'), manual_review_status: 'pending' },
        review_required: true,
      },
    });

    const approved = await t.request('PATCH', `/api/employers/${employerId}/team/${employeeId}`, {
      token: owner,
      body: { manual_review: { status: 'approved' } },
    });
    expect(await json(approved)).toMatchObject({ manual_review_status: 'approved', manual_review_note: null, unpayable_reason: null });

    // A Solana wallet change reopens the review.
    const solana = await patch({ solana_wallet_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' });
    expect(await json(solana)).toMatchObject({ manual_review_status: 'pending' });
  });

  it('answers 404 to everyone but the employee, identically for a missing id', async () => {
    const stranger = await t.token('patch-stranger', 'stranger@staff.example');
    const responses = [
      await patch({ full_name: 'Hijack' }, owner),
      await patch({ full_name: 'Hijack' }, stranger),
      await patch({ full_name: 'Hijack' }, employee, randomUUID()),
    ];
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404]);
    const bodies = await Promise.all(responses.map((r) => json(r)));
    expect(bodies[0]).toEqual(bodies[2]);
    expect(bodies[1]).toEqual(bodies[2]);
    expect((await t.request('PATCH', `/api/employees/${employeeId}`, { body: { full_name: 'X' } })).status).toBe(401);
    const { rows } = await t.database.pool.query('SELECT full_name FROM employees WHERE id = $1', [employeeId]);
    expect(rows[0].full_name).not.toBe('Hijack');
  });

  it('refuses fields the employee may not change, naming them', async () => {
    for (const [body, field] of [
      [{}, 'json'],
      [{ annual_salary_usd: '1000000' }, 'annual_salary_usd'],
      [{ manual_review_status: 'approved' }, 'manual_review_status'],
      [{ email: 'other@staff.example' }, 'email'],
      [{ full_name: '' }, 'full_name'],
      [{ wallet_address: 'not-a-wallet' }, 'wallet_address'],
      [{ solana_wallet_address: 'O0Il' }, 'solana_wallet_address'],
    ] as const) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await json(res), JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it('refuses a removed employee', async () => {
    await t.request('PATCH', `/api/employers/${employerId}/team/${employeeId}`, { token: owner, body: { remove: true } });
    const res = await patch({ full_name: 'Gone' });
    expect(res.status).toBe(404);
  });
});
