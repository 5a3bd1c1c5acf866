import { Validator } from '@seriousme/openapi-schema-validator';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import type { AppEnv } from './context.js';
import { idempotency } from './idempotency.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp({ MAX_BODY_BYTES: '2048' });
  token = await t.token('conventions-user');
});
afterAll(() => t.close());

describe('HTTP conventions', () => {
  it('answers an unknown route with a JSON 404', async () => {
    const res = await t.request('GET', '/api/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', error: expect.any(String) });
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await t.request('DELETE', '/api/employers');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED', allow: ['POST'] });
  });

  it('gives every response a request id, keeping a sane incoming one', async () => {
    const fresh = await t.request('GET', '/healthz');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-abc.123');
    const replaced = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id\twith junk' } });
    expect(replaced.headers.get('x-request-id')).not.toContain('junk');
    const failed = await t.request('GET', '/api/nope');
    expect(failed.headers.get('x-request-id')).toBeTruthy();
  });

  it('refuses a body over the size limit with 413', async () => {
    const res = await t.request('POST', '/api/employers', { token, body: { name: 'x'.repeat(4096) } });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('exposes the payment headers to browsers', async () => {
    const preflight = await t.request('OPTIONS', '/api/employers', {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    const res = await t.request('GET', '/healthz', { headers: { origin: 'https://app.example' } });
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',');
    for (const header of ['www-authenticate', 'payment-receipt', 'payment-required', 'payment-response']) {
      expect(exposed).toContain(header);
    }
  });

  it('reports health, readiness and metrics', async () => {
    expect(await (await t.request('GET', '/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: { ok: true } } });
    const metrics = await (await t.request('GET', '/metrics')).text();
    expect(metrics).toMatch(/http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(metrics).toMatch(/http_request_duration_seconds_bucket\{/);
    // Raw paths never become labels: unknown routes share one label.
    expect(metrics).toContain('route="unmatched"');
    expect(metrics).not.toContain('/api/no-such-thing');
  });
});

describe('Idempotency-Key', () => {
  let employerId: string;
  beforeAll(async () => {
    const res = await t.request('POST', '/api/employers', { token, body: { name: 'Idem Co' } });
    employerId = ((await res.json()) as { id: string }).id;
  });
  const add = (key: string, email: string, extra: Record<string, string> = {}) =>
    t.request('POST', `/api/employers/${employerId}/team`, {
      token,
      headers: { 'idempotency-key': key, ...extra },
      body: { email, full_name: 'Idem Person' },
    });

  it('replays the first response for a retry with the same key and body', async () => {
    const first = await add('key-1', 'first@idem.example');
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const retry = await add('key-1', 'first@idem.example');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(firstBody);
  });

  it('refuses the same key with a different body with 422', async () => {
    await add('key-2', 'second@idem.example');
    const res = await add('key-2', 'other@idem.example');
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    const { rows } = await t.database.pool.query("SELECT count(*)::int AS n FROM employees WHERE email = 'other@idem.example'");
    expect(rows[0].n).toBe(0);
  });

  it('keeps key spaces apart per caller', async () => {
    // Same key, same route, different bodies: shared key spaces would answer the second with 422.
    const first = await t.request('POST', '/api/employers', {
      token: await t.token('key-space-a'),
      headers: { 'idempotency-key': 'shared-key' },
      body: { name: 'A Co' },
    });
    const second = await t.request('POST', '/api/employers', {
      token: await t.token('key-space-b'),
      headers: { 'idempotency-key': 'shared-key' },
      body: { name: 'B Co' },
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await second.json()).toMatchObject({ name: 'B Co' });
    expect(second.headers.get('idempotent-replayed')).toBeNull();
  });

  it('lets concurrent retries of one key run the handler once', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => add('key-3', 'race@idem.example')));
    const statuses = results.map((r) => r.status);
    // The first runs; the others are replayed (201) or told it is still running (409).
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const audit = await t.database.pool.query(
      "SELECT count(*)::int AS n FROM audit_log a JOIN employees e ON e.id::text = a.target_id WHERE e.email = 'race@idem.example'",
    );
    expect(audit.rows[0].n).toBe(1);
  });

  it('stores a 4xx answer like any other result', async () => {
    const bad = await t.request('POST', '/api/employers/00000000-0000-4000-8000-000000000000/team', {
      token,
      headers: { 'idempotency-key': 'key-4' },
      body: { email: 'x@idem.example', full_name: 'X' },
    });
    expect(bad.status).toBe(404);
    const retry = await t.request('POST', '/api/employers/00000000-0000-4000-8000-000000000000/team', {
      token,
      headers: { 'idempotency-key': 'key-4' },
      body: { email: 'x@idem.example', full_name: 'X' },
    });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('releases the key when the handler fails with 5xx or throws, so the retry runs again', async () => {
    let calls = 0;
    const app = new Hono<AppEnv>();
    app.use('*', async (c, next) => {
      c.set('caller', { userId: 'u', email: null, isPlatformAdmin: false, ownedEmployerId: null, employeeIds: [] });
      await next();
    });
    app.post('/flaky', idempotency(t.database), (c) => {
      calls++;
      if (calls === 1) return c.json({ error: 'boom', code: 'X' }, 503);
      if (calls === 2) throw new Error('crash');
      return c.json({ calls }, 200);
    });
    app.onError((_error, c) => c.json({ error: 'crash', code: 'INTERNAL_ERROR' }, 500));
    const post = () => app.request('/flaky', { method: 'POST', headers: { 'idempotency-key': 'flaky-1' }, body: '{}' });
    expect((await post()).status).toBe(503);
    expect((await post()).status).toBe(500);
    const third = await post();
    expect(third.status).toBe(200);
    expect(await third.json()).toEqual({ calls: 3 });
    const replay = await post();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(calls).toBe(3);
  });

  it('replays a 204 as a 204 without a body, and runs the handler once', async () => {
    let calls = 0;
    const app = new Hono<AppEnv>();
    app.use('*', async (c, next) => {
      c.set('caller', { userId: 'u204', email: null, isPlatformAdmin: false, ownedEmployerId: null, employeeIds: [] });
      await next();
    });
    app.delete('/thing', idempotency(t.database), (c) => {
      calls++;
      return c.body(null, 204);
    });
    const remove = () => app.request('/thing', { method: 'DELETE', headers: { 'idempotency-key': 'delete-1' } });
    expect((await remove()).status).toBe(204);
    const replay = await remove();
    expect(replay.status).toBe(204);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe('');
    expect(calls).toBe(1);
  });

  it('validates the key itself', async () => {
    const res = await add('x'.repeat(256), 'long@idem.example');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field: 'Idempotency-Key' });
  });
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.0.3 document with version 1.0.0 and the MCP extension', async () => {
    const res = await t.request('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    const document = (await res.json()) as Record<string, any>;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.0.3');
    expect(document.info.version).toBe('1.0.0');
    expect(document['x-mcp-server']).toMatchObject({ url: `${t.config.publicBaseUrl}/api/mcp` });
  });

  it('describes the slice routes from the same schemas that validate them', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as Record<string, any>;
    const create = document.paths['/api/employers'].post;
    expect(create.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '401']));
    const team = document.paths['/api/employers/{id}/team'];
    expect(team.get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'page', 'limit']));
    const body = document.components.schemas.CreateEmployeeRequest;
    expect(body.required).toEqual(expect.arrayContaining(['email', 'full_name']));
  });
});
