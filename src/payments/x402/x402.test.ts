import { generateKeyPairSigner, type Address as SolanaAddress, type KeyPairSigner } from '@solana/kit';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { Network, PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme, registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/v1';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { TransactionOnchainFailureError } from '@x402/svm';
import { ExactSvmSchemeV1 } from '@x402/svm/v1';
import { Hono } from 'hono';
import { erc20Abi, getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { embeddedFacilitator, embeddedSvmSigner } from './embedded-facilitator.js';
import { embeddedX402Rails, liveX402Rails, paymentRequiredHeader, type X402Rail, type X402Rails } from './rails.js';
import { fromV1Payload, toV1Accepts, v1Network, v2Network } from './v1.js';

/**
 * Real x402 clients (@x402/fetch with the exact EVM and SVM schemes, v2 and v1) paying a tiny Hono
 * route over HTTP that uses the rails: 402 offer, match, verify, claim, handler, settle.
 */
const PRICE = 10_000n; // 0.01 USD
let t: TestApp;
let app: LoopbackServer;
let server: LoopbackServer;
let appUrl: string;
let paidUrl: string;
let rails: X402Rails;
const payTo = { evm: privateKeyToAccount(generatePrivateKey()).address, solana: '' };
/** The route's exactly-once claims, as the gate does them in the database. */
const claimed = new Set<string>();
let handlerRuns = 0;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  app = await serveOnLoopback(t.app.fetch);
  appUrl = app.url;
  payTo.solana = (await generateKeyPairSigner()).address;
  rails = await embeddedX402Rails(t.embeddedChains!, payTo);
  server = await serveOnLoopback(paidRoute(rails).fetch);
  paidUrl = server.url;
});

afterAll(async () => {
  await server.close();
  await app.close();
  await t.close();
});


/**
 * `GET /paid/B`, `/paid/C`, `/paid/BC`: the gate's x402 part in miniature. `?v1` answers the 402
 * without the v2 header, as a server a v1 client understands.
 */
function paidRoute(x402: X402Rails): Hono {
  const route = new Hono();
  route.get('/paid/:rails', async (c) => {
    const offerRails = [...c.req.param('rails')] as X402Rail[];
    const v1Only = c.req.query('v1') !== undefined;
    const offer = { amountUnits: PRICE, resourceUrl: c.req.url, description: 'A paid test resource', rails: offerRails };
    const refuse = async (error: string) => {
      const required = await x402.paymentRequired({ ...offer, error });
      const headers: Record<string, string> = v1Only ? {} : { 'PAYMENT-REQUIRED': required.header };
      return c.json({ error, x402Version: 1, accepts: required.accepts }, 402, headers);
    };
    const header = c.req.header('PAYMENT-SIGNATURE') ?? c.req.header('X-PAYMENT');
    if (!header) return refuse('payment required');
    const decoded = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as unknown;
    const matched = x402.match(decoded, await x402.requirements(offer));
    if (!matched.ok) return refuse(matched.reason);
    const verified = await x402.verify(matched.payload, matched.requirement);
    if (!verified.isValid) return refuse(`${verified.invalidReason}: ${verified.invalidMessage ?? ''}`);
    const key = x402.proofKey(matched.payload);
    if (claimed.has(key)) return refuse('payment already used');
    claimed.add(key);
    handlerRuns += 1;
    const settlement = await x402.settle(matched.payload, matched.requirement);
    if (settlement.outcome !== 'settled') return refuse(`settlement ${settlement.outcome}: ${settlement.response.errorReason}`);
    const responseHeader = matched.version === 1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE';
    return c.json({ ok: true, payer: verified.payer }, 200, { [responseHeader]: encodePaymentResponseHeader(settlement.response) });
  });
  return route;
}

const faucet = async (network: string, address: string) => {
  const response = await t.request('POST', '/api/dev/faucet', { body: { network, address, amount: '5' } });
  expect(response.status).toBe(200);
};

const evmBalance = (owner: Address) =>
  t.embeddedChains!.base.connection.publicClient.readContract({
    address: t.embeddedChains!.base.contracts.stablecoin!,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });
const solBalance = (owner: string) => t.embeddedChains!.solana.tokenBalance(owner as SolanaAddress);

async function evmPayer(): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await faucet('eip155:8453', account.address);
  return account;
}
async function svmPayer(): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  await faucet(t.embeddedChains!.solana.network, signer.address);
  return signer;
}
const devRpc = () => `${appUrl}/api/dev/rpc/solana`;

