import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { nextPayment, utcDay } from './pay-schedule.js';

/** The pay schedule on PATCH /api/employers/{id} and on the Employer answer (issue 29). */

let t: TestApp;
let owner: string;
let rival: string;
let employerId: string;

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

beforeAll(async () => {
  t = await startTestApp();
  owner = await t.token('schedule-owner', 'owner@schedule.example');
  rival = await t.token('schedule-rival', 'rival@schedule.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Schedule Co' } }))).id;
  await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival Co' } });
});
afterAll(() => t.close());

const patch = (body: unknown, token = owner, id = employerId) => t.request('PATCH', `/api/employers/${id}`, { token, body });
const today = () => utcDay(new Date());

describe('pay schedule', () => {
  it('is null until set', async () => {
    const res = await t.request('GET', `/api/employers/${employerId}`, { token: owner });
    expect(await json(res)).toMatchObject({ pay_schedule: null });
  });

  it('sets each frequency with its anchor, answers the next pay date and period, and clears with null', async () => {
    const monthly = await patch({ pay_schedule: { frequency: 'monthly', pay_day: 31 } });
    expect(monthly.status).toBe(200);
    const next = nextPayment({ frequency: 'monthly', payDay: 31 }, today());
    expect((await json(monthly)).pay_schedule).toEqual({
      frequency: 'monthly',
      pay_day: 31,
      anchor_date: null,
      next_pay_date: next.payDate,
      next_period: next.period,
    });
    // The read answers the same.
    expect((await json(await t.request('GET', `/api/employers/${employerId}`, { token: owner }))).pay_schedule).toMatchObject({ next_pay_date: next.payDate });

    const semi = await json(await patch({ pay_schedule: { frequency: 'semi_monthly' } }));
    expect(semi.pay_schedule).toMatchObject({ frequency: 'semi_monthly', pay_day: null, anchor_date: null, next_pay_date: nextPayment({ frequency: 'semi_monthly' }, today()).payDate });

    const weekly = await json(await patch({ pay_schedule: { frequency: 'biweekly', anchor_date: '2026-01-02' } }));
    const biweeklyNext = nextPayment({ frequency: 'biweekly', anchorDate: '2026-01-02' }, today());
    expect(weekly.pay_schedule).toEqual({ frequency: 'biweekly', pay_day: null, anchor_date: '2026-01-02', next_pay_date: biweeklyNext.payDate, next_period: biweeklyNext.period });

    expect((await json(await patch({ pay_schedule: null }))).pay_schedule).toBeNull();
    const { rows } = await t.database.pool.query('SELECT pay_schedule, pay_day, pay_anchor_date FROM employers WHERE id = $1', [employerId]);
    expect(rows[0]).toEqual({ pay_schedule: null, pay_day: null, pay_anchor_date: null });
  });

  it('audits the change with before and after', async () => {
    await patch({ pay_schedule: { frequency: 'weekly', anchor_date: '2026-12-04' } });
    await patch({ pay_schedule: { frequency: 'monthly', pay_day: 15 } });
    const { rows } = await t.database.pool.query(
      "SELECT details FROM audit_log WHERE target_id = $1 AND action = 'employer.updated' ORDER BY created_at DESC LIMIT 1",
      [employerId],
    );
    expect(rows[0].details).toEqual({
      before: { pay_schedule: 'weekly', pay_day: null, pay_anchor_date: '2026-12-04' },
      after: { pay_schedule: 'monthly', pay_day: 15, pay_anchor_date: null },
    });
  });

  it('names the field of each invalid schedule and changes nothing', async () => {
    await patch({ pay_schedule: { frequency: 'monthly', pay_day: 28 } });
    const cases: [unknown, string, string][] = [
      [{ pay_schedule: 'monthly' }, 'pay_schedule', 'must be an object'],
      [{ pay_schedule: {} }, 'pay_schedule.frequency', 'must be one of: monthly, semi_monthly, biweekly, weekly'],
      [{ pay_schedule: { frequency: 'daily' } }, 'pay_schedule.frequency', 'must be one of: monthly, semi_monthly, biweekly, weekly'],
      [{ pay_schedule: { frequency: 'monthly' } }, 'pay_schedule.pay_day', 'is required'],
      [{ pay_schedule: { frequency: 'monthly', pay_day: 0 } }, 'pay_schedule.pay_day', 'must be at least 1'],
      [{ pay_schedule: { frequency: 'monthly', pay_day: 32 } }, 'pay_schedule.pay_day', 'must be at most 31'],
      [{ pay_schedule: { frequency: 'monthly', pay_day: 1.5 } }, 'pay_schedule.pay_day', 'must be a whole number'],
      [{ pay_schedule: { frequency: 'monthly', pay_day: '28' } }, 'pay_schedule.pay_day', 'must be a number'],
      // Another frequency's anchor is not a field of this one.
      [{ pay_schedule: { frequency: 'semi_monthly', pay_day: 15 } }, 'pay_schedule.pay_day', 'is not a field this request can change'],
      [{ pay_schedule: { frequency: 'weekly' } }, 'pay_schedule.anchor_date', 'is required'],
      [{ pay_schedule: { frequency: 'biweekly', anchor_date: '2026-02-30' } }, 'pay_schedule.anchor_date', 'must be a date (YYYY-MM-DD)'],
      [{ pay_schedule: { frequency: 'biweekly', anchor_date: '04/12/2026' } }, 'pay_schedule.anchor_date', 'must be a date (YYYY-MM-DD)'],
      [{ pay_schedule: { frequency: 'monthly', pay_day: 5, anchor_date: '2026-12-04' } }, 'pay_schedule.anchor_date', 'is not a field this request can change'],
      [{ pay_schedule: { frequency: 'weekly', anchor_date: '2026-12-04', pay_day: 5 } }, 'pay_schedule.pay_day', 'is not a field this request can change'],
      [{ pay_schedule: { frequency: 'monthly', pay_day: 5, day: 5 } }, 'pay_schedule.day', 'is not a field this request can change'],
    ];
    for (const [body, field, message] of cases) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const answer = await json(res);
      expect(answer, JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR', field });
      expect(answer.error, JSON.stringify(answer)).toBe(`${field}: ${message}`);
    }
    const { rows } = await t.database.pool.query('SELECT pay_schedule, pay_day FROM employers WHERE id = $1', [employerId]);
    expect(rows[0]).toEqual({ pay_schedule: 'monthly', pay_day: 28 });
  });

  it('answers another tenant exactly like a missing employer and changes nothing', async () => {
    const body = { pay_schedule: { frequency: 'weekly', anchor_date: '2026-12-04' } };
    const foreign = await patch(body, rival);
    const missing = await patch(body, rival, randomUUID());
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toEqual(await json(missing));
    const { rows } = await t.database.pool.query('SELECT pay_schedule FROM employers WHERE id = $1', [employerId]);
    expect(rows[0].pay_schedule).toBe('monthly');
  });

  it('the table refuses a schedule without its anchor, whatever writes it', async () => {
    await expect(t.database.pool.query("UPDATE employers SET pay_schedule = 'weekly', pay_day = NULL, pay_anchor_date = NULL WHERE id = $1", [employerId])).rejects.toThrow(
      /employers_pay_schedule_anchor/,
    );
    await expect(t.database.pool.query("UPDATE employers SET pay_schedule = NULL, pay_day = 3 WHERE id = $1", [employerId])).rejects.toThrow(/employers_pay_schedule_anchor/);
  });
});
