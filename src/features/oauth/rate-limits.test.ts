import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildApp, type App } from '../../app.js';
import { createLogger } from '../../log.js';
import { readinessChecks } from '../ops/readiness.js';

/**
 * The OAuth endpoints' abuse limits, with two app instances over one database: what one instance
 * counted, the other refuses. Limits are small here (settings); client addresses come from the socket.
 */
let t: TestApp;
let apps: [App, App];

const REDIRECT = 'http://127.0.0.1:33418/callback';
const LIMITS = { RATE_LIMIT_OAUTH_REGISTER_PER_HOUR: '3', RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '2', RATE_LIMIT_OAUTH_TOKEN_PER_MINUTE: '3' };

/** What @hono/node-server hands the app: the socket getConnInfo reads the client address from. */
const fromAddress = (address: string) => ({ incoming: { socket: { remoteAddress: address, remotePort: 40000, remoteFamily: 'IPv4' } } });

async function send(instance: 0 | 1, address: string, path: string, init: RequestInit = {}): Promise<Response> {
  return apps[instance].request(path, init, fromAddress(address));
}
const register = (instance: 0 | 1, address: string) =>
  send(instance, address, '/api/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT] }) });
const authorize = (instance: 0 | 1, address: string, accept = 'application/json') =>
  send(instance, address, `/api/oauth/authorize?response_type=code&client_id=nobody&redirect_uri=${encodeURIComponent(REDIRECT)}`, { headers: { accept } });
const token = (instance: 0 | 1, address: string, clientId: string) =>
  send(instance, address, '/api/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: clientId }).toString(),
  });

async function expectRateLimited(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(await response.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/try again in \d+ s/), code: 'RATE_LIMITED' });
}

beforeAll(async () => {
  t = await startTestApp(LIMITS);
  const second = buildApp(
    { config: t.config, database: t.database, log: createLogger('silent'), verifyIdentity: t.verifyIdentity, devIdentityProvider: t.idp, readiness: readinessChecks(t.database, undefined) },
    t.services,
  );
  apps = [t.app, second];
});
afterAll(() => t?.close());

describe('OAuth abuse limits (two instances, one database)', () => {
  it('POST /api/oauth/register: the 4th registration from one address answers 429 with Retry-After, wherever it lands', async () => {
    expect((await register(0, '192.0.2.10')).status).toBe(201);
    expect((await register(1, '192.0.2.10')).status).toBe(201);
    expect((await register(0, '192.0.2.10')).status).toBe(201);
    await expectRateLimited(await register(1, '192.0.2.10'));
    await expectRateLimited(await register(0, '192.0.2.10'));
    // Another address is not affected.
    expect((await register(1, '192.0.2.11')).status).toBe(201);
  });

  it('GET /api/oauth/authorize: per address, JSON for clients and the HTML error page for browsers', async () => {
    expect((await authorize(0, '192.0.2.20')).status).toBe(400);
    expect((await authorize(1, '192.0.2.20')).status).toBe(400);
    await expectRateLimited(await authorize(0, '192.0.2.20'));
    const page = await authorize(1, '192.0.2.20', 'text/html');
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await page.text()).toMatch(/temporarily_unavailable/);
  });

  it('POST /api/oauth/authorize/decision: counted with authorize, refused in our error envelope', async () => {
    const decide = (instance: 0 | 1) =>
      send(instance, '192.0.2.25', '/api/oauth/authorize/decision', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await authorize(0, '192.0.2.25')).status).toBe(400);
    expect((await decide(1)).status).toBe(401);
    const refused = await decide(0);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({ error: expect.stringMatching(/^Too many authorization requests from this address; try again in \d+ s\.$/), code: 'RATE_LIMITED' });
  });

  it('POST /api/oauth/token: per address', async () => {
    for (const instance of [0, 1, 0] as const) expect((await token(instance, '192.0.2.30', `c-${instance}-${Math.random()}`)).status).toBeLessThan(429);
    await expectRateLimited(await token(1, '192.0.2.30', 'another-client'));
  });

  it('POST /api/oauth/token: per client_id, whichever addresses the requests come from', async () => {
    for (const [instance, address] of [[0, '192.0.2.41'], [1, '192.0.2.42'], [0, '192.0.2.43']] as const) {
      expect((await token(instance, address, 'one-client')).status).toBeLessThan(429);
    }
    await expectRateLimited(await token(1, '192.0.2.44', 'one-client'));
  });

  it('documents the 429 with Retry-After on each limited route', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    };
    for (const [path, method] of [['/api/oauth/register', 'post'], ['/api/oauth/authorize', 'get'], ['/api/oauth/authorize/decision', 'post'], ['/api/oauth/token', 'post']] as const) {
      expect(document.paths[path]![method]!.responses[429]?.headers, `${method} ${path}`).toHaveProperty('Retry-After');
    }
  });
});
