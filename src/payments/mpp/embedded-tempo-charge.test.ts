import { Hono } from 'hono';
import { Challenge, Credential } from 'mppx';
import { Mppx as MppxClient, tempo } from 'mppx/client';
import { Mppx } from 'mppx/server';
import { TxEnvelopeTempo } from 'ox/tempo';
import { createClient, createWalletClient, custom, http, keccak256, toHex, type Address, type Chain, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { openEmbeddedEvmChain, type EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { stablecoinAbi } from '../../chains/evm/abis.js';
import { createEmbeddedTempoCharge, SettlementRefusedError, type EmbeddedTempoCharge } from './embedded-tempo-charge.js';

/**
 * The local rail A method behind a real HTTP route, paid by the unmodified mppx client against the
 * dev RPC: pull (signed Tempo transaction, settled later) and push (hash) credentials, and the
 * refusals, each with its reason in the 402.
 */
const PRICE = 10_000n; // 0.01 USDC.e
const REALM = 'local.test';

let t: TestApp;
let server: LoopbackServer;
let base: string;
let chain: EmbeddedEvmChain;
let charge: EmbeddedTempoCharge;
let token: Address;
/** Authorization headers the paid route accepted, newest last. */
const accepted: string[] = [];

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  chain = t.embeddedChains!.tempo;
  token = chain.contracts.stablecoin!;
  charge = createEmbeddedTempoCharge({ chain });
  const mppx = Mppx.create({ methods: [charge.method], secretKey: 'test-secret-key-of-at-least-32-bytes!!', realm: REALM });

  // As the payment gate does: validate before serving (nothing moves); tests settle afterwards.
  const app = new Hono();
  app.get('/paid/:recipient', async (c) => {
    const split = c.req.query('split') as Address | undefined;
    const request = {
      amount: '0.01',
      currency: token,
      decimals: 6,
      recipient: c.req.param('recipient'),
      ...(split ? { splits: [{ amount: '0.002', recipient: split }] } : {}),
    };
    const authorization = c.req.header('authorization');
    const challenge = async () => ((await mppx.tempo.charge(request)(new Request(c.req.url))) as { challenge: Response }).challenge;
    if (!authorization) return challenge();
    try {
      await mppx.validateCredential(authorization, { request });
    } catch (error) {
      const refusal = await challenge();
      return c.json({ detail: (error as Error).message }, 402, { 'WWW-Authenticate': refusal.headers.get('WWW-Authenticate')! });
    }
    accepted.push(authorization);
    return c.json({ served: true });
  });
  // Everything else (dev RPC, faucet) is the service itself.
  app.all('*', (c) => t.app.fetch(c.req.raw, c.env));
  server = await serveOnLoopback(app.fetch);
  base = server.url;
});

afterAll(async () => {
  await server.close();
  await t.close();
});

