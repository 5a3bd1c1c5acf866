import { generateKeyPairSync, sign } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { canonicalMessage, PROOF_WINDOW_SECONDS, readProofHeaders, verifyProof, type ProofRequest, type ProofScheme } from './identity-proof.js';

/** Agent identity proofs: the canonical message, the four schemes, the window and replays. */
const body = '{"employerId":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","recipient":"0x1000000000000000000000000000000000000001","amountUsd":"1.50"}';
const example: ProofRequest = {
  identifier: 'buyer-bot-7',
  method: 'post',
  pathWithQuery: '/api/mpp/agent/pay',
  timestamp: 1_795_435_200,
  body: new TextEncoder().encode(body),
};
const now = example.timestamp + 10;

/** A replay store in memory: each hash is accepted once. */
function replays() {
  const seen = new Set<string>();
  return (hash: string) => Promise.resolve(seen.has(hash) ? false : (seen.add(hash), true));
}
const check = (request: ProofRequest, signature: string, scheme: ProofScheme, claimOnce = replays()) =>
  verifyProof(request, signature, scheme, { nowSeconds: now, claimOnce });

describe('the canonical message (worked example of docs/api.md)', () => {
  it('is six lines ending in the body hash, and its HMAC is the one openssl computes', async () => {
    expect(canonicalMessage(example)).toBe(
      'agent-proof-v1\nbuyer-bot-7\nPOST\n/api/mpp/agent/pay\n1795435200\n94db0803350d92211622e166b5b85a9e0d9def404a363e24e3d140361da9d508',
    );
    // printf '%s' "$MESSAGE" | openssl dgst -sha256 -hmac 'whsec_demo_only_0123456789abcdef'
    const signature = '0x1baf034d68a1e7c299331c8f14082fd2e36f0462e92728e64ec616dcac6f0901';
    expect(await check(example, signature, { kind: 'hmac', secret: 'whsec_demo_only_0123456789abcdef' })).toEqual({ ok: true });
  });
});

describe('verifyProof', () => {
  const secret = 'whsec_demo_only_0123456789abcdef';
  const hmac = '0x1baf034d68a1e7c299331c8f14082fd2e36f0462e92728e64ec616dcac6f0901';

  it('refuses the HMAC for another method, path, body or identifier, or another secret', async () => {
    const altered: ProofRequest[] = [
      { ...example, method: 'PUT' },
      { ...example, pathWithQuery: '/api/mpp/agent/pay?again=1' },
      { ...example, body: new TextEncoder().encode(body.replace('1.50', '150.00')) },
      { ...example, identifier: 'buyer-bot-8' },
    ];
    for (const request of altered) expect(await check(request, hmac, { kind: 'hmac', secret })).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    expect(await check(example, hmac, { kind: 'hmac', secret: `${secret}x` })).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    expect(await check(example, 'not-hex', { kind: 'hmac', secret })).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
  });

  it('refuses a timestamp outside five minutes, either way', async () => {
    for (const offset of [PROOF_WINDOW_SECONDS + 1, -(PROOF_WINDOW_SECONDS + 1)]) {
      const result = await verifyProof(example, hmac, { kind: 'hmac', secret }, { nowSeconds: example.timestamp + offset, claimOnce: replays() });
      expect(result).toMatchObject({ ok: false, code: 'PROOF_STALE' });
    }
  });

  it('accepts a signature once', async () => {
    const claimOnce = replays();
    expect(await check(example, hmac, { kind: 'hmac', secret }, claimOnce)).toEqual({ ok: true });
    expect(await check(example, hmac, { kind: 'hmac', secret }, claimOnce)).toMatchObject({ ok: false, code: 'PROOF_REPLAYED' });
    // The same bytes in upper case are the same signature.
    expect(await check(example, hmac.toUpperCase().replace('0X', '0x'), { kind: 'hmac', secret }, claimOnce)).toMatchObject({ ok: false, code: 'PROOF_REPLAYED' });
  });

  it("accepts an ERC-8004 agent's EIP-191 signature by the registry's current owner only", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const scheme: ProofScheme = { kind: 'erc8004', agentId: 42n, ownerOf: (id) => Promise.resolve(id === 42n ? owner.address : null) };
    const request = { ...example, identifier: 'erc8004:eip155:4217:42' };
    const message = canonicalMessage(request);
    expect(await check(request, await owner.signMessage({ message }), scheme)).toEqual({ ok: true });
    expect(await check(request, await stranger.signMessage({ message }), scheme)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    const unregistered: ProofScheme = { ...scheme, agentId: 43n };
    expect(await check(request, await owner.signMessage({ message }), unregistered)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    expect(await check({ ...request, pathWithQuery: '/api/mpp/escrow/post' }, await owner.signMessage({ message }), scheme)).toMatchObject({ ok: false });
  });

  it("accepts an EVM address's EIP-191 signature by that address only", async () => {
    const agent = privateKeyToAccount(generatePrivateKey());
    const scheme: ProofScheme = { kind: 'evm', address: agent.address };
    const request = { ...example, identifier: agent.address.toLowerCase() };
    const message = canonicalMessage(request);
    expect(await check(request, await agent.signMessage({ message }), scheme)).toEqual({ ok: true });
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(await check(request, await stranger.signMessage({ message }), scheme)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    expect(await check({ ...request, pathWithQuery: '/api/mpp/escrow/deliver' }, await agent.signMessage({ message }), scheme)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    expect(await check(request, '0x1234', scheme)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
  });

  it('accepts an Ed25519 signature by the Solana identity (base58 or 0x hex)', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const scheme: ProofScheme = { kind: 'ed25519', publicKey: getBase58Decoder().decode(raw) };
    const request = { ...example, identifier: scheme.publicKey };
    const signature = sign(null, Buffer.from(canonicalMessage(request)), privateKey);
    expect(await check(request, getBase58Decoder().decode(signature), scheme)).toEqual({ ok: true });
    expect(await check({ ...request, timestamp: request.timestamp + 1 }, `0x${signature.toString('hex')}`, scheme)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    const other = generateKeyPairSync('ed25519');
    const forged = sign(null, Buffer.from(canonicalMessage(request)), other.privateKey);
    expect(await check(request, `0x${forged.toString('hex')}`, scheme)).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
  });
});

describe('readProofHeaders', () => {
  it('needs both headers and an integer timestamp', () => {
    expect(readProofHeaders(new Headers())).toMatchObject({ ok: false, code: 'PROOF_MISSING' });
    expect(readProofHeaders(new Headers({ 'X-Agent-Timestamp': '1.5', 'X-Agent-Signature': '0xab' }))).toMatchObject({ ok: false, code: 'PROOF_INVALID' });
    expect(readProofHeaders(new Headers({ 'X-Agent-Timestamp': '1795435200', 'X-Agent-Signature': ' 0xab ' }))).toEqual({ ok: true, timestamp: 1_795_435_200, signature: '0xab' });
  });
});