/**
 * x402Client pays only the assets it knows (real USDC) unless told otherwise: local mode's tokens
 * live at other addresses on purpose, so a client opts in to them, capped at a dollar.
 */
function allowLocalTokens(client: x402Client): x402Client {
  const chains = t.embeddedChains!;
  const cap = '1000000';
  return client.setSpendControls({
    allowedAssets: [
      { network: 'eip155:8453', asset: chains.base.contracts.stablecoin!, maxAmountPerPayment: cap },
      { network: chains.solana.network as Network, asset: chains.solana.mint, maxAmountPerPayment: cap },
      // v1 requirements name networks the v1 way.
      { network: 'base' as Network, asset: chains.base.contracts.stablecoin!, maxAmountPerPayment: cap },
      { network: 'solana-devnet' as Network, asset: chains.solana.mint, maxAmountPerPayment: cap },
    ],
  });
}

/** A v2 payment built by the library's client scheme for these requirements (possibly altered). */
async function clientPayload(
  scheme: { createPaymentPayload(version: number, requirements: PaymentRequirements): Promise<{ payload: Record<string, unknown> }> },
  requirements: PaymentRequirements,
): Promise<PaymentPayload> {
  const { payload } = await scheme.createPaymentPayload(2, requirements);
  return { x402Version: 2, accepted: requirements, payload };
}

async function offered(rail: X402Rail, amountUnits = PRICE): Promise<PaymentRequirements> {
  const [requirement] = await rails.requirements({ amountUnits, resourceUrl: `${paidUrl}/paid/${rail}`, description: 'x', rails: [rail] });
  return requirement!;
}

