import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { ChainRevertError } from '../../chains/evm/connection.js';
import { TreasuryTransferBatcher } from './transfer-batcher.js';

/** Group commit of treasury payments on the embedded Tempo chain. */
let t: TestApp;
const memo = `0x${'ab'.repeat(32)}` as const;
const recipient = () => privateKeyToAccount(generatePrivateKey()).address;
const balanceOf = (address: Address) =>
  t.chains!.tempo.connection.publicClient.readContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

async function fundedAccount(units: bigint): Promise<bigint> {
  const tempo = t.chains!.tempo;
  const { accountId } = await tempo.createTreasuryAccount();
  await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: tempo.serviceAddress, amount: String(Number(units) / 1e6) } });
  await tempo.depositToTreasury(accountId, units);
  return accountId;
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
});
afterAll(async () => {
  await t?.close();
});

describe('TreasuryTransferBatcher', () => {
  it('sends what arrives while a payment is in flight as one transaction, recording its hash for each', async () => {
    const accountId = await fundedAccount(10_000_000n);
    const batcher = new TreasuryTransferBatcher(t.chains!.tempo);
    const recorded: string[] = [];
    const to = Array.from({ length: 5 }, recipient);
    const results = await Promise.all(
      to.map((address) => batcher.transfer({ accountId, to: address, amount: 1_000_000n, memo, beforeBroadcast: async (signed) => void recorded.push(signed.hash) })),
    );
    const hashes = results.map((r) => r.txHash);
    // The first goes at once; the other four wait for it and then share one transaction.
    expect(new Set(hashes).size).toBe(2);
    expect(new Set(hashes.slice(1)).size).toBe(1);
    expect(recorded.sort()).toEqual([...hashes].sort());
    for (const address of to) expect(await balanceOf(address)).toBe(1_000_000n);
  });

  it('retries a reverted batch one payment at a time, so only the payment the treasury cannot cover fails', async () => {
    const accountId = await fundedAccount(3_000_000n);
    const batcher = new TreasuryTransferBatcher(t.chains!.tempo);
    const [a, b, c] = [recipient(), recipient(), recipient()];
    const outcomes = await Promise.allSettled([
      batcher.transfer({ accountId, to: a, amount: 1_000_000n, memo, beforeBroadcast: async () => {} }),
      batcher.transfer({ accountId, to: b, amount: 1_500_000n, memo, beforeBroadcast: async () => {} }),
      batcher.transfer({ accountId, to: c, amount: 1_500_000n, memo, beforeBroadcast: async () => {} }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const failure = (outcomes[2] as PromiseRejectedResult).reason as ChainRevertError;
    expect(failure).toBeInstanceOf(ChainRevertError);
    expect(failure.errorName).toBe('InsufficientAvailable');
    expect([await balanceOf(a), await balanceOf(b), await balanceOf(c)]).toEqual([1_000_000n, 1_500_000n, 0n]);
  });
});
