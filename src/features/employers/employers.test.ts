import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';

let t: TestApp;
let aliceToken: string;
let bobToken: string;

beforeAll(async () => {
  t = await startTestApp();
  aliceToken = await t.token('alice', 'alice@acme.example');
  bobToken = await t.token('bob', 'bob@rival.example');
});
afterAll(() => t.close());

async function createEmployer(token: string, name: string) {
  const res = await t.request('POST', '/api/employers', { token, body: { name } });
  return { status: res.status, body: (await res.json()) as { id: string; name: string; created: boolean } };
}

describe('POST /api/employers', () => {
  it('creates the employer once, then returns the same id', async () => {
    const first = await createEmployer(aliceToken, 'Acme');
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name: 'Acme', created: true });

    const second = await createEmployer(aliceToken, 'Acme renamed');
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, name: 'Acme', created: false });
  });

  it('creates exactly one employer when one owner races ten creates', async () => {
    const token = await t.token('racer');
    const results = await Promise.all(Array.from({ length: 10 }, () => createEmployer(token, 'Race Co')));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(9);
    const { rows } = await t.database.pool.query("SELECT count(*)::int AS n FROM employers WHERE owner_user_id = 'racer'");
    expect(rows[0].n).toBe(1);
  });

  it('names the field of invalid input', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: 5 }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 'ok', admin_wallet: '0x123' }, 'admin_wallet'],
      [[], 'json'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/api/employers', { token: aliceToken, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it('answers malformed JSON with 400 naming the body', async () => {
    const res = await t.request('POST', '/api/employers', { token: aliceToken, body: '{"name": ' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'INVALID_JSON', field: 'body' });
  });

  it('refuses a body that is not JSON', async () => {
    const res = await t.request('POST', '/api/employers', {
      token: aliceToken,
      body: 'name=Acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', field: 'Content-Type' });
  });

  it('requires a signed-in caller', async () => {
    const res = await t.request('POST', '/api/employers', { body: { name: 'Nobody' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });
});

describe('GET /api/employers/{id}', () => {
  it("reads the owner's employer without writing anything", async () => {
    const token = await t.token('reader', 'reader@acme.example');
    const { body: created } = await createEmployer(token, 'Read Co');
    const res = await t.request('GET', `/api/employers/${created.id}`, { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: created.id, name: 'Read Co', created: false });
  });

  it("answers another owner's employer like a missing one (404), anonymous callers 401 and a malformed id 400", async () => {
    const { body: alices } = await createEmployer(aliceToken, 'Acme');
    expect((await t.request('GET', `/api/employers/${alices.id}`, { token: bobToken })).status).toBe(404);
    expect((await t.request('GET', `/api/employers/${randomUUID()}`, { token: aliceToken })).status).toBe(404);
    expect((await t.request('GET', `/api/employers/${alices.id}`)).status).toBe(401);
    const bad = await t.request('GET', '/api/employers/not-an-id', { token: aliceToken });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'id' });
  });
});

