import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';

/** An announcement's expiry is a rule of the service's clock: the dev clock ends it (its own app: time never goes back). */
let t: TestApp;
let admin: string;
let user: string;

beforeAll(async () => {
  t = await startTestApp({ ADMIN_USER_IDS: 'clock-admin' });
  admin = await t.token('clock-admin', 'admin@platform.example');
  user = await t.token('clock-user', 'user@nowhere.example');
});
afterAll(() => t.close());

const at = (offsetMs: number) => new Date(t.database.clock.nowMs() + offsetMs).toISOString();

async function seen() {
  const banners = (await (await t.request('GET', '/api/announcements/active', { token: user })).json()) as { announcements: { id: string }[] };
  const listed = (await (await t.request('GET', '/api/admin/announcements', { token: admin })).json()) as { announcements: { id: string; state: string }[] };
  return { banners: banners.announcements.map((a) => a.id), states: listed.announcements.map((a) => [a.id, a.state]) };
}

it('expires an announcement once the service clock passes its expires_at', async () => {
  const res = await t.request('POST', '/api/admin/announcements', {
    token: admin,
    body: { title: 'Maintenance', body: 'Tonight.', severity: 'info', audience: 'all', published_at: at(-60_000), expires_at: at(3_600_000) },
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  expect(await seen()).toEqual({ banners: [id], states: [[id, 'active']] });

  await t.database.clock.advance(t.database.db, 7200);

  expect(await seen()).toEqual({ banners: [], states: [[id, 'expired']] });
});
