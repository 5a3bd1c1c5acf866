import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { Hono, type Context } from 'hono';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { proofMaker } from '../../../test/support/pay.js';
import { ConfigError, loadConfig } from '../../config.js';
import { createLogger } from '../../log.js';
import { openPayments } from '../index.js';
import type { PaidRoute } from '../prices.js';
import { embeddedFacilitator } from './embedded-facilitator.js';
import { facilitatorAuthHeaders, type FacilitatorApiKey } from './facilitator-auth.js';
import { liveX402Rails, type X402Rails } from './rails.js';

/**
 * A hosted facilitator that demands CDP-style signed JWTs (the embedded facilitator behind HTTP,
 * refusing any request whose token does not verify against the API key's public key, names
 * another key or request, or lives too long): a rail B payment goes through only with the key.
 */
const PRICE = 10_000n;
const KEY_ID = 'organizations/test-org/apiKeys/test-key';
let t: TestApp;
let facilitator: LoopbackServer;
/** The app, with paid routes behind live-mode payments (keyed and open). */
let app: LoopbackServer;
let served = 0;
/** The public key the facilitator trusts for KEY_ID (tests swap it to try both key kinds). */
let trusted: KeyObject;
/** Every token the facilitator accepted, and how many requests it turned away. */
const accepted: string[] = [];
/** Every token any request carried, accepted or not. */
const presented: string[] = [];
let refused = 0;
let settled = 0;

// CDP hands out EC keys as SEC1 PEM ("BEGIN EC PRIVATE KEY") and Ed25519 keys as base64 of seed + public key.
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const ecKey: FacilitatorApiKey = { keyId: KEY_ID, keySecret: ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString() };
const ed = generateKeyPairSync('ed25519');
const edJwk = ed.privateKey.export({ format: 'jwk' });
const edKey: FacilitatorApiKey = { keyId: KEY_ID, keySecret: Buffer.concat([Buffer.from(edJwk.d!, 'base64url'), Buffer.from(edJwk.x!, 'base64url')]).toString('base64') };

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  const inner = embeddedFacilitator(t.embeddedChains!);
  const api = new Hono();
  api.use(async (c, next) => {
    if (!(await authorised(c))) {
      refused += 1;
      return c.json({ error: 'unauthorized' }, 401);
    }
    await next();
  });
  api.get('/x402/supported', async (c) => c.json(await inner.getSupported()));
  api.post('/x402/verify', async (c) => {
    const { paymentPayload, paymentRequirements } = await c.req.json();
    return c.json(await inner.verify(paymentPayload, paymentRequirements));
  });
  api.post('/x402/settle', async (c) => {
    const { paymentPayload, paymentRequirements } = await c.req.json();
    const response = await inner.settle(paymentPayload, paymentRequirements);
    if (response.success) settled += 1;
    return c.json(response);
  });
  facilitator = await serveOnLoopback(api.fetch);

  // Paid routes behind openPayments' live branch, built from the settings with and without the key.
  const route = (path: string): PaidRoute => ({ method: 'POST', path, price: PRICE, rails: ['B'], unit: 'charge', card: false, effect: 'acts', summary: 'x' });
  for (const [name, env] of [
    ['keyed', { X402_FACILITATOR_KEY_ID: KEY_ID, X402_FACILITATOR_KEY_SECRET: ecKey.keySecret }],
    ['open', {}],
  ] as const) {
    const path = `/test/facilitator-auth/${name}`;
    t.app.post(path, (await livePayments(env)).gate(route(path)), (c) => c.json({ served: ++served }));
  }
  app = await serveOnLoopback(t.app.fetch);
});

/** openPayments' live branch (no embedded chains) with the X402_FACILITATOR_* settings, over the embedded Base. */
async function livePayments(env: Record<string, string>) {
  const chains = t.embeddedChains!;
  const settings = loadConfig({ X402_FACILITATOR_URL: `${facilitator.url}/x402`, ...env }).live;
  const config = {
    ...t.config,
    live: { ...t.config.live, ...settings, mppSecretKey: 'm'.repeat(32), baseUsdcAddress: chains.base.contracts.stablecoin!, solanaUsdcMint: chains.solana.mint, solanaNetwork: chains.solana.network },
  };
  return openPayments({ config, database: t.database, chains: t.chains!, paidCallers: t.services.paidCallers, log: createLogger('silent') });
}

afterAll(async () => {
  await app.close();
  await facilitator.close();
  await t.close();
});

