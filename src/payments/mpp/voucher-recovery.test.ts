import { Session } from 'mppx/tempo';
import { createClient, custom, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { recoverSigner } from '../../chains/evm/secp256k1.js';
import { useNativeVoucherRecovery } from './session.js';

/**
 * Our patch to mppx (patches/mppx+0.11.0.patch): mppx's voucher check takes the signer recovery we
 * install (libsecp256k1, remembered per voucher) instead of recovering twice in pure JavaScript.
 */
const { Voucher } = Session.Precompile;
const ESCROW: Address = '0x00000000000000000000000000000000000e5c40';
const CHAIN_ID = 4217;
const payer = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
// Signing a voucher with a local account asks no node anything.
const offline = createClient({ transport: custom({ request: () => Promise.reject(new Error('offline')) }) });

async function voucher(cumulativeAmount: bigint, signer = payer) {
  const unsigned = { channelId: `0x${'ab'.repeat(32)}` as Hex, cumulativeAmount };
  return { ...unsigned, signature: await Voucher.signVoucher(offline, signer, unsigned, ESCROW, CHAIN_ID) };
}

afterEach(() => useNativeVoucherRecovery());

describe('mppx voucher checks with our signer recovery', () => {
  it('the patch is applied: verifyVoucher asks the installed recovery, once per check', async () => {
    const asked: Hex[] = [];
    Voucher.setSecp256k1SignerRecovery((digest, signature) => {
      asked.push(signature);
      return recoverSigner(digest, signature);
    });
    const signed = await voucher(5_000n);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, signed, payer.address)).toBe(true);
    expect(asked).toEqual([signed.signature]);
  });

  it('accepts the payer signature and refuses another signer, another amount, another channel or escrow', async () => {
    useNativeVoucherRecovery();
    const signed = await voucher(7_000n);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, signed, payer.address)).toBe(true);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, signed, stranger.address)).toBe(false);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, await voucher(7_000n, stranger), payer.address)).toBe(false);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, { ...signed, cumulativeAmount: 70_000n }, payer.address)).toBe(false);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, { ...signed, channelId: `0x${'cd'.repeat(32)}` }, payer.address)).toBe(false);
    expect(Voucher.verifyVoucher('0x00000000000000000000000000000000000e5c41', CHAIN_ID, signed, payer.address)).toBe(false);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID + 1, signed, payer.address)).toBe(false);
    // A signature that recovers no key, and one that is not a signature at all.
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, { ...signed, signature: `0x${'00'.repeat(64)}1b` }, payer.address)).toBe(false);
    expect(Voucher.verifyVoucher(ESCROW, CHAIN_ID, { ...signed, signature: '0x1234' }, payer.address)).toBe(false);
  });

  it('answers as mppx unpatched (ox in pure JavaScript) does, for the same vouchers', async () => {
    const cases = [
      [await voucher(1n), payer.address],
      [await voucher(2n, stranger), payer.address],
      [await voucher(3n, stranger), stranger.address],
    ] as const;
    useNativeVoucherRecovery();
    const ours = cases.map(([signed, signer]) => Voucher.verifyVoucher(ESCROW, CHAIN_ID, signed, signer));
    Voucher.setSecp256k1SignerRecovery(undefined);
    const unpatched = cases.map(([signed, signer]) => Voucher.verifyVoucher(ESCROW, CHAIN_ID, signed, signer));
    expect(ours).toEqual([true, false, true]);
    expect(unpatched).toEqual(ours);
  });
});
