import { randomBytes } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { concat, keccak256, type Address, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { instantiateKeccakMiner, lanesToBytes, MAX_NONCE, messageLanes } from './keccak-wasm.js';
import { mineSalt, partitionRange, saltOf } from './miner.js';

type Lanes = [bigint, bigint, bigint, bigint, bigint, bigint, bigint];
const hashOf = (address: Address, salt: Hex) => keccak256(concat([address, salt]));
const zeroPrefix = (hash: Hex, zeroBytes: number) => hash.slice(2, 2 + 2 * zeroBytes) === '0'.repeat(2 * zeroBytes);

/** The valid nonces below `limit`, by plain keccak (noble), independent of the WebAssembly miner. */
function validNonces(address: Address, zeroBytes: number, limit: number, stopAfter = 2): bigint[] {
  const message = new Uint8Array(52);
  message.set(Buffer.from(address.slice(2), 'hex'), 0);
  const view = new DataView(message.buffer);
  const found: bigint[] = [];
  for (let nonce = 0; nonce < limit && found.length < stopAfter; nonce++) {
    view.setUint32(48, nonce);
    const hash = keccak_256(message);
    if (hash.subarray(0, zeroBytes).every((byte) => byte === 0)) found.push(BigInt(nonce));
  }
  return found;
}

describe('keccak256 of 52 bytes in WebAssembly', () => {
  const miner = instantiateKeccakMiner();

  it('equals @noble/hashes keccak_256 on random addresses and salts', () => {
    for (let i = 0; i < 3000; i++) {
      const [address, salt] = [randomBytes(20), randomBytes(32)];
      const lanes = messageLanes(address, salt) as Lanes;
      const expected = Buffer.from(keccak_256(Buffer.concat([address, salt])));
      expect(Buffer.from(lanesToBytes(miner.digest(...lanes))).equals(expected)).toBe(true);
      // The truncated last round of the search loop gives the same first 8 bytes.
      expect(Buffer.from(lanesToBytes([miner.head(...lanes)])).equals(expected.subarray(0, 8))).toBe(true);
    }
  });

  it('checks exactly the leading zero bytes, with the nonce in the salt\'s last 8 bytes (big-endian)', () => {
    const address = `0x${randomBytes(20).toString('hex')}` as Address;
    const lanes = messageLanes(Buffer.from(address.slice(2), 'hex'), new Uint8Array(32)) as Lanes;
    for (const zeroBytes of [1, 2]) {
      const mask = (1n << BigInt(8 * zeroBytes)) - 1n;
      // Starting high in the nonce space exercises all 8 nonce bytes.
      const start = 0x0123456789abcdefn;
      const hit = miner.search(...lanes, start, 10_000_000, mask);
      expect(hit).toBeGreaterThanOrEqual(0);
      expect(zeroPrefix(hashOf(address, saltOf(start + BigInt(hit))), zeroBytes)).toBe(true);
      for (let miss = 0; miss < hit && miss < 2000; miss++) expect(zeroPrefix(hashOf(address, saltOf(start + BigInt(miss))), zeroBytes)).toBe(false);
    }
    expect(miner.search(...lanes, 0n, 1000, 0xffffffffffffffffn)).toBe(-1);
  });
});

describe('mineSalt', () => {
  const address = '0x5FbDB2315678afecb367f032d93F642f64180aa3' as Address;

  it('finds salts at reduced difficulty that verify with viem keccak256', async () => {
    for (const zeroBytes of [1, 2]) {
      const result = await mineSalt({ address, zeroBytes, startNonce: 0n, budget: 50_000_000 });
      expect(result.found).toBe(true);
      if (!result.found) return;
      expect(result.salt).toBe(saltOf(result.nonce));
      expect(zeroPrefix(hashOf(address, result.salt), zeroBytes)).toBe(true);
      expect(result.hashes).toBeGreaterThan(0);
    }
    expect(await mineSalt({ address, zeroBytes: 0, startNonce: 7n, budget: 10 })).toMatchObject({ found: true, nonce: 7n });
  });

  it('spends exactly the budget when nothing is found and resumes at start + budget', async () => {
    const result = await mineSalt({ address, zeroBytes: 8, startNonce: 1_000n, budget: 200_000 });
    expect(result).toEqual({ found: false, nextStartNonce: 201_000n, hashes: 200_000 });
    expect(await mineSalt({ address, zeroBytes: 8, startNonce: 5n, budget: 0 })).toEqual({ found: false, nextStartNonce: 5n, hashes: 0 });
    // The nonce space ends at 2^64 - 1.
    expect(await mineSalt({ address, zeroBytes: 8, startNonce: MAX_NONCE - 9n, budget: 100 })).toEqual({ found: false, nextStartNonce: MAX_NONCE + 1n, hashes: 10 });
    await expect(mineSalt({ address, zeroBytes: 8, startNonce: MAX_NONCE + 2n, budget: 1 })).rejects.toThrow(RangeError);
  });

  it('partitions a range into contiguous chunks that cover it exactly once', () => {
    for (const [budget, threads] of [[1, 1], [7, 3], [1000, 2], [50_000_000, 2], [50_000_000, 7], [5, 5]] as const) {
      const chunks = partitionRange(10n, budget, threads);
      expect(chunks).toHaveLength(threads);
      let next = 10n;
      for (const chunk of chunks) {
        expect(chunk.start).toBe(next);
        next += BigInt(chunk.count);
      }
      expect(next).toBe(10n + BigInt(budget));
      const sizes = chunks.map((chunk) => chunk.count);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });

  it('resumed from nextStartNonce, a series of small budgets finds the first valid nonce: no gap, no overlap', async () => {
    // The two smallest valid nonces at 2 zero bytes, by plain keccak.
    const [first, second] = validNonces(address, 2, 2_000_000);
    expect(first).toBeDefined();
    // Stop exactly before it, then find it at exactly that nonce.
    expect(await mineSalt({ address, zeroBytes: 2, startNonce: 0n, budget: Number(first), workers: 2 })).toMatchObject({ found: false, nextStartNonce: first });
    expect(await mineSalt({ address, zeroBytes: 2, startNonce: first!, budget: 1 })).toMatchObject({ found: true, nonce: first, hashes: 1 });
    // Many requests of 3,001 nonces over 3 threads each, each resuming where the last stopped.
    const budget = 3_001;
    expect(second! - first!).toBeGreaterThan(BigInt(budget)); // one hit per request at most
    let start = 0n;
    let hashes = 0;
    for (let request = 0; request < 1_000; request++) {
      const result = await mineSalt({ address, zeroBytes: 2, startNonce: start, budget, workers: 3 });
      hashes += result.hashes;
      if (result.found) {
        expect(result.nonce).toBe(first);
        break;
      }
      expect(result.nextStartNonce).toBe(start + BigInt(budget));
      expect(result.hashes).toBe(budget);
      start = result.nextStartNonce;
    }
    expect(start).toBeLessThanOrEqual(first!);
    expect(hashes).toBeGreaterThan(Number(first) - budget);
  });

  it('stops when aborted, resuming where no nonce was skipped', async () => {
    const controller = new AbortController();
    const mining = mineSalt({ address, zeroBytes: 8, startNonce: 0n, budget: 50_000_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const result = await mining;
    expect(result.found).toBe(false);
    if (result.found) return;
    expect(result.nextStartNonce).toBeLessThan(50_000_000n);
    expect(result.hashes).toBeLessThan(50_000_000);
  });
});