/** The checks a hosted facilitator makes on `Authorization: Bearer <jwt>`. */
async function authorised(c: Context): Promise<boolean> {
  const token = /^Bearer (.+)$/.exec(c.req.header('Authorization') ?? '')?.[1];
  if (!token) return false;
  presented.push(token);
  try {
    const header = decodeProtectedHeader(token);
    const { payload } = await jwtVerify(token, trusted, { issuer: 'cdp', subject: KEY_ID, requiredClaims: ['nbf', 'exp'] });
    const url = new URL(c.req.url);
    const ok =
      header.kid === KEY_ID &&
      typeof header.nonce === 'string' &&
      header.nonce.length >= 16 &&
      payload.exp! - payload.nbf! <= 120 &&
      JSON.stringify(payload.uris) === JSON.stringify([`${c.req.method} ${url.host}${url.pathname}`]);
    if (ok) accepted.push(token);
    return ok;
  } catch {
    return false;
  }
}

const rails = (apiKey?: FacilitatorApiKey): X402Rails => {
  const chains = t.embeddedChains!;
  const facilitatorUrl = `${facilitator.url}/x402/`;
  return liveX402Rails({
    facilitatorUrl,
    createAuthHeaders: apiKey && facilitatorAuthHeaders(facilitatorUrl, apiKey),
    payTo: { evm: payee, solana: chains.solana.operator.address },
    baseUsdc: chains.base.contracts.stablecoin!,
    solanaMint: chains.solana.mint,
    solanaNetwork: chains.solana.network,
  });
};
const payee = privateKeyToAccount(generatePrivateKey()).address;

const balance = (owner: Address) =>
  t.embeddedChains!.base.connection.publicClient.readContract({ address: t.embeddedChains!.base.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** A funded payer's rail B payment for the price, built by the library's own client scheme. */
async function payment(requirement: PaymentRequirements): Promise<{ payer: Address; payload: PaymentPayload }> {
  const account = privateKeyToAccount(generatePrivateKey());
  const funded = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:8453', address: account.address, amount: '1' } });
  expect(funded.status).toBe(200);
  const { payload } = await new ExactEvmScheme(account).createPaymentPayload(2, requirement);
  return { payer: account.address, payload: { x402Version: 2, accepted: requirement, payload } };
}

const offer = (x402: X402Rails) => x402.requirements({ amountUnits: PRICE, resourceUrl: 'https://service.example/paid', description: 'x', rails: ['B'] });

describe('x402 facilitator auth (signed JWT)', () => {
  for (const [kind, apiKey, publicKey] of [
    ['ES256 (PEM EC key)', ecKey, ec.publicKey],
    ['EdDSA (base64 Ed25519 key)', edKey, createPublicKey(ed.privateKey)],
  ] as const) {
    it(`lets a rail B payment through with a ${kind}, one fresh token per request`, async () => {
      trusted = publicKey;
      const x402 = rails(apiKey);
      const before = accepted.length;
      const [requirement] = await offer(x402);
      const { payer, payload } = await payment(requirement!);
      const [payerBefore, payeeBefore] = [await balance(payer), await balance(payee)];

      expect(await x402.verify(payload, requirement!)).toMatchObject({ isValid: true, payer });
      expect(await x402.settle(payload, requirement!)).toMatchObject({ outcome: 'settled', response: { success: true } });
      expect(await balance(payer)).toBe(payerBefore - PRICE);
      expect(await balance(payee)).toBe(payeeBefore + PRICE);
      // supported, verify, settle: each with its own token.
      const tokens = accepted.slice(before);
      expect(tokens.length).toBeGreaterThanOrEqual(3);
      expect(new Set(tokens).size).toBe(tokens.length);
    });
  }

  it('never settles without the key, or with a key the facilitator does not trust', async () => {
    trusted = ec.publicKey;
    const [requirement] = await offer(rails(ecKey));
    const { payer, payload } = await payment(requirement!);
    const payerBefore = await balance(payer);
    const [settledBefore, refusedBefore] = [settled, refused];

    const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    // Everything the rails say: errors and outcomes (what the gate logs or answers) and the library's console lines.
    const said: string[] = [];
    const console = vi.spyOn(globalThis.console, 'warn').mockImplementation((...args: unknown[]) => void said.push(args.map(String).join(' ')));
    const tell = async (work: Promise<unknown>) => said.push(JSON.stringify(await work.catch((error: Error) => error.message)));
    try {
      for (const x402 of [rails(), rails({ keyId: KEY_ID, keySecret: stranger })]) {
        // The facilitator's /supported refuses first: nothing is ever sent to /verify or /settle.
        await expect(x402.verify(payload, requirement!)).rejects.toThrow(/no supported payment kinds/);
        const outcome = await x402.settle(payload, requirement!);
        expect(outcome).toMatchObject({ outcome: 'refused', response: { success: false, errorReason: 'facilitator_unavailable' } });
        said.push(JSON.stringify(outcome));
      }

      // A key revoked after start-up: /verify and /settle check every token too.
      const revoked = rails(ecKey);
      await offer(revoked);
      trusted = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
      await expect(revoked.verify(payload, requirement!)).rejects.toThrow(/verify failed \(401\)/);
      expect((await revoked.settle(payload, requirement!)).outcome).not.toBe('settled');
      await tell(revoked.verify(payload, requirement!));
      await tell(revoked.settle(payload, requirement!));
    } finally {
      console.mockRestore();
    }
    expect(said.join('\n')).toMatch(/401/);
    // No key material and no bearer token (a credential for two minutes) in any of it.
    for (const secret of [ecKey.keySecret, stranger, edKey.keySecret]) for (const line of secret.split('\n').filter(Boolean)) {
      if (!line.startsWith('-----')) expect(said.join('\n')).not.toContain(line);
    }
    expect(presented.length).toBeGreaterThan(accepted.length);
    for (const token of presented) expect(said.join('\n')).not.toContain(token.split('.')[2]);

    expect(refused).toBeGreaterThanOrEqual(refusedBefore + 4);
    expect(settled).toBe(settledBefore);
    expect(await balance(payer)).toBe(payerBefore);
  });
});

describe('live payments from the settings', () => {
  it('serve a paid route through the gate with the key, and refuse it without', async () => {
    trusted = ec.publicKey;
    const maker = await proofMaker(t, app.url, 'B', '0.01');
    const post = async (path: string) => fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(await maker.proof(path)) }, body: '{}' });
    const paid = await post('/test/facilitator-auth/keyed');
    expect(paid.status).toBe(200);
    expect(paid.headers.get('PAYMENT-RESPONSE')).toBeTruthy();
    expect(await balance(maker.payer as Address)).toBe(0n);

    // Without the key the 402 cannot even be built (the facilitator's /supported refuses).
    const settledBefore = settled;
    const refusedAnswer = await fetch(`${app.url}/test/facilitator-auth/open`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refusedAnswer.status).toBeGreaterThanOrEqual(500);
    expect(await refusedAnswer.text()).not.toContain(ecKey.keySecret.split('\n')[1]);
    expect(settled).toBe(settledBefore);
    expect(served).toBe(1);
  });
});

