import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { hashAgentKey, PaidCallers } from './paid-caller.js';

let t: TestApp;
let ownerToken: string;
let employerId: string;
let paidCallers: PaidCallers;

beforeAll(async () => {
  t = await startTestApp();
  ownerToken = await t.token('key-owner', 'owner@keys.example');
  employerId = ((await (await t.request('POST', '/api/employers', { token: ownerToken, body: { name: 'Keys Inc' } })).json()) as { id: string }).id;
  paidCallers = new PaidCallers({ database: t.database, verifyIdentity: t.verifyIdentity, users: t.services.users });
});
afterAll(() => t.close());

const rotate = (token = ownerToken, id = employerId) => t.request('POST', `/api/employers/${id}/agent-key`, { token });
const resolve = (headers: Record<string, string>) => paidCallers.resolve(new Headers(headers));

describe('POST /api/employers/{id}/agent-key', () => {
  it('shows a new key once, stores only its hash, and a rotation retires the old key', async () => {
    const first = await rotate();
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const one = (await first.json()) as { agent_key: string; prefix: string; rotated: boolean };
    expect(one.agent_key).toMatch(/^sk_agent_[A-Za-z0-9_-]{43}$/);
    expect(one.agent_key.startsWith(one.prefix)).toBe(true);
    expect(one.rotated).toBe(false);

    const { rows } = await t.database.pool.query('SELECT agent_key_hash, agent_key_prefix FROM employers WHERE id = $1', [employerId]);
    expect(rows[0]).toEqual({ agent_key_hash: hashAgentKey(one.agent_key), agent_key_prefix: one.prefix });
    expect(JSON.stringify(rows)).not.toContain(one.agent_key);
    expect(await resolve({ 'x-agent-key': one.agent_key })).toEqual({ kind: 'agent_key', employerId });

    const two = (await (await rotate()).json()) as { agent_key: string; rotated: boolean };
    expect(two.rotated).toBe(true);
    await expect(resolve({ 'x-agent-key': one.agent_key })).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(await resolve({ 'x-agent-key': two.agent_key })).toEqual({ kind: 'agent_key', employerId });
  });

  it("answers another owner's employer and a missing one alike", async () => {
    const rival = await t.token('key-rival');
    const foreign = await rotate(rival);
    const missing = await rotate(rival, randomUUID());
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual(await missing.json());
    expect((await rotate(rival, 'nope')).status).toBe(400);
    expect((await t.request('POST', `/api/employers/${employerId}/agent-key`)).status).toBe(401);
  });
});

describe('paid-route identity headers', () => {
  it('resolves a signed-in user, refuses bad tokens and keys, and treats no header as anonymous', async () => {
    const who = await resolve({ 'x-identity-token': ownerToken });
    expect(who.kind === 'user' && who.caller.ownedEmployerId).toBe(employerId);
    expect(PaidCallers.actsFor(who, employerId)).toBe(true);
    expect(PaidCallers.actsFor(who, randomUUID())).toBe(false);
    expect(await resolve({})).toEqual({ kind: 'anonymous' });
    await expect(resolve({ 'x-identity-token': 'garbage' })).rejects.toMatchObject({ status: 401, details: { field: 'X-Identity-Token' } });
    await expect(resolve({ 'x-agent-key': 'sk_agent_short' })).rejects.toMatchObject({ status: 401, details: { field: 'X-Agent-Key' } });
    await expect(resolve({ 'x-agent-key': 'a', 'x-identity-token': 'b' })).rejects.toMatchObject({ status: 400 });
  });
});
