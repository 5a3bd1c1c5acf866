import { randomUUID } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { and, eq } from 'drizzle-orm';
import { getAddress, type Address, type Hex } from 'viem';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { loadConfig } from '../../config.js';
import { auditLog } from '../../audit/tables.js';
import { employers } from '../employers/tables.js';
import { userTag, virtualAddress } from './address.js';
import { masterIdOf, virtualMasterAccount, VirtualMasterService } from './master.js';
import { virtualMasterStore as store } from '../employers/index.js';
import { mineSalt, saltOf } from './miner.js';

/**
 * POST/GET /api/employers/{id}/virtual-master on the embedded Tempo chain with a registry that
 * wants 2 zero bytes and a budget of 5,000 nonces per request (about 13 requests on average).
 */
const BUDGET = 5_000;
const ZERO_BYTES = 2;
let t: TestApp;
let serviceKey: Hex;

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

interface Status {
  employer_id: string;
  registered: boolean;
  virtual_master_id: string | null;
  virtual_master_address: Address;
  virtual_master_salt: Hex | null;
  virtual_master_tx_hash: Hex | null;
  next_start_nonce: string;
  zero_bytes: number;
  budget_per_request: number;
  mining: boolean;
}

async function newEmployer(name: string) {
  const token = await t.token(`vm-${randomUUID()}`, `${randomUUID().slice(0, 8)}@vm.example`);
  const response = await t.request('POST', '/api/employers', { token, body: { name } });
  expect(response.status).toBe(201);
  return { id: (await json<{ id: string }>(response)).id, token };
}

const route = (employerId: string) => `/api/employers/${employerId}/virtual-master`;

/** The smallest nonce whose salt passes the registry, by plain keccak (independent of the miner). */
function firstValidNonce(master: Address, from = 0): bigint {
  const message = new Uint8Array(52);
  message.set(Buffer.from(master.slice(2), 'hex'), 0);
  const view = new DataView(message.buffer);
  for (let nonce = from; ; nonce++) {
    view.setUint32(48, nonce);
    const hash = keccak_256(message);
    if (hash[0] === 0 && hash[1] === 0) return BigInt(nonce);
  }
}

beforeAll(async () => {
  t = await startTestApp({ VIRTUAL_MASTER_ZERO_BYTES: String(ZERO_BYTES), VIRTUAL_MASTER_BUDGET: String(BUDGET) }, { chains: true });
  serviceKey = t.embeddedChains!.tempo.operatorKey;
});

afterAll(async () => {
  await t?.close();
});