describe('X402_FACILITATOR_KEY_* settings', () => {
  it('take both key kinds, with escaped newlines in a one-line PEM', () => {
    const oneLine = ecKey.keySecret.trim().replaceAll('\n', '\\n');
    for (const secret of [oneLine, edKey.keySecret]) {
      const config = loadConfig({ X402_FACILITATOR_KEY_ID: KEY_ID, X402_FACILITATOR_KEY_SECRET: secret });
      expect(config.live.x402FacilitatorKey).toEqual({ keyId: KEY_ID, keySecret: secret });
    }
    expect(loadConfig({}).live.x402FacilitatorKey).toBeUndefined();
  });

  it('refuse half a key or an unreadable secret without quoting it', () => {
    const bad = [
      { X402_FACILITATOR_KEY_ID: KEY_ID },
      { X402_FACILITATOR_KEY_SECRET: edKey.keySecret },
      { X402_FACILITATOR_KEY_ID: KEY_ID, X402_FACILITATOR_KEY_SECRET: edKey.keySecret.slice(4) },
      // Seed and public key of two different keys.
      { X402_FACILITATOR_KEY_ID: KEY_ID, X402_FACILITATOR_KEY_SECRET: Buffer.concat([Buffer.from(edKey.keySecret, 'base64').subarray(0, 32), Buffer.alloc(32, 7)]).toString('base64') },
      { X402_FACILITATOR_KEY_ID: KEY_ID, X402_FACILITATOR_KEY_SECRET: ecKey.keySecret.replace(/\n[^\n]+\n/, '\n') },
      { X402_FACILITATOR_KEY_ID: KEY_ID, X402_FACILITATOR_KEY_SECRET: ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    ];
    for (const env of bad) {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(/X402_FACILITATOR_KEY/);
      const secret = env.X402_FACILITATOR_KEY_SECRET;
      if (secret) expect((error as ConfigError).message).not.toContain(secret.slice(40, 60));
    }
  });
});
