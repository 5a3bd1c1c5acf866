import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { canonicalMessage, verifyProof, type ProofRequest, type ProofScheme } from './identity-proof.js';

/**
 * A proof is claimed once whatever its spelling (issue 12, auth attacks): the replay store keyed on
 * the signature text let one accepted proof through again as bare hex, base58, or ECDSA's other
 * (v, s) forms, each a second payment.
 */
const request: ProofRequest = {
  identifier: 'buyer-bot-7',
  method: 'POST',
  pathWithQuery: '/api/mpp/agent/pay',
  timestamp: 1_795_435_200,
  body: new TextEncoder().encode('{"amount":"1.00"}'),
};
const message = canonicalMessage(request);

function replays() {
  const seen = new Set<string>();
  return (hash: string) => Promise.resolve(seen.has(hash) ? false : (seen.add(hash), true));
}
const check = (signature: string, scheme: ProofScheme, claimOnce: (hash: string) => Promise<boolean>, proven = request) =>
  verifyProof(proven, signature, scheme, { nowSeconds: request.timestamp, claimOnce });

describe('a replayed proof in another spelling', () => {
  it('HMAC: without its 0x prefix', async () => {
    const secret = 'ahs_secret';
    const scheme: ProofScheme = { kind: 'hmac', secret };
    const hex = createHmac('sha256', secret).update(message).digest('hex');
    const claimOnce = replays();
    expect(await check(`0x${hex}`, scheme, claimOnce)).toEqual({ ok: true });
    expect(await check(hex, scheme, claimOnce)).toMatchObject({ ok: false, code: 'PROOF_REPLAYED' });
  });

  it('Ed25519: base58 after 0x hex', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const scheme: ProofScheme = { kind: 'ed25519', publicKey: getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')) };
    const signature = sign(null, Buffer.from(message), privateKey);
    const claimOnce = replays();
    expect(await check(`0x${signature.toString('hex')}`, scheme, claimOnce)).toEqual({ ok: true });
    expect(await check(getBase58Decoder().decode(signature), scheme, claimOnce)).toMatchObject({ ok: false, code: 'PROOF_REPLAYED' });
  });

  it('ERC-8004: v as a parity bit, and the high-s twin', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const scheme: ProofScheme = { kind: 'erc8004', agentId: 7n, ownerOf: () => Promise.resolve(owner.address) };
    const signature = await owner.signMessage({ message });
    const v = parseInt(signature.slice(130), 16);
    const parity = `${signature.slice(0, 130)}0${v - 27}`;
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const twin = `${signature.slice(0, 66)}${(n - BigInt(`0x${signature.slice(66, 130)}`)).toString(16).padStart(64, '0')}${v === 27 ? '1c' : '1b'}`;
    const claimOnce = replays();
    expect(await check(signature, scheme, claimOnce)).toEqual({ ok: true });
    expect(await check(parity, scheme, claimOnce)).toMatchObject({ ok: false, code: 'PROOF_REPLAYED' });
    expect(await check(twin, scheme, claimOnce)).toMatchObject({ ok: false, code: 'PROOF_REPLAYED' });
  });
});

describe('what stays distinct', () => {
  it('two keys proving one request (a linked key) are two claims; another timestamp is another request', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const linked = generateKeyPairSync('ed25519');
    const erc8004: ProofScheme = { kind: 'erc8004', agentId: 7n, ownerOf: () => Promise.resolve(owner.address) };
    const ed25519: ProofScheme = { kind: 'ed25519', publicKey: getBase58Decoder().decode(Buffer.from(linked.publicKey.export({ format: 'jwk' }).x!, 'base64url')) };
    const claimOnce = replays();
    expect(await check(await owner.signMessage({ message }), erc8004, claimOnce)).toEqual({ ok: true });
    expect(await check(`0x${sign(null, Buffer.from(message), linked.privateKey).toString('hex')}`, ed25519, claimOnce)).toEqual({ ok: true });
    const later = { ...request, timestamp: request.timestamp + 1 };
    expect(await check(await owner.signMessage({ message: canonicalMessage(later) }), erc8004, claimOnce, later)).toEqual({ ok: true });
  });
});
