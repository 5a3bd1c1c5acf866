import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OpenAPIHono } from '@hono/zod-openapi';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../../test/support/app.js';
import type { AppEnv } from './context.js';
import { webApp } from './web.js';

describe('the web app on the API port', () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'web-dist-'));
  fs.mkdirSync(path.join(dist, 'assets'));
  fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
  fs.writeFileSync(path.join(dist, 'assets', 'app-1234.js'), 'console.log(1)');
  fs.writeFileSync(path.join(os.tmpdir(), 'outside-web-dist.txt'), 'secret');
  const app = new OpenAPIHono<AppEnv>();
  const web = webApp(dist);
  app.get('/api/thing', (c) => c.json({ ok: true }));
  app.notFound((c) => web(c) ?? c.json({ code: 'NOT_FOUND' }, 404));
  afterAll(() => fs.rmSync(dist, { recursive: true, force: true }));

  it("serves the app's routes as index.html, assets by path, and leaves the API alone", async () => {
    for (const route of ['/', '/signin', '/dashboard', '/dashboard/payroll/abc', '/admin/announcements', '/portal/activity']) {
      const response = await app.request(route);
      expect({ route, status: response.status, type: response.headers.get('content-type') }).toEqual({ route, status: 200, type: 'text/html; charset=UTF-8' });
    }
    const asset = await app.request('/assets/app-1234.js');
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await (await app.request('/api/thing')).json()).toEqual({ ok: true });
    expect((await app.request('/api/nothing')).status).toBe(404);
    expect((await app.request('/elsewhere')).status).toBe(404);
    // A browser asking for a page that does not exist gets the app's own "not found" page, as a 404.
    const page = await app.request('/elsewhere', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect({ status: page.status, type: page.headers.get('content-type') }).toEqual({ status: 404, type: 'text/html; charset=UTF-8' });
    expect((await app.request('/api/nothing', { headers: { accept: 'text/html' } })).status).toBe(404);
  });

  it('never serves a file outside the build', async () => {
    for (const attempt of ['/../outside-web-dist.txt', '/assets/..%2F..%2Foutside-web-dist.txt', '/%2e%2e/outside-web-dist.txt']) {
      const response = await app.request(attempt);
      expect(await response.text()).not.toContain('secret');
    }
  });

  it('GET /api/session reports the caller and their roles', async () => {
    const t = await startTestApp();
    try {
      const owner = await t.token('session-owner', 'owner@session.example');
      const employer = (await (await t.request('POST', '/api/employers', { token: owner, body: { name: 'Session Co' } })).json()) as { id: string };
      const response = await t.request('GET', '/api/session', { token: owner });
      expect(await response.json()).toEqual({ user_id: 'session-owner', email: 'owner@session.example', is_platform_admin: false, owned_employer_id: employer.id, employee_ids: [] });
      expect((await t.request('GET', '/api/session')).status).toBe(401);
      expect(await (await t.request('GET', '/api/auth/options')).json()).toEqual({ dev_sign_in: true, login_url: null });
    } finally {
      await t.close();
    }
  });
});