describe('requirements', () => {
  it('offer what real clients need on both rails', async () => {
    const response = await fetch(`${paidUrl}/paid/BC`);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${paidUrl}/paid/BC`);
    const [evm, svm] = required.accepts;
    const chains = t.embeddedChains!;
    expect(evm).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '10000',
      asset: getAddress(chains.base.contracts.stablecoin!),
      payTo: payTo.evm,
      extra: { name: 'USD Coin', version: '2' },
    });
    expect(svm).toMatchObject({
      scheme: 'exact',
      network: chains.solana.network,
      amount: '10000',
      asset: chains.solana.mint,
      payTo: payTo.solana,
      extra: { feePayer: chains.solana.operator.address },
    });
    for (const requirement of required.accepts) expect(requirement.maxTimeoutSeconds).toBeGreaterThanOrEqual(60);

    // The v1 body names the same offers the v1 way.
    const body = (await response.json()) as { x402Version: number; accepts: Record<string, unknown>[] };
    expect(body.x402Version).toBe(1);
    expect(body.accepts).toEqual([
      expect.objectContaining({ network: 'base', maxAmountRequired: '10000', resource: `${paidUrl}/paid/BC`, payTo: payTo.evm, asset: evm!.asset }),
      expect.objectContaining({ network: 'solana-devnet', maxAmountRequired: '10000', payTo: payTo.solana, extra: { feePayer: chains.solana.operator.address } }),
    ]);
  });

  it('maps network names both ways', () => {
    expect(v1Network('eip155:8453')).toBe('base');
    expect(v2Network('base')).toBe('eip155:8453');
    expect(v2Network('solana-devnet')).toBe('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1');
    expect(v1Network('eip155:4217')).toBeUndefined();
    expect(v2Network('toString')).toBeUndefined();
    expect(toV1Accepts([{ scheme: 'exact', network: 'eip155:4217', amount: '1', asset: '0x', payTo: '0x', maxTimeoutSeconds: 60, extra: {} }], { url: 'u', description: 'd' })).toEqual([]);
  });

  it('encodes the PAYMENT-REQUIRED header exactly as @x402/core does, unicode included', () => {
    for (const description of ['plain', 'Café, naïve: 1 € ✓ 😀 \u202e', 'lone \ud800 surrogate', '']) {
      const required = { x402Version: 2, error: 'Payment required', resource: { url: 'http://127.0.0.1/x?y=1', description, mimeType: 'application/json' }, accepts: [] };
      expect(paymentRequiredHeader(required)).toBe(encodePaymentRequiredHeader(required as never));
    }
  });

  it('answers every 402 of one resource alike, and never another resource\'s or error\'s', async () => {
    const offer = { amountUnits: 10_000n, resourceUrl: 'http://127.0.0.1/a', description: 'A', rails: ['B', 'C'] as X402Rail[] };
    const first = await rails.paymentRequired(offer);
    expect(await rails.paymentRequired({ ...offer })).toEqual(first);
    const other = decodePaymentRequiredHeader((await rails.paymentRequired({ ...offer, resourceUrl: 'http://127.0.0.1/b' })).header);
    expect(other.resource.url).toBe('http://127.0.0.1/b');
    expect(decodePaymentRequiredHeader((await rails.paymentRequired({ ...offer, error: 'used' })).header).error).toBe('used');
    expect(decodePaymentRequiredHeader((await rails.paymentRequired({ ...offer, amountUnits: 20_000n })).header).accepts[0]!.amount).toBe('20000');
    expect(decodePaymentRequiredHeader(first.header).resource.url).toBe('http://127.0.0.1/a');
  });

  it('refuses a non-positive price', async () => {
    await expect(rails.requirements({ amountUnits: 0n, resourceUrl: 'http://x', description: 'x', rails: ['B'] })).rejects.toThrow(/positive/);
  });
});

describe('rail B: x402 exact on Base', () => {
  it('lets the unmodified fetch client pay, and moves exactly the price', async () => {
    const payer = await evmPayer();
    const client = allowLocalTokens(new x402Client());
    registerExactEvmScheme(client, { signer: payer });
    const payments: PaymentPayload[] = [];
    client.onAfterPaymentCreation(async ({ paymentPayload }) => void payments.push(paymentPayload));
    const [payerBefore, payeeBefore] = [await evmBalance(payer.address), await evmBalance(payTo.evm)];

    const response = await wrapFetchWithPayment(fetch, client)(`${paidUrl}/paid/B`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, payer: payer.address });
    const receipt = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await evmBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await evmBalance(payTo.evm)).toBe(payeeBefore + PRICE);

    // The same authorization again: the token has used its nonce, so the chain refuses it.
    const [payload] = payments;
    const requirement = await offered('B');
    const again = await rails.settle(payload!, requirement);
    expect(again.outcome).toBe('refused');
    expect(again.response.errorReason).toBe('invalid_exact_evm_nonce_already_used');
    const reverify = await rails.verify(payload!, requirement);
    expect(reverify).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
    expect(await evmBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await evmBalance(payTo.evm)).toBe(payeeBefore + PRICE);

    // And through the route, the claim refuses it before the handler.
    const runs = handlerRuns;
    const replay = await fetch(`${paidUrl}/paid/B`, { headers: { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') } });
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { error: string }).error).toMatch(/already used|nonce_already_used/);
    expect(handlerRuns).toBe(runs);
  });

  it('gives each payment its own proof key', async () => {
    const payer = await evmPayer();
    const scheme = new ExactEvmScheme(payer);
    const requirement = await offered('B');
    const one = await clientPayload(scheme, requirement);
    const two = await clientPayload(scheme, requirement);
    const authorization = one.payload.authorization as { nonce: string };
    expect(rails.proofKey(one)).toBe(
      `x402:eip155:8453:${requirement.asset.toLowerCase()}:${payer.address.toLowerCase()}:${authorization.nonce.toLowerCase()}`,
    );
    expect(rails.proofKey(two)).not.toBe(rails.proofKey(one));
  });

  it('refuses underpayment, another recipient, another network and an expired authorization, with reasons', async () => {
    const payer = await evmPayer();
    const scheme = new ExactEvmScheme(payer);
    const requirement = await offered('B');
    const before = await evmBalance(payer.address);

    const underpaid = await clientPayload(scheme, { ...requirement, amount: (PRICE - 1n).toString() });
    expect(rails.match(underpaid, [requirement])).toMatchObject({ ok: false, reason: expect.stringMatching(/none of this route's offers/) });
    expect(await rails.verify(underpaid, requirement)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch',
    });

    const elsewhere = await clientPayload(scheme, { ...requirement, payTo: privateKeyToAccount(generatePrivateKey()).address });
    expect(await rails.verify(elsewhere, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_recipient_mismatch' });

    const sepolia = await clientPayload(scheme, { ...requirement, network: 'eip155:84532' });
    expect(await rails.verify(sepolia, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_network_mismatch' });

    // validBefore = now - 60
    const expired = await clientPayload(scheme, { ...requirement, maxTimeoutSeconds: -60 });
    expect(BigInt((expired.payload.authorization as { validBefore: string }).validBefore)).toBeLessThan(BigInt(Math.floor(Date.now() / 1000)));
    expect(rails.match(expired, [requirement]).ok).toBe(false);
    expect(await rails.verify(expired, requirement)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_authorization_valid_before',
    });
    const settled = await rails.settle(expired, requirement);
    expect(settled).toMatchObject({ outcome: 'refused', response: { success: false, errorReason: 'invalid_exact_evm_payload_authorization_valid_before' } });

    // A forged signature, and a payload that is not an authorization at all.
    const genuine = await clientPayload(scheme, requirement);
    const forged = { ...genuine, payload: { ...genuine.payload, signature: `0x${'11'.repeat(65)}` } };
    expect(await rails.verify(forged, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_signature' });
    expect(rails.match({ ...genuine, payload: { signature: '0x12' } }, [requirement])).toMatchObject({ ok: false });

    expect(await evmBalance(payer.address)).toBe(before);
  });

  it('refuses an authorization the payer cannot cover', async () => {
    const broke = privateKeyToAccount(generatePrivateKey());
    const requirement = await offered('B');
    const payload = await clientPayload(new ExactEvmScheme(broke), requirement);
    expect(await rails.verify(payload, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_insufficient_balance' });
  });
});

describe('rail C: x402 exact on Solana', () => {
  it('lets the unmodified fetch client pay, and moves exactly the price', async () => {
    const payer = await svmPayer();
    const network = t.embeddedChains!.solana.network as Network;
    const client = allowLocalTokens(new x402Client()).register(network, new ExactSvmScheme(payer, { rpcUrl: devRpc() }));
    const payments: PaymentPayload[] = [];
    client.onAfterPaymentCreation(async ({ paymentPayload }) => void payments.push(paymentPayload));
    const [payerBefore, payeeBefore] = [await solBalance(payer.address), await solBalance(payTo.solana)];

    const response = await wrapFetchWithPayment(fetch, client)(`${paidUrl}/paid/C`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, payer: payer.address });
    const receipt = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network, payer: payer.address });
    expect(t.embeddedChains!.solana.transactionStatus(receipt.transaction as never)).toEqual({});
    expect(await solBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await solBalance(payTo.solana)).toBe(payeeBefore + PRICE);

    // The same transaction again through the same facilitator: its settlement cache refuses it.
    const [payload] = payments;
    const requirement = await offered('C');
    const again = await rails.settle(payload!, requirement);
    expect(again).toMatchObject({ outcome: 'refused', response: { errorReason: 'duplicate_settlement' } });

    // Through another facilitator (another instance, or after a restart): the chain refuses it.
    const otherInstance = await embeddedX402Rails(t.embeddedChains!, payTo);
    const reverified = await otherInstance.verify(payload!, requirement);
    expect(reverified).toMatchObject({ isValid: false, invalidMessage: expect.stringMatching(/AlreadyProcessed/) });
    const resettled = await otherInstance.settle(payload!, requirement);
    expect(resettled).toMatchObject({ outcome: 'refused', response: { errorReason: 'invalid_exact_svm_transaction_simulation_failed' } });

    // Sent anyway (no simulation), the chain refuses the replay and the facilitator's signer says so.
    const signer = embeddedSvmSigner(t.embeddedChains!.solana);
    const transaction = (payload!.payload as { transaction: string }).transaction;
    const signature = await signer.sendTransaction(await signer.signTransaction(transaction, t.embeddedChains!.solana.operator.address, network), network);
    expect(signature).toBe(receipt.transaction);
    const confirmation = signer.confirmTransaction(signature, network);
    await expect(confirmation).rejects.toBeInstanceOf(TransactionOnchainFailureError);
    await expect(confirmation).rejects.toThrow(/AlreadyProcessed/);
    expect(await solBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await solBalance(payTo.solana)).toBe(payeeBefore + PRICE);
  });

  it('keys a payment by its transaction message', async () => {
    const payer = await svmPayer();
    const scheme = new ExactSvmScheme(payer, { rpcUrl: devRpc() });
    const requirement = await offered('C');
    const one = await clientPayload(scheme, requirement);
    const two = await clientPayload(scheme, requirement); // a fresh memo nonce: another payment
    expect(rails.proofKey(one)).toMatch(new RegExp(`^x402:${requirement.network}:[0-9a-f]{64}$`));
    expect(rails.proofKey(two)).not.toBe(rails.proofKey(one));
  });

  it('refuses underpayment, another recipient and another network, with reasons', async () => {
    const payer = await svmPayer();
    const scheme = new ExactSvmScheme(payer, { rpcUrl: devRpc() });
    const requirement = await offered('C');
    const before = await solBalance(payer.address);

    const underpaid = await clientPayload(scheme, { ...requirement, amount: (PRICE - 1n).toString() });
    expect(rails.match(underpaid, [requirement]).ok).toBe(false);
    expect(await rails.verify(underpaid, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_payload_amount_mismatch' });
    expect(await rails.settle(underpaid, requirement)).toMatchObject({
      outcome: 'refused',
      response: { errorReason: 'invalid_exact_svm_payload_amount_mismatch' },
    });

    const elsewhere = await clientPayload(scheme, { ...requirement, payTo: (await generateKeyPairSigner()).address });
    expect(await rails.verify(elsewhere, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_payload_recipient_mismatch' });

    const mainnet = await clientPayload(scheme, { ...requirement, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' });
    expect(await rails.verify(mainnet, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_network_mismatch' });

    // A payer without the funds fails the chain's simulation.
    const broke = await generateKeyPairSigner();
    const unfunded = await clientPayload(new ExactSvmScheme(broke, { rpcUrl: devRpc() }), requirement);
    expect(await rails.verify(unfunded, requirement)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });

    expect(await solBalance(payer.address)).toBe(before);
  });
});

describe('x402 v1 clients', () => {
  it('pay rail B with X-PAYMENT, read from the 402 body', async () => {
    const payer = await evmPayer();
    const client = allowLocalTokens(new x402Client()).registerV1('base', new ExactEvmSchemeV1(payer));
    const sent: unknown[] = [];
    client.onAfterPaymentCreation(async ({ paymentPayload }) => void sent.push(paymentPayload));
    const [payerBefore, payeeBefore] = [await evmBalance(payer.address), await evmBalance(payTo.evm)];

    const response = await wrapFetchWithPayment(fetch, client)(`${paidUrl}/paid/B?v1`);
    expect(response.status).toBe(200);
    expect(sent[0]).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' });
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(decodePaymentResponseHeader(response.headers.get('X-PAYMENT-RESPONSE')!)).toMatchObject({ success: true, payer: payer.address });
    expect(await evmBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await evmBalance(payTo.evm)).toBe(payeeBefore + PRICE);
  });

  it('pay rail C with X-PAYMENT, read from the 402 body', async () => {
    const payer = await svmPayer();
    const client = allowLocalTokens(new x402Client()).registerV1('solana-devnet', new ExactSvmSchemeV1(payer, { rpcUrl: devRpc() }));
    const [payerBefore, payeeBefore] = [await solBalance(payer.address), await solBalance(payTo.solana)];

    const response = await wrapFetchWithPayment(fetch, client)(`${paidUrl}/paid/C?v1`);
    expect(response.status).toBe(200);
    expect(decodePaymentResponseHeader(response.headers.get('X-PAYMENT-RESPONSE')!)).toMatchObject({ success: true, payer: payer.address });
    expect(await solBalance(payer.address)).toBe(payerBefore - PRICE);
    expect(await solBalance(payTo.solana)).toBe(payeeBefore + PRICE);
  });

  it('maps a v1 payload to the v2 requirement of its network only', async () => {
    const requirements = await rails.requirements({ amountUnits: PRICE, resourceUrl: 'http://x/paid', description: 'x', rails: ['B', 'C'] });
    const mapped = fromV1Payload({ x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x' } }, requirements);
    expect(mapped).toMatchObject({ ok: true, requirement: requirements[0], payload: { x402Version: 2, accepted: requirements[0] } });
    expect(fromV1Payload({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: {} }, requirements)).toMatchObject({ ok: false });
    expect(fromV1Payload({ x402Version: 1, scheme: 'exact', network: 'mars', payload: {} }, requirements)).toMatchObject({ ok: false });
    expect(fromV1Payload({ x402Version: 1, scheme: 'upto', network: 'base', payload: {} }, requirements)).toMatchObject({ ok: false });
    expect(fromV1Payload({ x402Version: 1, scheme: 'exact', network: 'base' }, requirements)).toMatchObject({ ok: false });
    expect(rails.match({ x402Version: 3 }, requirements)).toMatchObject({ ok: false });
  });
});

describe('live mode: an HTTP facilitator', () => {
  let facilitatorServer: LoopbackServer;
  let facilitatorUrl: string;
  let failSettle = false;
  let hangSettle = false;

  /** A facilitator service (the x402 /supported, /verify, /settle API) over the embedded chains. */
  beforeAll(async () => {
    const facilitator = embeddedFacilitator(t.embeddedChains!);
    const api = new Hono();
    api.get('/supported', async (c) => c.json(await facilitator.getSupported()));
    api.post('/verify', async (c) => {
      const { paymentPayload, paymentRequirements } = await c.req.json();
      return c.json(await facilitator.verify(paymentPayload, paymentRequirements));
    });
    api.post('/settle', async (c) => {
      if (failSettle) return c.text('upstream timeout', 504);
      if (hangSettle) await new Promise(() => {});
      const { paymentPayload, paymentRequirements } = await c.req.json();
      return c.json(await facilitator.settle(paymentPayload, paymentRequirements));
    });
    facilitatorServer = await serveOnLoopback(api.fetch);
    facilitatorUrl = facilitatorServer.url;
  });

  afterAll(async () => {
    await facilitatorServer.close();
  });

  const live = (timeoutMs?: number) => {
    const chains = t.embeddedChains!;
    return liveX402Rails({
      facilitatorUrl,
      timeoutMs,
      payTo,
      baseUsdc: chains.base.contracts.stablecoin!,
      solanaMint: chains.solana.mint,
      solanaNetwork: chains.solana.network,
    });
  };

  it('builds the same offers and verifies and settles through the facilitator', async () => {
    const remote = live();
    const [evm, svm] = await remote.requirements({ amountUnits: PRICE, resourceUrl: `${paidUrl}/paid/BC`, description: 'x', rails: ['B', 'C'] });
    expect(evm).toEqual(await offered('B'));
    expect(svm).toEqual(await offered('C'));

    const evmPayerAccount = await evmPayer();
    const solanaPayer = await svmPayer();
    const [evmBefore, solBefore] = [await evmBalance(evmPayerAccount.address), await solBalance(solanaPayer.address)];
    for (const [payload, requirement] of [
      [await clientPayload(new ExactEvmScheme(evmPayerAccount), evm!), evm!],
      [await clientPayload(new ExactSvmScheme(solanaPayer, { rpcUrl: devRpc() }), svm!), svm!],
    ] as const) {
      expect(await remote.verify(payload, requirement)).toMatchObject({ isValid: true });
      expect(await remote.settle(payload, requirement)).toMatchObject({ outcome: 'settled', response: { success: true } });
    }
    expect(await evmBalance(evmPayerAccount.address)).toBe(evmBefore - PRICE);
    expect(await solBalance(solanaPayer.address)).toBe(solBefore - PRICE);

    const underpaid = await clientPayload(new ExactEvmScheme(evmPayerAccount), { ...evm!, amount: '1' });
    expect(await remote.verify(underpaid, evm!)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch' });
  });

  it('calls a settlement it cannot confirm unknown, and one never sent refused', async () => {
    const remote = live();
    const requirement = await offered('B');
    const payer = await evmPayer();
    const payload = await clientPayload(new ExactEvmScheme(payer), requirement);
    expect(await remote.verify(payload, requirement)).toMatchObject({ isValid: true });
    failSettle = true;
    try {
      expect(await remote.settle(payload, requirement)).toMatchObject({ outcome: 'unknown', response: { success: false } });
    } finally {
      failSettle = false;
    }

    const unreachable = liveX402Rails({
      facilitatorUrl: 'http://127.0.0.1:9',
      payTo,
      baseUsdc: requirement.asset as Address,
      solanaMint: t.embeddedChains!.solana.mint,
      solanaNetwork: t.embeddedChains!.solana.network,
    });
    expect(await unreachable.settle(payload, requirement)).toMatchObject({ outcome: 'refused', response: { errorReason: 'facilitator_unavailable' } });
  });

  it('gives up on a settlement the facilitator never answers after X402_FACILITATOR_TIMEOUT_MS, as unknown', async () => {
    const remote = live(500);
    const requirement = await offered('B');
    const payload = await clientPayload(new ExactEvmScheme(await evmPayer()), requirement);
    expect(await remote.verify(payload, requirement)).toMatchObject({ isValid: true });
    hangSettle = true;
    try {
      const started = Date.now();
      // Unknown, not refused: the facilitator may have sent the transfer; the reconciler finds out.
      expect(await remote.settle(payload, requirement)).toMatchObject({ outcome: 'unknown', response: { success: false } });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      hangSettle = false;
    }
  });
});