describe('GET, POST /api/employers/{id}/virtual-master', () => {
  it('mines over several 504s, each resuming where the last stopped, registers, and routes the employees\' virtual addresses', async () => {
    const { id, token } = await newEmployer('Mining Co');
    const before = await json<Status>(await t.request('GET', route(id), { token }));
    const master = virtualMasterAccount(serviceKey, id).address;
    expect(before).toEqual({
      employer_id: id,
      registered: false,
      virtual_master_id: null,
      virtual_master_address: master,
      virtual_master_salt: null,
      virtual_master_tx_hash: null,
      next_start_nonce: '0',
      zero_bytes: ZERO_BYTES,
      budget_per_request: BUDGET,
      mining: false,
    });

    let expectedNext = 0n;
    let response: Response | undefined;
    for (let request = 0; request < 400; request++) {
      response = await t.request('POST', route(id), { token });
      if (response.status !== 504) break;
      const body = await json<{ code: string; nextStartNonce: string }>(response);
      expectedNext += BigInt(BUDGET);
      expect(body).toMatchObject({ code: 'MINING_BUDGET_EXHAUSTED', nextStartNonce: expectedNext.toString() });
      expect((await json<Status>(await t.request('GET', route(id), { token }))).next_start_nonce).toBe(expectedNext.toString());
    }
    expect(response!.status).toBe(200);
    const registered = await json<Status>(response!);
    // Found within the last request's range, at the first valid nonce: nothing was skipped.
    const nonce = firstValidNonce(master);
    expect(nonce).toBeGreaterThanOrEqual(expectedNext);
    expect(nonce).toBeLessThan(expectedNext + BigInt(BUDGET));
    expect(registered).toMatchObject({
      registered: true,
      virtual_master_id: masterIdOf(master, saltOf(nonce)),
      virtual_master_address: master,
      virtual_master_salt: saltOf(nonce),
      virtual_master_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      mining: false,
    });
    expect(registered.virtual_master_id).toMatch(/^0x[0-9a-f]{8}$/);
    expect(await json<Status>(await t.request('GET', route(id), { token }))).toEqual(registered);

    // The registry forwards an employee's virtual address to this employer's master.
    const hired = await t.request('POST', `/api/employers/${id}/team`, { token, body: { email: `ada-${randomUUID().slice(0, 6)}@vm.example`, full_name: 'Ada' } });
    const employeeId = (await json<{ id: string }>(hired)).id;
    const deposit = virtualAddress(registered.virtual_master_id as Hex, userTag(id, employeeId));
    expect(await t.chains!.tempo.resolveVirtualAddress(deposit)).toBe(master);
    const receipt = await t.chains!.tempo.connection.receipt(registered.virtual_master_tx_hash!);
    expect(receipt?.status).toBe('success');
    expect(receipt?.from.toLowerCase()).toBe(master.toLowerCase());

    // Registered once: a second POST is a conflict and changes nothing.
    const again = await t.request('POST', route(id), { token });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ code: 'VIRTUAL_MASTER_REGISTERED' });
    const audit = await t.database.db.select().from(auditLog).where(and(eq(auditLog.employerId, id), eq(auditLog.action, 'virtual_master.registered')));
    expect(audit).toHaveLength(1);
  });

  it('stops exactly before the salt given startNonce, and the next POST finds it at exactly that nonce', async () => {
    const { id, token } = await newEmployer('Resume Co');
    const master = virtualMasterAccount(serviceKey, id).address;
    const nonce = firstValidNonce(master, 50_000);
    const stopped = await t.request('POST', route(id), { token, body: { startNonce: String(nonce - BigInt(BUDGET)) } });
    expect(stopped.status).toBe(504);
    expect(await json(stopped)).toMatchObject({ code: 'MINING_BUDGET_EXHAUSTED', nextStartNonce: nonce.toString() });
    // No startNonce: the remembered one.
    const found = await t.request('POST', route(id), { token, body: {} });
    expect(found.status).toBe(200);
    expect(await json(found)).toMatchObject({ virtual_master_salt: saltOf(nonce), virtual_master_id: masterIdOf(master, saltOf(nonce)) });
  });

  it('never moves the remembered nonce back', async () => {
    const { id, token } = await newEmployer('Forward Co');
    const master = virtualMasterAccount(serviceKey, id).address;
    // A stretch of 2 x BUDGET nonces without a valid salt, far from 0.
    let start = 1_000_000;
    for (;;) {
      const next = Number(firstValidNonce(master, start));
      if (next - start >= 2 * BUDGET) break;
      start = next + 1;
    }
    expect((await t.request('POST', route(id), { token, body: { startNonce: String(start + BUDGET) } })).status).toBe(504);
    expect((await t.request('POST', route(id), { token, body: { startNonce: String(start) } })).status).toBe(504);
    expect((await json<Status>(await t.request('GET', route(id), { token }))).next_start_nonce).toBe(String(start + 2 * BUDGET));
  });

  it('answers 404 for another tenant\'s employer and 400 for a bad startNonce', async () => {
    const owner = await newEmployer('Owner Co');
    const other = await newEmployer('Other Co');
    for (const method of ['GET', 'POST']) {
      const response = await t.request(method, route(owner.id), { token: other.token });
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await t.request('GET', route(randomUUID()), { token: owner.token })).status).toBe(404);
    expect((await t.request('GET', route(owner.id))).status).toBe(401);
    for (const startNonce of ['-1', '1.5', 'abc', '18446744073709551616', 5]) {
      const response = await t.request('POST', route(owner.id), { token: owner.token, body: { startNonce } });
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({ field: 'startNonce' });
    }
  });

  it('gives every employer its own master address, derived from the service key', async () => {
    const a = await newEmployer('A Co');
    const b = await newEmployer('B Co');
    const statusOf = async (e: { id: string; token: string }) => json<Status>(await t.request('GET', route(e.id), { token: e.token }));
    const [sa, sb] = [await statusOf(a), await statusOf(b)];
    expect(sa.virtual_master_address).not.toBe(sb.virtual_master_address);
    expect(sa.virtual_master_address).toBe(virtualMasterAccount(serviceKey, a.id).address);
    expect(virtualMasterAccount(`0x${'11'.repeat(32)}`, a.id).address).not.toBe(sa.virtual_master_address);
    expect(getAddress(sa.virtual_master_address)).not.toBe(t.chains!.tempo.serviceAddress);
  });

  it('recovers a registration that was broadcast before a crash instead of registering again', async () => {
    const { id, token } = await newEmployer('Crash Co');
    const master = virtualMasterAccount(serviceKey, id);
    const mined = await mineSalt({ address: master.address, zeroBytes: ZERO_BYTES, startNonce: 0n, budget: 5_000_000 });
    if (!mined.found) throw new Error('no salt');
    // What a request had done when it died: salt and transaction hash kept, the transaction mined.
    await store.savePendingSalt(t.database.db, id, { address: master.address, salt: mined.salt, nextNonce: mined.nonce + 1n });
    const written = await t.chains!.tempo.registerVirtualMaster(master, mined.salt, {
      beforeBroadcast: ({ hash }) => store.savePendingTxHash(t.database.db, id, mined.salt, hash),
    });
    const response = await t.request('POST', route(id), { token });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      registered: true,
      virtual_master_id: written.masterId.toLowerCase(),
      virtual_master_salt: mined.salt,
      virtual_master_tx_hash: written.txHash,
    });
  });

  it('registers a found salt that was never broadcast', async () => {
    const { id, token } = await newEmployer('Unsent Co');
    const master = virtualMasterAccount(serviceKey, id);
    const mined = await mineSalt({ address: master.address, zeroBytes: ZERO_BYTES, startNonce: 0n, budget: 5_000_000 });
    if (!mined.found) throw new Error('no salt');
    await store.savePendingSalt(t.database.db, id, { address: master.address, salt: mined.salt, nextNonce: mined.nonce + 1n });
    // Before it registers, GET shows no salt (only registrations are reported).
    expect(await json(await t.request('GET', route(id), { token }))).toMatchObject({ registered: false, virtual_master_salt: null, next_start_nonce: String(mined.nonce + 1n) });
    const response = await t.request('POST', route(id), { token });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ virtual_master_salt: mined.salt, virtual_master_id: masterIdOf(master.address, mined.salt) });
    expect(await t.chains!.tempo.virtualMaster(masterIdOf(master.address, mined.salt))).toBe(master.address);
  });

  it('refuses a second mining request for the same employer while one is running', async () => {
    const { id } = await newEmployer('Busy Co');
    const [row] = await t.database.db.select().from(employers).where(eq(employers.id, id));
    expect(row).toBeDefined();
    // A service with a long budget at 4 zero bytes (about 0.05% likely to find anything).
    const masters = new VirtualMasterService({
      database: t.database,
      employers: t.services.employers,
      tempo: t.chains!.tempo,
      serviceKey,
      budget: 2_000_000,
      zeroBytes: () => Promise.resolve(4),
    });
    const caller = { userId: row!.ownerUserId, email: null, isPlatformAdmin: false, ownedEmployerId: id, employeeIds: [] };
    const first = masters.register(caller, id, {}, null).then(
      () => 200,
      (error: { status?: number }) => error.status,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await masters.status(caller, id)).mining).toBe(true);
    await expect(masters.register(caller, id, {}, null)).rejects.toMatchObject({ status: 409, code: 'MINING_IN_PROGRESS' });
    expect([200, 504]).toContain(await first);
    expect((await masters.status(caller, id)).mining).toBe(false);
  });
});

