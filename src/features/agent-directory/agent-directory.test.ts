import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { Validator } from '@seriousme/openapi-schema-validator';
import { getBase58Decoder } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { createWalletClient, erc20Abi, getAddress, parseAbi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc8004Agent as ownedAgent } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { loseAnswer, proofMaker, railA, x402, type PayingFetch } from '../../../test/support/pay.js';
import { payments } from '../../payments/tables.js';
import { agentRegistrations } from './tables.js';
import type { AppEnv } from '../../http/context.js';
import { handleError } from '../../http/errors.js';
import { HttpMetrics } from '../../http/metrics.js';
import { requestContext } from '../../http/request-context.js';
import { validationHook } from '../../http/validation.js';
import { createLogger } from '../../log.js';
import { canonicalMessage } from '../agents/identity-proof.js';
import { agentDirectoryRoutes } from './routes.js';
import { AgentDirectoryService } from './service.js';
import { upsertRegistration } from './store.js';

const REGISTER = '/api/mpp/agents/register';
const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Someone who can sign for an identifier. */
interface Signer {
  identifier: string;
  sign(message: string): Promise<string>;
}

function evmSigner(account: PrivateKeyAccount, identifier: string = account.address): Signer {
  return { identifier, sign: (message) => account.signMessage({ message }) };
}

function solanaKey(): { publicKey: string; sign(message: string): string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { publicKey: base58(raw), sign: (message) => base58(sign(null, Buffer.from(message), privateKey)) };
}

function solanaSigner(key = solanaKey(), identifier = `solana:${key.publicKey}`): Signer & { publicKey: string } {
  return { identifier, publicKey: key.publicKey, sign: (message) => Promise.resolve(key.sign(message)) };
}

interface ProofOptions {
  /** What the signature covers, when it differs from what is sent. */
  signedPath?: string;
  signedBody?: string;
  timestamp?: number;
  identifier?: string;
}

async function proofHeaders(signer: Signer, body: string, options: ProofOptions = {}): Promise<Record<string, string>> {
  const timestamp = options.timestamp ?? nowSeconds();
  const identifier = options.identifier ?? signer.identifier;
  const message = canonicalMessage({
    identifier,
    method: 'POST',
    pathWithQuery: options.signedPath ?? REGISTER,
    timestamp,
    body: new TextEncoder().encode(options.signedBody ?? body),
  });
  return { 'X-Agent-Identifier': identifier, 'X-Agent-Timestamp': String(timestamp), 'X-Agent-Signature': await signer.sign(message) };
}

interface Profile {
  id: string;
  identifier: string;
  display_name: string;
  description: string | null;
  capabilities: string[];
  erc8004_agent_id: string | null;
  solana_public_key: string | null;
  owner_address: string | null;
  registered_at: string;
  updated_at: string;
  reputation_url: string | null;
}
type Registration = { created: boolean; agent: Profile };
type ErrorBody = { code: string; field?: string; error: string };

let t: TestApp;
let server: LoopbackServer;
let pay: PayingFetch;

const erc8004Agent = () => ownedAgent(t);

async function transferAgent(from: PrivateKeyAccount, to: Address, agentId: bigint): Promise<void> {
  const tempo = t.chains!.tempo;
  const wallet = createWalletClient({ account: from, chain: tempo.connection.chain, transport: tempo.connection.transport });
  const hash = await wallet.writeContract({
    address: tempo.contracts.agentIdentityRegistry,
    abi: parseAbi(['function transferFrom(address from, address to, uint256 agentId)']),
    functionName: 'transferFrom',
    args: [from.address, to, agentId],
  });
  await tempo.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
}

/** A paid registration; `headers` are added to (or override) the signer's proof. */
async function register(
  signer: Signer,
  profile: Record<string, unknown>,
  options: ProofOptions & { headers?: Record<string, string>; payer?: PayingFetch; path?: string } = {},
): Promise<Response> {
  const body = JSON.stringify(profile);
  const headers = { ...(await proofHeaders(signer, body, options)), ...options.headers };
  return (options.payer ?? pay)(options.path ?? REGISTER, { method: 'POST', body, headers });
}

