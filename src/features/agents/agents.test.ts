import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { agentProofHeaders } from '../../../test/support/agents.js';
import { auditLog } from '../../audit/tables.js';
import { agentAuthorizations } from './tables.js';
import { SecretBox } from './secret-box.js';

/**
 * Agent authorizations managed by the employer owner (spec 2.11, 3.3) and pause-all (4.8, 5.4):
 * defaults, validation naming the field, tenant isolation, the secret shown once and stored
 * sealed, rotation, revocation, restoring a halved cap, and pause-all refused to agents.
 */
let t: TestApp;
let owner: string;
let employerId: string;
let rival: string;
let rivalEmployerId: string;

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
const base = (id = employerId) => `/api/employers/${id}/agents/authorizations`;
const create = (body: Record<string, unknown>, token = owner, id = employerId) => t.request('POST', base(id), { token, body });
const validBody = (extra: Record<string, unknown> = {}) => ({
  label: 'Research agent',
  agent_identifier: `bot-${randomUUID()}`,
  per_tx_cap_usd: '10',
  per_day_cap_usd: '50',
  ...extra,
});

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  owner = await t.token('agents-owner', 'owner@agents.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: owner, body: { name: 'Agents Co' } }))).id;
  rival = await t.token('agents-rival', 'rival@agents.example');
  rivalEmployerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: rival, body: { name: 'Rival Co' } }))).id;
});

afterAll(async () => {
  await t?.close();
});