const faucet = async (address: Address, amount = '5') => {
  const response = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address, amount } });
  expect(response.status).toBe(200);
};
const balanceOf = (address: Address) => chain.connection.publicClient.readContract({ address: token, abi: stablecoinAbi, functionName: 'balanceOf', args: [address] });
const devRpc = async (method: string, params: unknown[]) => {
  const body = (await (await fetch(`${base}/api/dev/rpc/tempo`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as {
    result?: unknown;
    error?: { message: string };
  };
  if (body.error) throw new Error(body.error.message);
  return body.result;
};
const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;

/**
 * The unmodified mppx client method, signing through the dev RPC. With `claimChainId`, the RPC
 * claims to be another chain (so the client signs for that chain).
 */
function clientMethod(account: PrivateKeyAccount | Address, claimChainId?: number) {
  const rpc = http(`${base}/api/dev/rpc/tempo`);
  const transport = claimChainId
    ? custom({
        request: ({ method, params }) =>
          method === 'eth_chainId' ? Promise.resolve(toHex(claimChainId)) : rpc({ chain: tempoChain, retryCount: 0 }).request({ method, params } as never),
      })
    : rpc;
  const chain: Chain = claimChainId ? { ...tempoChain, id: claimChainId } : tempoChain;
  const client = createClient({ chain, transport, account });
  return tempo.charge({ account, getClient: () => client });
}

async function fundedPayer() {
  const payer = privateKeyToAccount(generatePrivateKey());
  await faucet(payer.address);
  return payer;
}

/** A 402 challenge for paying `recipient`. */
async function challengeFor(recipient: Address) {
  const response = await fetch(`${base}/paid/${recipient}`);
  expect(response.status).toBe(402);
  return Challenge.fromResponse(response);
}

/**
 * A credential for the real challenge whose transaction the unmodified client built from an altered
 * copy (another amount, recipient, chain, expiry or id): the server's HMAC and route checks pass,
 * so only the method's own checks stand between it and a 200.
 */
async function forged(payer: PrivateKeyAccount, recipient: Address, alter: (c: Challenge.Challenge) => Challenge.Challenge, claimChainId?: number) {
  const real = await challengeFor(recipient);
  const signed = await clientMethod(payer, claimChainId).createCredential({ challenge: alter(structuredClone(real)), context: {} } as never);
  return Credential.serialize({ ...Credential.deserialize(signed), challenge: real });
}

async function expectRefused(recipient: Address, credential: string, reason: RegExp) {
  const response = await fetch(`${base}/paid/${recipient}`, { headers: { authorization: credential } });
  expect(response.status).toBe(402);
  expect(response.headers.get('www-authenticate')).toMatch(/^Payment /);
  const problem = (await response.json()) as { detail: string };
  expect(problem.detail).toMatch(reason);
  return problem.detail;
}

describe('pull: the private-key client sends a signed Tempo transaction', () => {
  it('answers 200 without moving money, then settle pays exactly the price once', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const mppxClient = MppxClient.create({ methods: [clientMethod(payer)], polyfill: false });

    const response = await mppxClient.fetch(`${base}/paid/${recipient}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ served: true });
    const credential = accepted.at(-1)!;
    const decoded = Credential.deserialize<{ type: string; signature: Hex }>(credential);
    expect(decoded.payload.type).toBe('transaction');
    expect(decoded.source).toBe(`did:pkh:eip155:4217:${payer.address}`);

    // Verified, not broadcast: nothing moved yet.
    const payerBefore = await balanceOf(payer.address);
    expect(payerBefore).toBe(5_000_000n);
    expect(await balanceOf(recipient)).toBe(0n);

    // Two concurrent settles and a later one: one payment.
    const [first, second] = await Promise.all([charge.settle(credential), charge.settle(credential)]);
    expect(first.txHash).toBe(second.txHash);
    expect(first).toMatchObject({ reference: keccak256(decoded.payload.signature), alreadySettled: false });
    expect(first.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(await balanceOf(recipient)).toBe(PRICE);
    expect(await balanceOf(payer.address)).toBe(payerBefore - PRICE);
    const onChain = await chain.connection.publicClient.getTransactionReceipt({ hash: first.txHash });
    expect(onChain.status).toBe('success');
    expect(onChain.from.toLowerCase()).toBe(payer.address.toLowerCase());

    const again = await charge.settle(decoded as never);
    expect(again).toMatchObject({ txHash: first.txHash, alreadySettled: true });
    expect(await balanceOf(recipient)).toBe(PRICE);
    expect(await balanceOf(payer.address)).toBe(payerBefore - PRICE);

    // The impersonated settlement is journaled: a restarted chain rebuilds it.
    const restarted = await openEmbeddedEvmChain(t.database, 'tempo', { virtualMasterZeroBytes: 1 });
    const read = (address: Address) => restarted.connection.publicClient.readContract({ address: token, abi: stablecoinAbi, functionName: 'balanceOf', args: [address] });
    expect(await read(recipient)).toBe(PRICE);
    expect(await read(payer.address)).toBe(payerBefore - PRICE);
    expect((await restarted.connection.publicClient.getTransactionReceipt({ hash: first.txHash })).status).toBe('success');
  });

  it('pays a split and the primary recipient from one signed transaction', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const split = newAddress();
    const mppxClient = MppxClient.create({ methods: [clientMethod(payer)], polyfill: false });
    const response = await mppxClient.fetch(`${base}/paid/${recipient}?split=${split}`);
    expect(response.status).toBe(200);
    const settlement = await charge.settle(accepted.at(-1)!);
    expect(settlement.txHashes).toHaveLength(2);
    expect(await balanceOf(recipient)).toBe(8_000n);
    expect(await balanceOf(split)).toBe(2_000n);
    expect(await balanceOf(payer.address)).toBe(5_000_000n - PRICE);
  });
});

describe('push: a JSON-RPC account sends the payment itself', () => {
  it('answers 200 for the hash credential and the recipient is paid', async () => {
    const payer = newAddress();
    await devRpc('hardhat_impersonateAccount', [payer]);
    await faucet(payer);
    const recipient = newAddress();
    const mppxClient = MppxClient.create({ methods: [clientMethod(payer)], polyfill: false });

    const response = await mppxClient.fetch(`${base}/paid/${recipient}`);
    expect(response.status).toBe(200);
    const credential = Credential.deserialize<{ type: string; hash: Hex }>(accepted.at(-1)!);
    expect(credential.payload.type).toBe('hash');
    expect(await balanceOf(recipient)).toBe(PRICE);
    expect(await balanceOf(payer)).toBe(5_000_000n - PRICE);

    // Nothing left to settle: settle reports the payer's own transaction and moves nothing.
    const settlement = await charge.settle(accepted.at(-1)!);
    expect(settlement).toMatchObject({ txHash: credential.payload.hash, alreadySettled: true });
    expect(await balanceOf(recipient)).toBe(PRICE);
  });

  it('refuses a hash whose transfer is bound to another challenge', async () => {
    const payer = newAddress();
    await devRpc('hardhat_impersonateAccount', [payer]);
    await faucet(payer);
    const recipient = newAddress();
    const mppxClient = MppxClient.create({ methods: [clientMethod(payer)], polyfill: false });
    expect((await mppxClient.fetch(`${base}/paid/${recipient}`)).status).toBe(200);
    const paid = Credential.deserialize(accepted.at(-1)!);

    // The same transaction hash offered for a fresh challenge of the same route.
    const fresh = await challengeFor(recipient);
    const replay = Credential.serialize({ ...paid, challenge: fresh });
    await expectRefused(recipient, replay, /memo is not bound to this challenge/);
  });
});

describe('refusals, each with its reason', () => {
  it('refuses an underpayment', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const credential = await forged(payer, recipient, (c) => ({ ...c, request: { ...c.request, amount: '9999' } }));
    await expectRefused(recipient, credential, /Payment insufficient: the payment moves 9999 base units, the price is 10000/);
  });

  it('refuses a payment to another recipient', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const other = newAddress();
    const credential = await forged(payer, recipient, (c) => ({ ...c, request: { ...c.request, recipient: other } }));
    await expectRefused(recipient, credential, new RegExp(`goes to ${other}, but the challenge's recipient is ${recipient}`, 'i'));
  });

  it('refuses a transaction signed for another chain', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const credential = await forged(
      payer,
      recipient,
      (c) => ({ ...c, request: { ...c.request, methodDetails: { ...(c.request.methodDetails as object), chainId: 42431 } } }),
      42431,
    );
    await expectRefused(recipient, credential, /signed for chain 42431, the challenge asks for chain 4217/);
  });

  it('refuses an expired transaction (validBefore in the past)', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const credential = await forged(payer, recipient, (c) => ({ ...c, expires: new Date(Date.now() - 60_000).toISOString() }));
    await expectRefused(recipient, credential, /expired at .* \(validBefore\)/);
  });

  it('refuses a memo bound to another challenge', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const credential = await forged(payer, recipient, (c) => ({ ...c, id: `${c.id}-other` }));
    await expectRefused(recipient, credential, /memo is not bound to this challenge/);
  });

  it('refuses a payer whose balance no longer covers the price', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const real = await challengeFor(recipient);
    const credential = await clientMethod(payer).createCredential({ challenge: real, context: {} } as never);
    // Signed while funded; spent elsewhere before paying.
    const wallet = createWalletClient({ chain: chain.chain, account: payer, transport: chain.evm.transport });
    const hash = await wallet.writeContract({ address: token, abi: stablecoinAbi, functionName: 'transfer', args: [newAddress(), 5_000_000n] });
    await chain.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    await expectRefused(recipient, credential, new RegExp(`payer ${payer.address} holds 0 base units, less than the 10000`, 'i'));
    // And settlement refuses too, moving nothing.
    await expect(charge.settle(credential)).rejects.toBeInstanceOf(SettlementRefusedError);
    expect(await balanceOf(recipient)).toBe(0n);
  });

  it('refuses a transaction that names a funded sender other than its signer', async () => {
    const victim = await fundedPayer();
    const attacker = privateKeyToAccount(generatePrivateKey());
    await faucet(attacker.address, '0.01'); // enough for the client's gas estimate
    const recipient = newAddress();
    const real = await challengeFor(recipient);
    const signed = Credential.deserialize<{ type: 'transaction'; signature: Hex }>(
      await clientMethod(attacker).createCredential({ challenge: real, context: {} } as never),
    );
    // The attacker's signature, with the victim written into the envelope's sender slot.
    const envelope = TxEnvelopeTempo.deserialize(signed.payload.signature as TxEnvelopeTempo.Serialized);
    // ox types `sender` for the fee-payer format only; the plain format writes it into `from` too.
    const claimed = TxEnvelopeTempo.serialize({ ...envelope, from: undefined }, { sender: victim.address } as never);
    expect(TxEnvelopeTempo.deserialize(claimed).from?.toLowerCase()).toBe(victim.address.toLowerCase());
    const credential = Credential.serialize({
      ...signed,
      payload: { type: 'transaction', signature: claimed },
      source: `did:pkh:eip155:4217:${victim.address}`,
    });
    await expectRefused(recipient, credential, /names a sender other than its signer|signature is invalid/);
    await expect(charge.settle(credential)).rejects.toBeInstanceOf(SettlementRefusedError);
    expect(await balanceOf(victim.address)).toBe(5_000_000n);
  });

  it('refuses a credential whose source is not the signer', async () => {
    const payer = await fundedPayer();
    const recipient = newAddress();
    const real = await challengeFor(recipient);
    const signed = Credential.deserialize(await clientMethod(payer).createCredential({ challenge: real, context: {} } as never));
    const credential = Credential.serialize({ ...signed, source: `did:pkh:eip155:4217:${newAddress()}` });
    await expectRefused(recipient, credential, /is not the transaction's signer/);
  });
});
