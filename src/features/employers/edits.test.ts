import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';

/** PATCH /api/employers/{id} and PATCH /api/employers/{id}/team/{employeeId}. */

let t: TestApp;
let owner: string;
let rival: string;
let employerId: string;
let rivalEmployerId: string;

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function addEmployee(token: string, employer: string, email: string, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', `/api/employers/${employer}/team`, { token, body: { email, full_name: 'Person', ...extra } });
  expect(res.status).toBe(201);
  return (await json<{ id: string }>(res)).id;
}

async function auditOf(targetId: string) {
  const { rows } = await t.database.pool.query(
    'SELECT action, actor_user_id, details FROM audit_log WHERE target_id = $1 AND action <> $2 ORDER BY created_at',
    [targetId, 'employee.created'],
  );
  return rows as { action: string; actor_user_id: string; details: { before: Record<string, unknown>; after: Record<string, unknown> } }[];
}

beforeAll(async () => {
  t = await startTestApp();
  owner = await t.token('edit-owner', 'owner@edits.example');
  rival = await t.token('edit-rival', 'rival@edits.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Edits Co' } }))).id;
  rivalEmployerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival Co' } }))).id;
});
afterAll(() => t.close());

describe('PATCH /api/employers/{id}', () => {
  const patch = (body: unknown, token = owner, id = employerId) => t.request('PATCH', `/api/employers/${id}`, { token, body });

  it('renames the employer and sets, then clears, its policy id; each change is audited', async () => {
    const renamed = await patch({ name: '  Edits Renamed  ' });
    expect(renamed.status).toBe(200);
    expect(await json(renamed)).toMatchObject({ id: employerId, name: 'Edits Renamed', tip403_policy_id: null, created: false });

    // Without chains (this app), the id is stored unchecked.
    const withPolicy = await patch({ tip403_policy_id: 7 });
    expect(await json(withPolicy)).toMatchObject({ name: 'Edits Renamed', tip403_policy_id: 7 });
    const cleared = await patch({ tip403_policy_id: null });
    expect(await json(cleared)).toMatchObject({ tip403_policy_id: null });

    const { rows } = await t.database.pool.query(
      "SELECT details FROM audit_log WHERE target_id = $1 AND action = 'employer.updated' ORDER BY created_at",
      [employerId],
    );
    expect(rows.map((r) => r.details)).toEqual([
      { before: { name: 'Edits Co' }, after: { name: 'Edits Renamed' } },
      { before: { tip403_policy_id: null }, after: { tip403_policy_id: 7 } },
      { before: { tip403_policy_id: 7 }, after: { tip403_policy_id: null } },
    ]);

    // A change to the same value changes nothing and is not audited.
    expect((await patch({ name: 'Edits Renamed' })).status).toBe(200);
    const after = await t.database.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1 AND action = 'employer.updated'", [
      employerId,
    ]);
    expect(after.rows[0].n).toBe(3);
  });

  it('names the field of invalid input', async () => {
    const cases: [unknown, string][] = [
      [{}, 'json'],
      [{ name: '' }, 'name'],
      [{ name: 'a\u0000b' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ tip403_policy_id: 1 }, 'tip403_policy_id'],
      [{ tip403_policy_id: 0 }, 'tip403_policy_id'],
      [{ tip403_policy_id: 2.5 }, 'tip403_policy_id'],
      [{ tip403_policy_id: '5' }, 'tip403_policy_id'],
      [{ tip403_policy_id: 2 ** 60 }, 'tip403_policy_id'],
      [{ name: 'ok', owner_user_id: 'someone-else' }, 'owner_user_id'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await json(res), JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it('requires a token and answers another tenant exactly like a missing employer', async () => {
    expect((await t.request('PATCH', `/api/employers/${employerId}`, { body: { name: 'x' } })).status).toBe(401);
    const foreign = await patch({ name: 'Hijacked' }, rival);
    const missing = await patch({ name: 'Hijacked' }, rival, randomUUID());
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await json(foreign)).toEqual(await json(missing));
    const { rows } = await t.database.pool.query('SELECT name FROM employers WHERE id = $1', [employerId]);
    expect(rows[0].name).not.toBe('Hijacked');
  });
});

describe('PATCH /api/employers/{id}/team/{employeeId}', () => {
  const patch = (employeeId: string, body: unknown, token = owner, employer = employerId) =>
    t.request('PATCH', `/api/employers/${employer}/team/${employeeId}`, { token, body });

  it('changes salary, pause, wallets, department and cost centre, auditing before and after', async () => {
    const id = await addEmployee(owner, employerId, 'fields@edits.example', { annual_salary_usd: '50000', department: 'Ops' });
    const res = await patch(id, {
      annual_salary_usd: '60000.5',
      payroll_paused: true,
      wallet_address: '0x2222222222222222222222222222222222222222',
      solana_wallet_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
      department: 'Engineering',
      cost_centre: 'ENG-1',
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      id,
      annual_salary_usd: '60000.500000',
      payroll_paused: true,
      wallet_address: '0x2222222222222222222222222222222222222222',
      solana_wallet_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
      department: 'Engineering',
      cost_centre: 'ENG-1',
      status: 'active',
      unpayable_reason: 'payroll paused',
    });
    const cleared = await patch(id, { department: null, cost_centre: null });
    expect(await json(cleared)).toMatchObject({ department: null, cost_centre: null });

    const audit = await auditOf(id);
    expect(audit[0]).toMatchObject({
      action: 'employee.updated',
      actor_user_id: 'edit-owner',
      details: {
        before: { annual_salary_usd: '50000.000000', payroll_paused: false, wallet_address: null, department: 'Ops', cost_centre: null },
        after: { annual_salary_usd: '60000.500000', payroll_paused: true, department: 'Engineering', cost_centre: 'ENG-1' },
      },
    });
    // Only the fields that changed are recorded.
    expect(audit[1]?.details).toEqual({ before: { department: 'Engineering', cost_centre: 'ENG-1' }, after: { department: null, cost_centre: null } });
  });

  it('records a manual review with who and when', async () => {
    const id = await addEmployee(owner, employerId, 'review@edits.example');
    const res = await patch(id, { manual_review: { status: 'approved', note: 'wallet verified by phone' } });
    expect(res.status).toBe(200);
    const body = await json<{ manual_review_status: string; manual_review_note: string; manual_reviewed_at: string }>(res);
    expect(body).toMatchObject({ manual_review_status: 'approved', manual_review_note: 'wallet verified by phone' });
    expect(Date.now() - Date.parse(body.manual_reviewed_at)).toBeLessThan(60_000);
    const { rows } = await t.database.pool.query('SELECT manual_reviewed_by FROM employees WHERE id = $1', [id]);
    expect(rows[0].manual_reviewed_by).toBe('edit-owner');
  });

  it('removes an employee once: removing again is a no-op, any other edit is 409', async () => {
    const id = await addEmployee(owner, employerId, 'leaver@edits.example');
    const removed = await patch(id, { remove: true });
    expect(removed.status).toBe(200);
    const body = await json<{ status: string; removed_at: string }>(removed);
    expect(body.status).toBe('removed');
    expect(body.removed_at).toEqual(expect.any(String));

    const again = await patch(id, { remove: true });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ status: 'removed', removed_at: body.removed_at });

    for (const edit of [{ annual_salary_usd: '1' }, { remove: true, payroll_paused: true }, { manual_review: { status: 'approved' } }]) {
      const res = await patch(id, edit);
      expect(res.status, JSON.stringify(edit)).toBe(409);
      expect(await json(res)).toMatchObject({ code: 'EMPLOYEE_REMOVED' });
    }
    const audit = await auditOf(id);
    expect(audit.map((a) => a.action)).toEqual(['employee.removed']);
    // The team list no longer shows them.
    const team = await json<{ employees: { id: string }[] }>(await t.request('GET', `/api/employers/${employerId}/team?limit=500`, { token: owner }));
    expect(team.employees.map((e) => e.id)).not.toContain(id);
  });

  it('names the field of invalid input', async () => {
    const id = await addEmployee(owner, employerId, 'invalid@edits.example');
    const cases: [unknown, string][] = [
      [{}, 'json'],
      [[], 'json'],
      [{ annual_salary_usd: '-1' }, 'annual_salary_usd'],
      [{ annual_salary_usd: 1000 }, 'annual_salary_usd'],
      [{ annual_salary_usd: '1.1234567' }, 'annual_salary_usd'],
      [{ payroll_paused: 'yes' }, 'payroll_paused'],
      [{ remove: false }, 'remove'],
      [{ manual_review: { status: 'maybe' } }, 'manual_review.status'],
      [{ manual_review: {} }, 'manual_review.status'],
      [{ manual_review: { status: 'approved', extra: 1 } }, 'manual_review.extra'],
      [{ wallet_address: '0x12' }, 'wallet_address'],
      [{ solana_wallet_address: '0x2222222222222222222222222222222222222222' }, 'solana_wallet_address'],
      [{ solana_wallet_address: '1111111111111111111111111111111' }, 'solana_wallet_address'],
      [{ department: 'x'.repeat(101) }, 'department'],
      [{ email: 'new@edits.example' }, 'email'],
      [{ status: 'removed' }, 'status'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await json(res), JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    const bad = await t.request('PATCH', `/api/employers/${employerId}/team/not-a-uuid`, { token: owner, body: { payroll_paused: true } });
    expect(await json(bad)).toMatchObject({ field: 'employeeId' });
  });

  it("answers another employer's employee and a missing one identically, and changes nothing", async () => {
    const theirs = await addEmployee(rival, rivalEmployerId, 'theirs@rival.example', { annual_salary_usd: '10' });
    // Through my own employer id: their employee is not mine.
    const viaMine = await patch(theirs, { annual_salary_usd: '999999' });
    const missingViaMine = await patch(randomUUID(), { annual_salary_usd: '999999' });
    expect(viaMine.status).toBe(404);
    expect(missingViaMine.status).toBe(404);
    expect(await json(viaMine)).toEqual(await json(missingViaMine));
    // Through their employer id: the employer is not mine.
    const viaTheirs = await patch(theirs, { annual_salary_usd: '999999' }, owner, rivalEmployerId);
    const missingEmployer = await patch(theirs, { annual_salary_usd: '999999' }, owner, randomUUID());
    expect(viaTheirs.status).toBe(404);
    expect(await json(viaTheirs)).toEqual(await json(missingEmployer));
    expect((await t.request('PATCH', `/api/employers/${employerId}/team/${theirs}`, { body: { payroll_paused: true } })).status).toBe(401);

    const { rows } = await t.database.pool.query('SELECT annual_salary::text AS s FROM employees WHERE id = $1', [theirs]);
    expect(rows[0].s).toBe('10000000');
  });

  it('applies ten concurrent edits one after another: the audit trail is one unbroken chain', async () => {
    const id = await addEmployee(owner, employerId, 'race@edits.example', { annual_salary_usd: '1000' });
    const salaries = Array.from({ length: 10 }, (_, i) => `${2000 + i}.000000`);
    const results = await Promise.all(salaries.map((salary, i) => patch(id, { annual_salary_usd: salary, payroll_paused: i % 2 === 0 })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));

    // Each edit saw the one before it: following before -> after from the start visits every edit once.
    const audit = await auditOf(id);
    expect(audit).toHaveLength(10);
    const next = new Map<unknown, unknown>();
    for (const entry of audit) {
      expect(next.has(entry.details.before.annual_salary_usd), 'two edits started from the same value').toBe(false);
      next.set(entry.details.before.annual_salary_usd, entry.details.after.annual_salary_usd);
    }
    let value: unknown = '1000.000000';
    for (let i = 0; i < 10; i++) value = next.get(value);
    const { rows } = await t.database.pool.query('SELECT annual_salary::text AS s, payroll_paused FROM employees WHERE id = $1', [id]);
    expect(`${BigInt(rows[0].s) / 1_000_000n}.000000`).toBe(value);
    // The stored row is exactly one request's values (salary and pause written together).
    const winner = salaries.indexOf(value as string);
    expect(rows[0].payroll_paused).toBe(winner % 2 === 0);
  });

  it('a removal racing nine edits: edits before it succeed, edits after it get 409, none is lost', async () => {
    const id = await addEmployee(owner, employerId, 'race-remove@edits.example', { annual_salary_usd: '1' });
    const requests = Array.from({ length: 10 }, (_, i) => (i === 4 ? { remove: true as const } : { annual_salary_usd: `${100 + i}` }));
    const results = await Promise.all(requests.map((body) => patch(id, body)));
    expect(results[4]!.status).toBe(200);
    const succeeded = results.filter((r, i) => i !== 4 && r.status === 200).length;
    const refused = results.filter((r) => r.status === 409).length;
    expect(succeeded + refused).toBe(9);

    const audit = await auditOf(id);
    expect(audit.filter((a) => a.action === 'employee.updated')).toHaveLength(succeeded);
    expect(audit.filter((a) => a.action === 'employee.removed')).toHaveLength(1);
    const { rows } = await t.database.pool.query('SELECT status, removed_at FROM employees WHERE id = $1', [id]);
    expect(rows[0]).toMatchObject({ status: 'removed', removed_at: expect.any(Date) });
  });
});

describe('PATCH /api/employers/{id} with the Tempo chain', () => {
  let chained: TestApp;
  let token: string;
  let id: string;
  beforeAll(async () => {
    chained = await startTestApp({}, { chains: true });
    token = await chained.token('policy-owner', 'owner@policy.example');
    id = (await json<{ id: string }>(await chained.request('POST', '/api/employers', { token, body: { name: 'Policy Co' } }))).id;
  });
  afterAll(() => chained.close());

  it('accepts a policy that exists on chain and refuses one that does not with 422 POLICY_NOT_FOUND', async () => {
    const { policyId } = await chained.chains!.tempo.createPolicy('whitelist', []);
    const ok = await chained.request('PATCH', `/api/employers/${id}`, { token, body: { tip403_policy_id: Number(policyId) } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ tip403_policy_id: Number(policyId) });

    const unknown = await chained.request('PATCH', `/api/employers/${id}`, { token, body: { name: 'Renamed', tip403_policy_id: 987654 } });
    expect(unknown.status).toBe(422);
    expect(await json(unknown)).toMatchObject({ code: 'POLICY_NOT_FOUND', field: 'tip403_policy_id' });
    // Nothing of the refused request was stored.
    const { rows } = await chained.database.pool.query('SELECT name, tip403_policy_id::text AS policy FROM employers WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ name: 'Policy Co', policy: policyId.toString() });
  });
});