async function expectRefused(res: Response, status: number, code: string, field?: string): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody;
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.code).toBe(code);
  if (field !== undefined) expect(body.field).toBe(field);
  return body;
}

const get = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: (await res.json()) as T };
};

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use('*', requestContext(createLogger('silent'), new HttpMetrics({ processMetrics: false })));
  app.route('/', agentDirectoryRoutes({ gate: t.payments!.gate, directory: new AgentDirectoryService(t.database, t.chains!.tempo) }));
  app.onError(handleError);
  // The paying clients reach the embedded chains through the full app's development routes.
  server = await serveOnLoopback((request) => (new URL(request.url).pathname.startsWith('/api/dev/') ? t.app.fetch(request) : app.fetch(request)));
  ({ pay } = await railA(t, server.url, '20'));
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('POST /api/mpp/agents/register', () => {
  it('answers 402 with a challenge on rails A, B and C before looking at anything else', async () => {
    const res = await fetch(`${server.url}${REGISTER}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(402);
    expect(res.headers.get('www-authenticate')).toMatch(/^Payment /);
    const required = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString()) as { accepts: { network: string }[] };
    expect(required.accepts.map((a) => a.network)).toEqual(expect.arrayContaining(['eip155:8453', t.chains!.solana.network]));
  });

  it('registers an ERC-8004 agent proven by its owner on the identity registry (201), stored canonically with the fee', async () => {
    const { owner, agentId } = await erc8004Agent();
    const signer = evmSigner(owner, `erc8004:tempo:${agentId}`);
    const res = await register(signer, { display_name: '  Invoice Auditor ', description: 'Audits invoices.', capabilities: ['invoice-audit', 'payroll'] });
    const body = (await res.json()) as Registration;
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(res.headers.get('payment-receipt')).toBeTruthy();
    expect(body).toEqual({
      created: true,
      agent: {
        id: expect.any(String),
        identifier: `erc8004:eip155:4217:${agentId}`,
        display_name: 'Invoice Auditor',
        description: 'Audits invoices.',
        capabilities: ['invoice-audit', 'payroll'],
        erc8004_agent_id: agentId.toString(),
        solana_public_key: null,
        owner_address: owner.address,
        registered_at: expect.any(String),
        updated_at: body.agent.registered_at,
        reputation_url: `/api/reputation/${agentId}`,
      },
    });
    const [row] = await t.database.db.select().from(agentRegistrations).where(eq(agentRegistrations.id, body.agent.id));
    const [fee] = await t.database.db.select().from(payments).where(eq(payments.id, row!.feePaymentId!));
    expect(fee).toMatchObject({ route: `POST ${REGISTER}`, amount: 100_000n });
  });

  it('registers a Solana identity proven by its Ed25519 key', async () => {
    const signer = solanaSigner();
    const res = await register(signer, { display_name: 'Solana Worker', capabilities: ['translation'] });
    const body = (await res.json()) as Registration;
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.agent).toMatchObject({
      identifier: `solana:${signer.publicKey}`,
      solana_public_key: signer.publicKey,
      erc8004_agent_id: null,
      owner_address: null,
      description: null,
      reputation_url: `/api/reputation/${signer.publicKey}`,
    });
  });

  it('registers an EVM address proven by an EIP-191 signature of that address', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const res = await register(evmSigner(account), { display_name: 'EVM Agent' });
    const body = (await res.json()) as Registration;
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.agent).toMatchObject({
      identifier: account.address.toLowerCase(),
      owner_address: account.address,
      erc8004_agent_id: null,
      solana_public_key: null,
      capabilities: [],
      reputation_url: null,
    });
    // Any spelling of the address is the same identity.
    const again = await register(evmSigner(account, account.address.toLowerCase()), { display_name: 'EVM Agent 2' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as Registration).agent).toMatchObject({ id: body.agent.id, display_name: 'EVM Agent 2' });
  });

  it('is paid on rails B and C too', async () => {
    for (const rail of ['B', 'C'] as const) {
      const { pay: payer } = await x402(t, server.url, rail, '1');
      const res = await register(solanaSigner(), { display_name: `Rail ${rail} agent` }, { payer });
      expect(res.status, await res.clone().text()).toBe(201);
      expect(res.headers.get('payment-response')).toBeTruthy();
    }
  });

  it('refuses a proof by the wrong key, stale, replayed, for another path or another body with 401, and keeps the fee', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const profile = { display_name: 'Careful Agent' };
    const body = JSON.stringify(profile);

    const wrongSigner = await register(evmSigner(stranger, account.address), profile);
    expect(wrongSigner.headers.get('payment-receipt')).toBeTruthy(); // charged: a decision after payment
    await expectRefused(wrongSigner, 401, 'PROOF_INVALID', 'X-Agent-Signature');

    await expectRefused(await register(evmSigner(account), profile, { timestamp: nowSeconds() - 301 }), 401, 'PROOF_STALE', 'X-Agent-Timestamp');
    await expectRefused(await register(evmSigner(account), profile, { timestamp: nowSeconds() + 360 }), 401, 'PROOF_STALE');
    await expectRefused(await register(evmSigner(account), profile, { signedPath: '/api/mpp/agent/pay' }), 401, 'PROOF_INVALID');
    await expectRefused(await register(evmSigner(account), profile, { signedPath: `${REGISTER}?x=1` }), 401, 'PROOF_INVALID');
    await expectRefused(await register(evmSigner(account), profile, { signedBody: JSON.stringify({ display_name: 'Other' }) }), 401, 'PROOF_INVALID');
    // Same JSON, other bytes: the signature covers the bytes.
    await expectRefused(await register(evmSigner(account), profile, { signedBody: `${body} ` }), 401, 'PROOF_INVALID');
    // The signed query must be the one sent.
    await expectRefused(await register(evmSigner(account), profile, { path: `${REGISTER}?x=1` }), 401, 'PROOF_INVALID');

    const headers = await proofHeaders(evmSigner(account), body);
    const first = await pay(REGISTER, { method: 'POST', body, headers });
    expect(first.status).toBe(201);
    await expectRefused(await pay(REGISTER, { method: 'POST', body, headers }), 401, 'PROOF_REPLAYED', 'X-Agent-Signature');

    const solana = solanaSigner();
    const forged = solanaSigner(solanaKey(), solana.identifier);
    await expectRefused(await register(forged, profile), 401, 'PROOF_INVALID');
  });

  it('refuses a missing proof with 401 PROOF_MISSING naming the header', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const body = JSON.stringify({ display_name: 'No Proof' });
    await expectRefused(await pay(REGISTER, { method: 'POST', body }), 401, 'PROOF_MISSING', 'X-Agent-Identifier');
    await expectRefused(await pay(REGISTER, { method: 'POST', body, headers: { 'X-Agent-Identifier': account.address } }), 401, 'PROOF_MISSING', 'X-Agent-Signature');
    const headers = await proofHeaders(evmSigner(account), body);
    await expectRefused(await pay(REGISTER, { method: 'POST', body, headers: { ...headers, 'X-Agent-Timestamp': '12.5' } }), 401, 'PROOF_INVALID');
  });

  it('refuses an ERC-8004 agent that is not on the registry', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const res = await register(evmSigner(account, 'erc8004:eip155:4217:999999999'), { display_name: 'Ghost' });
    const body = await expectRefused(res, 401, 'PROOF_INVALID', 'X-Agent-Identifier');
    expect(body.error).toMatch(/not registered/);
  });

  it('answers 400 naming X-Agent-Identifier for any other identifier form', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    for (const identifier of ['https://agent.example/card.json', 'erc8004:eip155:1:5', 'erc8004:tempo:abc', 'solana:notakey', 'buyer-bot-7']) {
      const res = await register(evmSigner(account, identifier), { display_name: 'Bad Id' });
      await expectRefused(res, 400, 'VALIDATION_ERROR', 'X-Agent-Identifier');
    }
  });

  it('answers 400 naming the body field', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'display_name'],
      [{ display_name: '   ' }, 'display_name'],
      [{ display_name: 'x'.repeat(81) }, 'display_name'],
      [{ display_name: 'Line\nbreak' }, 'display_name'],
      [{ display_name: 'Ok', description: 'x'.repeat(501) }, 'description'],
      [{ display_name: 'Ok', capabilities: ['Upper'] }, 'capabilities.0'],
      [{ display_name: 'Ok', capabilities: ['-lead'] }, 'capabilities.0'],
      [{ display_name: 'Ok', capabilities: ['a'.repeat(41)] }, 'capabilities.0'],
      [{ display_name: 'Ok', capabilities: Array.from({ length: 21 }, (_, i) => `cap-${i}`) }, 'capabilities'],
      [{ display_name: 'Ok', capabilities: ['same', 'same'] }, 'capabilities'],
      [{ display_name: 'Ok', capabilities: 'payroll' }, 'capabilities'],
      [{ display_name: 'Ok', solana_public_key: '0x1234' }, 'solana_public_key'],
      [{ display_name: 'Ok', displayName: 'typo' }, 'json'],
    ];
    for (const [profile, field] of cases) {
      const res = await register(evmSigner(account), profile);
      const body = await expectRefused(res, 400, 'VALIDATION_ERROR');
      expect(body.field, JSON.stringify(profile)).toBe(field);
    }
    const notJson = await pay(REGISTER, { method: 'POST', body: '{"display_name":', headers: await proofHeaders(evmSigner(account), '{"display_name":') });
    await expectRefused(notJson, 400, 'INVALID_JSON', 'body');
    const text = JSON.stringify({ display_name: 'Text' });
    const plain = await pay(REGISTER, { method: 'POST', body: text, headers: { ...(await proofHeaders(evmSigner(account), text)), 'content-type': 'text/plain' } });
    await expectRefused(plain, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type');
  });

  it('lets the same identity replace its profile (200) and nobody else take the identifier over', async () => {
    const solana = solanaSigner();
    const first = (await (await register(solana, { display_name: 'First', description: 'one', capabilities: ['a'] })).json()) as Registration;
    const res = await register(solana, { display_name: 'Second', capabilities: ['b', 'c'] });
    const second = (await res.json()) as Registration;
    expect(res.status, JSON.stringify(second)).toBe(200);
    expect(second).toMatchObject({
      created: false,
      agent: { id: first.agent.id, display_name: 'Second', description: null, capabilities: ['b', 'c'], registered_at: first.agent.registered_at },
    });
    expect(Date.parse(second.agent.updated_at)).toBeGreaterThan(Date.parse(first.agent.updated_at));

    // Another key signing for the same identifier proves nothing.
    const intruder = solanaSigner(solanaKey(), solana.identifier);
    await expectRefused(await register(intruder, { display_name: 'Hijacked' }), 401, 'PROOF_INVALID');
    const { body: profile } = await get<Profile>(`/api/agents/profile/${first.agent.id}`);
    expect(profile.display_name).toBe('Second');
  });

  it("follows an ERC-8004 agent's owner on the registry: after a transfer only the new owner can update it", async () => {
    const { owner, agentId } = await erc8004Agent();
    const identifier = `erc8004:eip155:4217:${agentId}`;
    expect((await register(evmSigner(owner, identifier), { display_name: 'Transferable' })).status).toBe(201);
    const buyer = privateKeyToAccount(generatePrivateKey());
    await transferAgent(owner, buyer.address, agentId);

    await expectRefused(await register(evmSigner(owner, identifier), { display_name: 'Old owner' }), 401, 'PROOF_INVALID');
    const res = await register(evmSigner(buyer, identifier), { display_name: 'New owner' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Registration).agent).toMatchObject({ display_name: 'New owner', owner_address: buyer.address });
  });

  it('links a Solana key to an ERC-8004 agent only with that key’s signature of the same request', async () => {
    const { owner, agentId } = await erc8004Agent();
    const signer = evmSigner(owner, `erc8004:eip155:4217:${agentId}`);
    const key = solanaKey();
    const profile = { display_name: 'Linked', solana_public_key: key.publicKey };
    const body = JSON.stringify(profile);

    // EIP-191 and Ed25519 signatures are deterministic: each attempt signs its own timestamp.
    await expectRefused(await register(signer, profile, { timestamp: nowSeconds() - 2 }), 401, 'PROOF_MISSING', 'X-Agent-Solana-Signature');
    const other = solanaKey();
    const headers = await proofHeaders(signer, body, { timestamp: nowSeconds() - 1 });
    const wrong = other.sign(canonicalMessage({ identifier: signer.identifier, method: 'POST', pathWithQuery: REGISTER, timestamp: Number(headers['X-Agent-Timestamp']), body: Buffer.from(body) }));
    await expectRefused(await pay(REGISTER, { method: 'POST', body, headers: { ...headers, 'X-Agent-Solana-Signature': wrong } }), 401, 'PROOF_INVALID', 'X-Agent-Solana-Signature');

    const good = await proofHeaders(signer, body);
    const message = canonicalMessage({ identifier: signer.identifier, method: 'POST', pathWithQuery: REGISTER, timestamp: Number(good['X-Agent-Timestamp']), body: Buffer.from(body) });
    const res = await pay(REGISTER, { method: 'POST', body, headers: { ...good, 'X-Agent-Solana-Signature': key.sign(message) } });
    const linked = (await res.json()) as Registration;
    expect(res.status, JSON.stringify(linked)).toBe(201);
    expect(linked.agent).toMatchObject({ solana_public_key: key.publicKey, erc8004_agent_id: agentId.toString(), reputation_url: `/api/reputation/${agentId}` });

    // A re-registration without the key removes the link (the body is the whole profile).
    const unlinked = (await (await register(signer, { display_name: 'Linked' })).json()) as Registration;
    expect(unlinked.agent.solana_public_key).toBeNull();

    // A Solana identity's key is its identifier.
    const solana = solanaSigner();
    await expectRefused(await register(solana, { display_name: 'Mismatch', solana_public_key: key.publicKey }), 400, 'VALIDATION_ERROR', 'solana_public_key');
    expect((await register(solana, { display_name: 'Same key', solana_public_key: solana.publicKey })).status).toBe(201);
  });

  it('creates exactly one registration when two first registrations race (one 201, one 200)', async () => {
    const service = new AgentDirectoryService(t.database, t.chains!.tempo);
    const signer = solanaSigner();
    const attempt = async (name: string) => {
      const body = JSON.stringify({ display_name: name });
      const headers = new Headers(await proofHeaders(signer, body));
      return service.register({
        headers,
        method: 'POST',
        pathWithQuery: REGISTER,
        body: new TextEncoder().encode(body),
        profile: { displayName: name, description: null, capabilities: [], solanaPublicKey: null },
        feePaymentId: randomUUID(),
      });
    };
    const results = await Promise.all([attempt('Racer A'), attempt('Racer B')]);
    expect(results.map((r) => r.created).sort()).toEqual([false, true]);
    expect(results[0]!.registration.id).toBe(results[1]!.registration.id);
    expect(await service.findByIdentifier(signer.publicKey)).toMatchObject({ id: results[0]!.registration.id });
  });
});

describe('charge before acting', () => {
  /** A registration sent with the given payment proof headers (and the signer's proof), as bytes that can be sent again. */
  async function paidRegistration(signer: Signer, profile: Record<string, unknown>, proof: Record<string, string>) {
    const body = JSON.stringify(profile);
    const headers = { ...(await proofHeaders(signer, body)), ...proof, 'content-type': 'application/json' };
    return () => fetch(`${server.url}${REGISTER}`, { method: 'POST', headers, body });
  }
  const registrationOf = async (identifier: string) => (await t.database.db.select().from(agentRegistrations).where(eq(agentRegistrations.identifier, identifier)))[0];

  it('two registrations at once from a payer who can cover one fee: one registered, the other refused before anything is written', async () => {
    const poor = await proofMaker(t, server.url, 'A', '0.10');
    const signers = [solanaSigner(), solanaSigner()];
    const sends = await Promise.all(signers.map(async (signer, i) => paidRegistration(signer, { display_name: `Racer ${i}` }, await poor.proof(REGISTER))));
    const responses = await Promise.all(sends.map((send) => send()));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 402]);
    expect(((await responses.find((r) => r.status === 402)!.json()) as ErrorBody).code).toBe('PAYMENT_SETTLEMENT_FAILED');
    const rows = await Promise.all(signers.map((signer) => registrationOf(`solana:${signer.publicKey}`)));
    expect(rows.filter(Boolean)).toHaveLength(1);
    expect(rows.findIndex(Boolean)).toBe(responses.findIndex((r) => r.status === 201));
  });

  it('a fee settled whose answer was lost: the same proof and request get the first registration back, written once', async () => {
    const payer = await proofMaker(t, server.url, 'A', '1');
    const signer = solanaSigner();
    const send = await paidRegistration(signer, { display_name: 'Redeemed', capabilities: ['ledger'] }, await payer.proof(REGISTER));
    const first = await send();
    const firstBody = (await first.json()) as Registration;
    expect(first.status, JSON.stringify(firstBody)).toBe(201);
    const written = await registrationOf(`solana:${signer.publicKey}`);
    await loseAnswer(t, { payer: payer.payer });

    const again = await send();
    const againBody = (await again.json()) as Registration;
    expect(again.status, JSON.stringify(againBody)).toBe(201);
    expect(againBody).toEqual(firstBody);
    // Not written again (an upsert would have moved updated_at), one fee taken, and the proof spent now.
    expect(await registrationOf(`solana:${signer.publicKey}`)).toEqual(written);
    expect(await stablecoinOf(payer.payer)).toBe(1_000_000n - 100_000n);
    const third = await send();
    expect(third.status).toBe(402);
    expect(((await third.json()) as ErrorBody).code).toBe('PAYMENT_ALREADY_USED');
  });
});

/** A rail A payer's stablecoin on Tempo. */
const stablecoinOf = (address: string) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });

describe('GET /api/agents/directory and /api/agents/profile/{id}', () => {
  const marker = `zq${randomUUID().slice(0, 8)}`;
  const names = ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo'].map((n) => `${n} ${marker}`);
  let ids: string[];

  beforeAll(async () => {
    // Five registrations in one transaction share created_at: only the id orders them.
    const rows = await t.database.transaction(async (tx) => {
      const created = [];
      for (const [i, name] of names.entries()) {
        const { row } = await upsertRegistration(tx.db, {
          identifier: privateKeyToAccount(generatePrivateKey()).address.toLowerCase(),
          displayName: name,
          description: null,
          erc8004AgentId: null,
          solanaPublicKey: null,
          ownerAddress: null,
          capabilities: i % 2 === 0 ? ['even', 'shared'] : ['odd', 'shared'],
          feePaymentId: randomUUID(),
        });
        created.push(row);
      }
      return created;
    });
    expect(new Set(rows.map((r) => r.createdAt.getTime())).size).toBe(1);
    ids = rows.map((r) => r.id);
  });

  type Page = { agents: Profile[]; next_cursor: string | null };

  it('pages newest first with an opaque cursor, without repeating or skipping', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const query: string = `q=${marker.toUpperCase()}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const { status, body }: { status: number; body: Page } = await get<Page>(`/api/agents/directory?${query}`);
      expect(status).toBe(200);
      sizes.push(body.agents.length);
      seen.push(...body.agents.map((a) => a.id));
      cursor = body.next_cursor;
    } while (cursor);
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual([...ids].sort().reverse()); // same created_at: id descending
  });

  it('pages over all registrations newest first', async () => {
    const { body } = await get<Page>('/api/agents/directory?limit=100');
    const times = body.agents.map((a) => Date.parse(a.registered_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(body.agents.length).toBeGreaterThan(5);
    expect(body.next_cursor).toBeNull();
  });

  it('filters by capability and name substring', async () => {
    const { body: odd } = await get<Page>(`/api/agents/directory?q=${marker}&capability=odd`);
    expect(odd.agents.map((a) => a.display_name).sort()).toEqual([names[1], names[3]]);
    const { body: one } = await get<Page>(`/api/agents/directory?q=${encodeURIComponent(`charlie ${marker}`)}`);
    expect(one.agents.map((a) => a.id)).toEqual([ids[2]]);
    const { body: none } = await get<Page>(`/api/agents/directory?q=${marker}&capability=nobody-has-this`);
    expect(none).toEqual({ agents: [], next_cursor: null });
    // LIKE wildcards are plain characters.
    const { body: literal } = await get<Page>(`/api/agents/directory?q=${encodeURIComponent('%')}`);
    expect(literal.agents).toEqual([]);
  });

  it('answers 400 naming the query field', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['capability=Not-A-Slug', 'capability'],
      [`q=${'x'.repeat(81)}`, 'q'],
      ['cursor=garbage', 'cursor'],
      [`cursor=${Buffer.from(`2026-01-01T00:00:00.000000Z|${randomUUID()}|x`).toString('base64url')}`, 'cursor'],
    ];
    for (const [query, field] of cases) {
      const { status, body } = await get<ErrorBody>(`/api/agents/directory?${query}`);
      expect(status, query).toBe(400);
      expect(body.field, query).toBe(field);
    }
  });

  it('shows a profile by registration id and by identifier in any accepted spelling', async () => {
    const { owner, agentId } = await erc8004Agent();
    const registered = (await (await register(evmSigner(owner, `erc8004:eip155:4217:${agentId}`), { display_name: 'Findable' })).json()) as Registration;
    const byId = await get<Profile>(`/api/agents/profile/${registered.agent.id}`);
    expect(byId).toEqual({ status: 200, body: registered.agent });
    for (const spelling of [`erc8004:eip155:4217:${agentId}`, `erc8004:tempo:${agentId}`]) {
      expect(await get<Profile>(`/api/agents/profile/${encodeURIComponent(spelling)}`)).toEqual({ status: 200, body: registered.agent });
    }
    const solana = solanaSigner();
    const solanaProfile = (await (await register(solana, { display_name: 'Findable too' })).json()) as Registration;
    expect((await get<Profile>(`/api/agents/profile/${solana.publicKey}`)).body.id).toBe(solanaProfile.agent.id);
    const service = new AgentDirectoryService(t.database, t.chains!.tempo);
    expect((await service.findByIdentifier(`erc8004:tempo:${agentId}`))?.id).toBe(registered.agent.id);
    expect((await service.findByIdentifier(getAddress(owner.address)))).toBeNull();
  });

  it('answers 404 for an unknown id or identifier', async () => {
    for (const id of [randomUUID(), encodeURIComponent('erc8004:tempo:123456789'), 'not-an-identifier', privateKeyToAccount(generatePrivateKey()).address]) {
      const { status, body } = await get<ErrorBody>(`/api/agents/profile/${id}`);
      expect(status, id).toBe(404);
      expect(body.code).toBe('NOT_FOUND');
    }
  });
});

describe('OpenAPI', () => {
  it('documents the three routes in a valid OpenAPI 3.0.3 document', async () => {
    const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    app.route('/', agentDirectoryRoutes({ gate: t.payments!.gate, directory: new AgentDirectoryService(t.database, t.chains!.tempo) }));
    const document = app.getOpenAPIDocument({ openapi: '3.0.3', info: { title: 't', version: '1.0.0' } }) as unknown as Record<string, any>;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    const registerOp = document.paths[REGISTER].post;
    expect(registerOp['x-payment']).toMatchObject({ price: '0.100000', rails: ['A', 'B', 'C'] });
    expect(Object.keys(registerOp.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '401', '402']));
    expect(registerOp.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['x-agent-identifier', 'x-agent-timestamp', 'x-agent-signature', 'x-agent-solana-signature']),
    );
    expect(document.components.schemas.AgentRegistrationRequest.required).toEqual(['display_name']);
    expect(document.paths['/api/agents/directory'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['q', 'capability', 'limit', 'cursor']);
    expect(document.paths['/api/agents/profile/{id}'].get.responses['404']).toBeDefined();
  });
});
