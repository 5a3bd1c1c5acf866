import { bytesToHex, hashMessage, hexToBytes, keccak256, recoverAddress, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { Secp256k1, Signature } from 'ox';
import { loadedSecp256k1, publicKeyRecovery, recoverSigner, rememberingRecovery, signerRecovery, useNativeOxRecovery } from './secp256k1.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The same signature with s -> n - s and the parity flipped: another encoding of one signer's signature. */
function highSTwin(signature: Hex): Hex {
  const bytes = hexToBytes(signature);
  const s = BigInt(bytesToHex(bytes.subarray(32, 64)));
  bytes.set(hexToBytes(`0x${(N - s).toString(16).padStart(64, '0')}`), 32);
  bytes[64] = bytes[64] === 27 ? 28 : 27;
  return bytesToHex(bytes);
}

describe('secp256k1 signature recovery', () => {
  it('loads libsecp256k1 here (the prebuilt linux-x64 binary of the `secp256k1` package)', () => {
    if (process.platform === 'linux' && process.arch === 'x64') expect(loadedSecp256k1()).not.toBeNull();
  });

  const native = signerRecovery(loadedSecp256k1());
  const pureJs = signerRecovery(null);

  it('recovers what viem recovers, natively and in pure JavaScript, for 50 signers', async () => {
    for (let i = 0; i < 50; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const digest = keccak256(toHex(`payment ${i}`));
      const signature = await account.sign({ hash: digest });
      const yParity = hexToBytes(signature)[64]! - 27;
      const zeroOneV = bytesToHex(new Uint8Array([...hexToBytes(signature).subarray(0, 64), yParity]));
      for (const encoded of [signature, highSTwin(signature), zeroOneV]) {
        expect(await recoverAddress({ hash: digest, signature: encoded })).toBe(account.address);
        expect(native(digest, encoded)).toBe(account.address);
        expect(pureJs(digest, encoded)).toBe(account.address);
      }
    }
  });

  it('names another signer for another message, and none for a signature that recovers no key', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signature = await account.signMessage({ message: 'pay 1.00' });
    expect(recoverSigner(hashMessage('pay 1.00'), signature)).toBe(account.address);
    expect(recoverSigner(hashMessage('pay 9.00'), signature)).not.toBe(account.address);
    const zeroR = `0x${'00'.repeat(32)}${signature.slice(66)}` as Hex;
    const badV = `${signature.slice(0, 130)}05` as Hex;
    for (const broken of [zeroR, badV, '0x1234' as Hex]) {
      expect(native(hashMessage('pay 1.00'), broken), broken).toBeNull();
      expect(pureJs(hashMessage('pay 1.00'), broken), broken).toBeNull();
    }
  });
});

describe('rememberingRecovery', () => {
  it('recovers a signature once however often it is checked, and forgets the oldest beyond its capacity', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signed = await Promise.all([0, 1, 2].map(async (i) => ({ digest: keccak256(toHex(`voucher ${i}`)), signature: await account.sign({ hash: keccak256(toHex(`voucher ${i}`)) }) })));
    const recovered: Hex[] = [];
    const remembering = rememberingRecovery((digest, signature) => {
      recovered.push(digest);
      return recoverSigner(digest, signature);
    }, 2);
    const [a, b, c] = signed as [(typeof signed)[0], (typeof signed)[0], (typeof signed)[0]];
    expect(remembering(a.digest, a.signature)).toBe(account.address);
    expect(remembering(a.digest, a.signature.toUpperCase().replace('0X', '0x') as Hex)).toBe(account.address);
    expect(recovered).toEqual([a.digest]);
    // Another signature over the same digest is another question.
    expect(remembering(a.digest, b.signature)).not.toBe(account.address);
    expect(remembering(b.digest, b.signature)).toBe(account.address);
    expect(remembering(c.digest, c.signature)).toBe(account.address);
    expect(recovered).toEqual([a.digest, a.digest, b.digest, c.digest]);
    // Capacity 2: (a, a) went first, (a, b's signature) second; a is recovered afresh.
    expect(remembering(a.digest, a.signature)).toBe(account.address);
    expect(recovered).toEqual([a.digest, a.digest, b.digest, c.digest, a.digest]);
  });
});

describe("ox's public key recovery through libsecp256k1 (our patch to ox)", () => {
  const native = loadedSecp256k1();

  it('answers what noble answers, for low-s and high-s signatures, and nothing for a signature that recovers no key', async () => {
    if (!native) return; // another platform: ox keeps noble
    const recover = publicKeyRecovery(native);
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const digest = keccak256(toHex(`tempo transaction ${i}`));
      for (const encoded of [await account.sign({ hash: digest }), highSTwin(await account.sign({ hash: digest }))]) {
        const signature = Signature.fromHex(encoded);
        Secp256k1.setPublicKeyRecovery(undefined);
        const byNoble = Secp256k1.recoverPublicKey({ payload: digest, signature });
        expect(recover(digest, signature)).toEqual(byNoble);
        expect(recover(hexToBytes(digest), signature)).toEqual(byNoble);
      }
    }
    expect(recover(keccak256('0x01'), { r: 0n, s: 1n, yParity: 0 })).toBeNull();
    expect(recover('0x1234', { r: 1n, s: 1n, yParity: 0 })).toBeNull();
  });

  it('is what ox asks once installed, and noble still answers (or throws) for what it leaves', async () => {
    const asked: unknown[] = [];
    Secp256k1.setPublicKeyRecovery((payload) => {
      asked.push(payload);
      return null;
    });
    const account = privateKeyToAccount(generatePrivateKey());
    const digest = keccak256(toHex('left to noble'));
    const signature = Signature.fromHex(await account.sign({ hash: digest }));
    expect(Secp256k1.recoverAddress({ payload: digest, signature }).toLowerCase()).toBe(account.address.toLowerCase());
    expect(asked).toEqual([digest]);
    useNativeOxRecovery();
    expect(Secp256k1.recoverAddress({ payload: digest, signature }).toLowerCase()).toBe(account.address.toLowerCase());
    expect(asked).toHaveLength(1);
  });
});