describe('creating an authorization', () => {
  it('applies the defaults, issues an HMAC secret once and stores it sealed', async () => {
    const response = await create(validBody());
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const created = await json<Record<string, unknown> & { id: string; hmac_secret: string }>(response);
    expect(created).toMatchObject({
      employer_id: employerId,
      identity_scheme: 'hmac',
      per_tx_cap_usd: '10.000000',
      per_day_cap_usd: '50.000000',
      velocity_per_minute: 5,
      allowed_recipients: null,
      paused_at: null,
      per_tx_cap_original_usd: null,
      cap_halved_at: null,
      elevated_per_tx_cap_usd: null,
    });
    expect(created.hmac_secret).toMatch(/^ahs_[A-Za-z0-9_-]{43}$/);

    const [row] = await t.database.db.select().from(agentAuthorizations).where(eq(agentAuthorizations.id, created.id));
    expect(row!.hmacSecretCiphertext).not.toContain(created.hmac_secret.slice(4));
    const box = new SecretBox({ configured: undefined, dataDir: t.dataDir });
    expect(await box.open(row!.hmacSecretCiphertext!, created.id)).toBe(created.hmac_secret);
    // Sealed to its row: the same ciphertext on another id does not open.
    await expect(box.open(row!.hmacSecretCiphertext!, randomUUID())).rejects.toThrow();

    const read = await json<Record<string, unknown>>(await t.request('GET', `${base()}/${created.id}`, { token: owner }));
    expect(read).not.toHaveProperty('hmac_secret');
    const [audit] = await t.database.db.select().from(auditLog).where(eq(auditLog.targetId, created.id));
    expect(audit).toMatchObject({ action: 'agent_authorization.created', actorUserId: 'agents-owner' });
  });

  it('infers the proof scheme from the identifier and issues no secret to key-holding agents', async () => {
    const erc = await json<{ identity_scheme: string; hmac_secret: string | null }>(await create(validBody({ agent_identifier: 'erc8004:tempo:9001' })));
    expect(erc).toMatchObject({ identity_scheme: 'erc8004', hmac_secret: null });
    const solana = await json<{ identity_scheme: string }>(await create(validBody({ agent_identifier: 'solana:4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T' })));
    expect(solana.identity_scheme).toBe('ed25519');
    const refused = await create(validBody({ identity_scheme: 'erc8004' }));
    expect(refused.status).toBe(400);
    expect(await json(refused)).toMatchObject({ field: 'identity_scheme' });
  });

  it('lets an EVM address prove itself with its own key (evm) instead of an HMAC secret, which stays the default', async () => {
    const address = '0x52908400098527886E0F7030069857D2E4169EE7';
    const evm = await json<{ id: string; identity_scheme: string; hmac_secret: string | null }>(await create(validBody({ agent_identifier: address, identity_scheme: 'evm' })));
    expect(evm).toMatchObject({ identity_scheme: 'evm', hmac_secret: null });
    expect((await t.request('POST', `${base()}/${evm.id}/rotate-secret`, { token: owner })).status).toBe(409);
    const byDefault = await json<{ identity_scheme: string }>(await create(validBody({ agent_identifier: '0x1000000000000000000000000000000000000abc' })));
    expect(byDefault.identity_scheme).toBe('hmac');
    for (const agent_identifier of [`bot-${randomUUID()}`, 'erc8004:tempo:9002', 'solana:4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T']) {
      const refused = await create(validBody({ agent_identifier, identity_scheme: 'evm' }));
      expect(refused.status, agent_identifier).toBe(400);
      expect(await json(refused)).toMatchObject({ field: 'identity_scheme' });
    }
  });

  it('answers 400 naming the field for missing or inconsistent caps and bad values', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ per_tx_cap_usd: undefined }, 'per_tx_cap_usd'],
      [{ per_day_cap_usd: undefined }, 'per_day_cap_usd'],
      [{ per_tx_cap_usd: '0' }, 'per_tx_cap_usd'],
      [{ per_tx_cap_usd: 1.5 }, 'per_tx_cap_usd'],
      [{ per_tx_cap_usd: '60' }, 'per_day_cap_usd'],
      [{ velocity_per_minute: 0 }, 'velocity_per_minute'],
      [{ allowed_recipients: ['0x123'] }, 'allowed_recipients.0'],
      [{ allowed_recipients: [] }, 'allowed_recipients'],
      [{ agent_identifier: 'has space' }, 'agent_identifier'],
      [{ label: '' }, 'label'],
      [{ elevated_per_tx_cap_usd: '5' }, 'elevated_per_tx_cap_usd'],
      [{ elevated_per_day_cap_usd: '20' }, 'elevated_per_day_cap_usd'],
      [{ surprise: true }, 'json'],
    ];
    for (const [change, field] of cases) {
      const response = await create(validBody(change));
      expect(response.status, JSON.stringify(change)).toBe(400);
      expect((await json<{ field: string }>(response)).field, JSON.stringify(change)).toBe(field);
    }
  });

  it('refuses a second active authorization for the same identifier (EVM addresses in any case), and allows it after revocation', async () => {
    const address = '0xABCDEF0123456789ABCDEF0123456789ABCDEF01';
    const first = await json<{ id: string; agent_identifier: string }>(await create(validBody({ agent_identifier: address })));
    expect(first.agent_identifier).toBe(address.toLowerCase());
    const again = await create(validBody({ agent_identifier: getAddress(address) }));
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ code: 'AGENT_IDENTIFIER_TAKEN' });
    expect((await t.request('DELETE', `${base()}/${first.id}`, { token: owner })).status).toBe(200);
    expect((await create(validBody({ agent_identifier: address }))).status).toBe(201);
  });

  it("answers another tenant's employer and authorizations exactly like missing ones", async () => {
    const mine = await json<{ id: string }>(await create(validBody()));
    const missing = await t.request('GET', `${base(randomUUID())}/${randomUUID()}`, { token: rival });
    const theirs = await t.request('GET', `${base()}/${mine.id}`, { token: rival });
    expect(missing.status).toBe(404);
    expect(theirs.status).toBe(404);
    expect(await json(theirs)).toEqual(await json(missing));
    for (const [method, path, body] of [
      ['POST', base(), validBody()],
      ['GET', base(), undefined],
      ['PATCH', `${base()}/${mine.id}`, { label: 'x' }],
      ['DELETE', `${base()}/${mine.id}`, undefined],
      ['POST', `${base()}/${mine.id}/restore-cap`, undefined],
      ['POST', `${base()}/${mine.id}/rotate-secret`, undefined],
      ['POST', `/api/employers/${employerId}/agents/pause-all`, { reason: 'hostile' }],
      ['DELETE', `/api/employers/${employerId}/agents/pause-all`, undefined],
    ] as const) {
      expect((await t.request(method, path, { token: rival, ...(body === undefined ? {} : { body }) })).status, `${method} ${path}`).toBe(404);
    }
    // And mine in the rival's path is not theirs either.
    expect((await t.request('GET', `${base(rivalEmployerId)}/${mine.id}`, { token: rival })).status).toBe(404);
    expect((await t.request('GET', base(), {})).status).toBe(401);
  });
});