describe('team', () => {
  let employerId: string;
  beforeAll(async () => {
    employerId = (await createEmployer(aliceToken, 'Acme')).body.id;
  });

  it('adds an employee and lists it; the same email returns the existing record', async () => {
    const body = {
      email: 'Ada@Acme.example',
      full_name: 'Ada Lovelace',
      wallet_address: '0x1111111111111111111111111111111111111111',
      annual_salary_usd: '100000.50',
    };
    const created = await t.request('POST', `/api/employers/${employerId}/team`, { token: aliceToken, body });
    expect(created.status).toBe(201);
    const employee = (await created.json()) as { id: string };
    expect(employee).toMatchObject({ email: 'ada@acme.example', annual_salary_usd: '100000.500000', created: true });

    const again = await t.request('POST', `/api/employers/${employerId}/team`, {
      token: aliceToken,
      body: { ...body, full_name: 'Someone else' },
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: employee.id, full_name: 'Ada Lovelace', created: false });

    const list = await t.request('GET', `/api/employers/${employerId}/team`, { token: aliceToken });
    expect(list.status).toBe(200);
    const team = (await list.json()) as { employees: { id: string }[]; total: number };
    expect(team.employees.map((e) => e.id)).toContain(employee.id);
    expect(team.total).toBe(team.employees.length);
  });

  it('stores salaries as exact integer base units', async () => {
    const res = await t.request('POST', `/api/employers/${employerId}/team`, {
      token: aliceToken,
      body: { email: 'exact@acme.example', full_name: 'Exact', annual_salary_usd: '999999999999.999999' },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const { rows } = await t.database.pool.query('SELECT annual_salary::text AS v FROM employees WHERE id = $1', [id]);
    expect(rows[0].v).toBe('999999999999999999');
  });

  it('creates one employee when the same email is added ten times at once', async () => {
    const body = { email: 'dup@acme.example', full_name: 'Dup' };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => t.request('POST', `/api/employers/${employerId}/team`, { token: aliceToken, body })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(9);
  });

  it('pages the team list and validates paging', async () => {
    const page = await t.request('GET', `/api/employers/${employerId}/team?page=2&limit=1`, { token: aliceToken });
    expect(page.status).toBe(200);
    expect(await page.json()).toMatchObject({ page: 2, limit: 1, employees: [expect.any(Object)] });
    for (const query of ['page=0', 'limit=0', 'limit=501', 'page=abc']) {
      const res = await t.request('GET', `/api/employers/${employerId}/team?${query}`, { token: aliceToken });
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { field: string }).field).toBe(query.split('=')[0]);
    }
  });

  it("answers another tenant's employer exactly like a missing one", async () => {
    const foreign = await t.request('GET', `/api/employers/${employerId}/team`, { token: bobToken });
    const missing = await t.request('GET', `/api/employers/${randomUUID()}/team`, { token: bobToken });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await foreign.json()).toEqual(await missing.json());

    const foreignWrite = await t.request('POST', `/api/employers/${employerId}/team`, {
      token: bobToken,
      body: { email: 'spy@rival.example', full_name: 'Spy' },
    });
    expect(foreignWrite.status).toBe(404);
    const { rows } = await t.database.pool.query("SELECT count(*)::int AS n FROM employees WHERE email = 'spy@rival.example'");
    expect(rows[0].n).toBe(0);
  });

  it('refuses a malformed employer id with 400', async () => {
    const res = await t.request('GET', '/api/employers/not-a-uuid/team', { token: aliceToken });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field: 'id' });
  });

  it('names the field of an invalid employee', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ full_name: 'No Email' }, 'email'],
      [{ email: 'not-an-email', full_name: 'X' }, 'email'],
      [{ email: 'x@acme.example' }, 'full_name'],
      [{ email: 'x@acme.example', full_name: 'X', annual_salary_usd: '-5' }, 'annual_salary_usd'],
      [{ email: 'x@acme.example', full_name: 'X', annual_salary_usd: '1.1234567' }, 'annual_salary_usd'],
      [{ email: 'x@acme.example', full_name: 'X', annual_salary_usd: 100000 }, 'annual_salary_usd'],
      [{ email: 'x@acme.example', full_name: 'X', annual_salary_usd: '1e6' }, 'annual_salary_usd'],
      [{ email: 'x@acme.example', full_name: 'X', wallet_address: '0xzz' }, 'wallet_address'],
      [{ email: 'x@acme.example', full_name: 'X', solana_wallet_address: '0x1111111111111111111111111111111111111111' }, 'solana_wallet_address'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', `/api/employers/${employerId}/team`, { token: aliceToken, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { field: string }).field).toBe(field);
    }
  });

  it('links the employee record to the user who signs in with that verified email', async () => {
    await t.request('POST', `/api/employers/${employerId}/team`, {
      token: aliceToken,
      body: { email: 'grace@acme.example', full_name: 'Grace Hopper' },
    });
    const grace = await t.token('grace-user', 'grace@acme.example');
    // Any authenticated call resolves the caller; the team route then refuses her (not the owner).
    const res = await t.request('GET', `/api/employers/${employerId}/team`, { token: grace });
    expect(res.status).toBe(404);
    const caller = await t.services.users.resolveCaller({ sub: 'grace-user', email: 'grace@acme.example', emailVerified: true });
    expect(caller.employeeIds).toHaveLength(1);
    expect(caller.ownedEmployerId).toBeNull();

    const unverified = await t.services.users.resolveCaller({ sub: 'mallory', email: 'dup@acme.example', emailVerified: false });
    expect(unverified.employeeIds).toEqual([]);

    // A later token without an email claim keeps what the user proved.
    const withoutEmail = await t.services.users.resolveCaller({ sub: 'grace-user', email: null, emailVerified: false });
    expect(withoutEmail).toMatchObject({ email: 'grace@acme.example', employeeIds: caller.employeeIds });
  });
});