describe('OpenAPI', () => {
  it('describes both routes; the document stays valid', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> }; responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const paths = document.paths['/api/employers/{id}/virtual-master']!;
    expect(Object.keys(paths.get!.responses).sort()).toEqual(['200', '400', '401', '404']);
    expect(Object.keys(paths.post!.responses).sort()).toEqual(['200', '400', '401', '404', '409', '415', '422', '504']);
    expect(paths.post!.requestBody?.required).toBe(false);
    expect(document.components.schemas.VirtualMasterRegisterBody!.properties.startNonce).toMatchObject({ type: 'string' });
    expect(Object.keys(document.components.schemas.VirtualMaster!.properties).sort()).toEqual([
      'budget_per_request', 'employer_id', 'mining', 'next_start_nonce', 'registered', 'virtual_master_address', 'virtual_master_id',
      'virtual_master_salt', 'virtual_master_tx_hash', 'zero_bytes',
    ]);
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });
});

describe('config', () => {
  const base = { APP_MODE: 'local', DATA_DIR: '/tmp/vm-config' };
  it('defaults to 4 zero bytes and 50,000,000 iterations; local mode may lower the difficulty', () => {
    expect(loadConfig(base).virtualMaster).toEqual({ zeroBytes: 4, budget: 50_000_000 });
    expect(loadConfig({ ...base, VIRTUAL_MASTER_ZERO_BYTES: '0', VIRTUAL_MASTER_BUDGET: '1000' }).virtualMaster).toEqual({ zeroBytes: 0, budget: 1000 });
    for (const bad of [{ VIRTUAL_MASTER_ZERO_BYTES: '5' }, { VIRTUAL_MASTER_ZERO_BYTES: '-1' }, { VIRTUAL_MASTER_BUDGET: '50000001' }, { VIRTUAL_MASTER_BUDGET: '0' }]) {
      expect(() => loadConfig({ ...base, ...bad })).toThrow(/VIRTUAL_MASTER_/);
    }
  });

  it('refuses a lower difficulty in live mode', () => {
    expect(() => loadConfig({ APP_MODE: 'live', VIRTUAL_MASTER_ZERO_BYTES: '2' })).toThrow(/VIRTUAL_MASTER_ZERO_BYTES: local mode only/);
  });
});