describe('managing an authorization', () => {
  it('updates limits, lists active ones, and revokes idempotently', async () => {
    const created = await json<{ id: string }>(await create(validBody()));
    const updated = await t.request('PATCH', `${base()}/${created.id}`, {
      token: owner,
      body: { per_day_cap_usd: '80', velocity_per_minute: 9, allowed_recipients: ['0x1000000000000000000000000000000000000001'] },
    });
    expect(updated.status).toBe(200);
    expect(await json(updated)).toMatchObject({ per_day_cap_usd: '80.000000', velocity_per_minute: 9, allowed_recipients: ['0x1000000000000000000000000000000000000001'] });
    expect((await t.request('PATCH', `${base()}/${created.id}`, { token: owner, body: { per_day_cap_usd: '5' } })).status).toBe(400);
    expect((await t.request('PATCH', `${base()}/${created.id}`, { token: owner, body: {} })).status).toBe(400);

    const revoked = await json<{ revoked_at: string }>(await t.request('DELETE', `${base()}/${created.id}`, { token: owner }));
    expect(revoked.revoked_at).toEqual(expect.any(String));
    const again = await json<{ revoked_at: string }>(await t.request('DELETE', `${base()}/${created.id}`, { token: owner }));
    expect(again.revoked_at).toBe(revoked.revoked_at);
    const active = await json<{ authorizations: { id: string }[] }>(await t.request('GET', base(), { token: owner }));
    expect(active.authorizations.map((a) => a.id)).not.toContain(created.id);
    const all = await json<{ authorizations: { id: string }[] }>(await t.request('GET', `${base()}?include_revoked=true`, { token: owner }));
    expect(all.authorizations.map((a) => a.id)).toContain(created.id);
    const patchRevoked = await t.request('PATCH', `${base()}/${created.id}`, { token: owner, body: { label: 'back' } });
    expect(patchRevoked.status).toBe(409);
  });

  it('rotates the HMAC secret: the new one verifies, the old one no longer does', async () => {
    const created = await json<{ id: string; agent_identifier: string; hmac_secret: string }>(await create(validBody()));
    const rotated = await json<{ hmac_secret: string }>(await t.request('POST', `${base()}/${created.id}/rotate-secret`, { token: owner }));
    expect(rotated.hmac_secret).not.toBe(created.hmac_secret);
    const [row] = await t.database.db.select().from(agentAuthorizations).where(eq(agentAuthorizations.id, created.id));
    expect(await new SecretBox({ configured: undefined, dataDir: t.dataDir }).open(row!.hmacSecretCiphertext!, created.id)).toBe(rotated.hmac_secret);
    const erc = await json<{ id: string }>(await create(validBody({ agent_identifier: 'erc8004:tempo:77' })));
    expect((await t.request('POST', `${base()}/${erc.id}/rotate-secret`, { token: owner })).status).toBe(409);
  });

  it('restores a halved cap once, and says when the cap is not halved', async () => {
    const created = await json<{ id: string }>(await create(validBody()));
    const notHalved = await t.request('POST', `${base()}/${created.id}/restore-cap`, { token: owner });
    expect(notHalved.status).toBe(409);
    expect(await json(notHalved)).toMatchObject({ code: 'CAP_NOT_HALVED' });
    await t.database.db
      .update(agentAuthorizations)
      .set({ perTxCap: 5_000_000n, perTxCapOriginal: 10_000_000n, capHalvedAt: new Date() })
      .where(eq(agentAuthorizations.id, created.id));
    const restored = await json(await t.request('POST', `${base()}/${created.id}/restore-cap`, { token: owner }));
    expect(restored).toMatchObject({ per_tx_cap_usd: '10.000000', per_tx_cap_original_usd: null, cap_halved_at: null });
    expect((await t.request('POST', `${base()}/${created.id}/restore-cap`, { token: owner })).status).toBe(409);
  });
});

