import { encodeFunctionData, erc20Abi, isAddressEqual, parseAbi, parseSignature, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/support/database.js';
import { MULTICALL3_ADDRESS, openEmbeddedEvmChain, type EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { contractCall } from '../../chains/evm/connection.js';
import type { Database } from '../../db/client.js';
import { Eip3009SettlementBatcher, type Eip3009Settlement } from './settlement-batcher.js';

const mintAbi = parseAbi(['function mint(address to, uint256 amount)']);
const eip3009Abi = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
]);

/**
 * Group commit of x402 settlements (issue 25, part 2): settlements that arrive while one is in
 * flight share the next transaction; each request learns its own item's outcome.
 */
describe('EIP-3009 settlement batcher', () => {
  let database: Database;
  let close: () => Promise<void>;
  let chain: EmbeddedEvmChain;
  const payee = privateKeyToAccount(generatePrivateKey()).address;

  beforeAll(async () => {
    ({ database, close } = await openTestDatabase());
    chain = await openEmbeddedEvmChain(database, 'base');
  });
  afterAll(() => close());

  const token = () => chain.contracts.stablecoin!;
  const balanceOf = (owner: Address) => chain.connection.publicClient.readContract({ address: token(), abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

  async function fundedPayer(units: bigint): Promise<PrivateKeyAccount> {
    const payer = privateKeyToAccount(generatePrivateKey());
    await chain.connection.write(contractCall(token(), mintAbi, 'mint', [payer.address, units]));
    return payer;
  }

  /** A payer's signed authorization to move `value` to the payee, as the x402 client signs it. */
  async function authorization(payer: PrivateKeyAccount, value: bigint, nonce: Hex = toHex(crypto.getRandomValues(new Uint8Array(32)))): Promise<Eip3009Settlement> {
    const message = { from: payer.address, to: payee, value, validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 600), nonce };
    const signature = await payer.signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: chain.chain.id, verifyingContract: token() },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const { v, r, s } = parseSignature(signature);
    const data = encodeFunctionData({
      abi: eip3009Abi,
      functionName: 'transferWithAuthorization',
      args: [message.from, message.to, value, message.validAfter, message.validBefore, nonce, Number(v), r, s],
    });
    return { token: token(), data, authorizer: payer.address, nonce };
  }

  it('sends a settlement that finds the queue idle at once, as a plain transaction', async () => {
    const batcher = new Eip3009SettlementBatcher(chain.connection);
    const payer = await fundedPayer(1_000_000n);
    const hash = await batcher.settle(await authorization(payer, 400_000n));
    const sent = await chain.connection.publicClient.getTransaction({ hash });
    expect(isAddressEqual(sent.to!, token())).toBe(true);
    expect(await balanceOf(payer.address)).toBe(600_000n);
  });

  it('carries the settlements that queued meanwhile in one transaction; a failing one fails alone, with its reason', async () => {
    const batcher = new Eip3009SettlementBatcher(chain.connection);
    const payers = await Promise.all(Array.from({ length: 20 }, () => fundedPayer(1_000_000n)));
    const settlements = await Promise.all(payers.map((payer) => authorization(payer, 250_000n)));
    const overdrawn = await authorization(payers[0]!, 5_000_000n); // more than the payer holds
    const replayed = settlements[1]!; // the same authorization twice: its nonce is used once
    const payeeBefore = await balanceOf(payee);

    const outcomes = await Promise.allSettled([...settlements, overdrawn, replayed].map((settlement) => batcher.settle(settlement)));

    const settled = outcomes.slice(0, 20);
    expect(settled.every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    const hashes = new Set(settled.map((outcome) => (outcome as PromiseFulfilledResult<Hex>).value));
    // The first went alone (the queue was idle); everything that arrived meanwhile went together.
    expect(hashes.size).toBe(2);
    const batch = [...hashes].find((hash) => hash !== (settled[0] as PromiseFulfilledResult<Hex>).value)!;
    expect(isAddressEqual((await chain.connection.publicClient.getTransaction({ hash: batch })).to!, MULTICALL3_ADDRESS)).toBe(true);
    expect(outcomes[20]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/balance|revert/i) }) });
    expect(outcomes[21]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/Authorization|revert/i) }) });
    expect((await balanceOf(payee)) - payeeBefore).toBe(20n * 250_000n);
    for (const payer of payers) expect(await balanceOf(payer.address)).toBe(750_000n);
  });
});