describe('pause-all', () => {
  it('pauses every active authorization with the reason, and DELETE resumes them', async () => {
    const other = await t.token('pause-owner', 'pause@agents.example');
    const id = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: other, body: { name: 'Pause Co' } }))).id;
    const a = await json<{ id: string; label: string }>(await create(validBody({ label: 'A' }), other, id));
    const b = await json<{ id: string; label: string }>(await create(validBody({ label: 'B' }), other, id));
    const response = await t.request('POST', `/api/employers/${id}/agents/pause-all`, { token: other, body: { reason: 'Suspicious activity' } });
    expect(response.status).toBe(200);
    const paused = await json<{ paused_authorizations: { id: string; label: string }[] }>(response);
    expect(paused).toMatchObject({ success: true, paused_count: 2, pause_reason: 'Suspicious activity', paused_at: expect.any(String) });
    expect(paused.paused_authorizations).toEqual(expect.arrayContaining([{ id: a.id, label: 'A' }, { id: b.id, label: 'B' }]));
    const listed = await json<{ authorizations: { paused_at: string | null; pause_reason: string }[] }>(await t.request('GET', base(id), { token: other }));
    expect(listed.authorizations.every((x) => x.paused_at !== null && x.pause_reason === 'Suspicious activity')).toBe(true);
    // Pausing again pauses nothing new.
    expect(await json(await t.request('POST', `/api/employers/${id}/agents/pause-all`, { token: other, body: { reason: 'again' } }))).toMatchObject({ paused_count: 0 });

    const resumed = await json(await t.request('DELETE', `/api/employers/${id}/agents/pause-all`, { token: other }));
    expect(resumed).toMatchObject({ success: true, resumed_count: 2 });
    const after = await json<{ authorizations: { paused_at: string | null }[] }>(await t.request('GET', base(id), { token: other }));
    expect(after.authorizations.every((x) => x.paused_at === null)).toBe(true);
    expect((await t.request('POST', `/api/employers/${id}/agents/pause-all`, { token: other, body: {} })).status).toBe(400);
  });

  it('is refused with 403 to any agent credential, even next to the owner token', async () => {
    const created = await json<{ agent_identifier: string; hmac_secret: string }>(await create(validBody()));
    const path = `/api/employers/${employerId}/agents/pause-all`;
    const body = JSON.stringify({ reason: 'agent tries' });
    const proof = await agentProofHeaders(created.agent_identifier, { hmac: created.hmac_secret }, { method: 'POST', path, body });
    const agentKey = await json<{ agent_key: string }>(await t.request('POST', `/api/employers/${employerId}/agent-key`, { token: owner }));
    const attempts: { token?: string; headers: Record<string, string> }[] = [
      { headers: proof },
      { token: owner, headers: proof },
      { token: owner, headers: { 'X-Agent-Key': agentKey.agent_key } },
      { headers: { authorization: `Bearer ${agentKey.agent_key}` } },
    ];
    for (const attempt of attempts) {
      for (const method of ['POST', 'DELETE']) {
        const response = await t.request(method, path, { ...attempt, body });
        expect(response.status).toBe(403);
        expect(await json(response)).toMatchObject({ code: 'HUMAN_OWNER_ONLY' });
      }
    }
    const [row] = await t.database.db.select().from(agentAuthorizations).where(eq(agentAuthorizations.agentIdentifier, created.agent_identifier));
    expect(row!.pausedAt).toBeNull();
  });
});
