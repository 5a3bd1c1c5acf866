import { createWalletClient, keccak256, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../../test/support/database.js';
import { openDatabase, type Database } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { EMBEDDED_POLLING_MS, openEmbeddedEvmChain, type EmbeddedEvmChain } from '../embedded/devnet.js';
import { evmConnection, type EvmConnection } from './connection.js';
import { NonceLedger } from './nonces.js';

/**
 * The shared nonce ledger (issue 25, part 1): instances that sign with one key take nonces from
 * PostgreSQL, so they never collide, and no nonce is left as a gap that blocks later writes.
 */
describe('one signing key written by several instances', () => {
  let target: TestDatabaseTarget;
  let database: Database;
  let chain: EmbeddedEvmChain;

  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    database = await openDatabase({ url: target.url, dataDir: null });
    await migrate(database);
    chain = await openEmbeddedEvmChain(database, 'base');
  });
  afterAll(async () => {
    await database.close();
    await target.drop();
  });

  /** What a second service instance holds: its own ledger object and connection, the same key and database. */
  const instance = (stallMs?: number): EvmConnection =>
    evmConnection({
      chain: chain.chain,
      transport: chain.evm.transport,
      signer: chain.operator,
      nonces: new NonceLedger(database),
      pollingInterval: EMBEDDED_POLLING_MS,
      ...(stallMs === undefined ? {} : { stallMs }),
    });
  const transferTo = (to: Address) => ({ to, data: '0x' as Hex, value: 1n });
  const nonceOf = async (hash: Hex) => (await chain.connection.publicClient.getTransaction({ hash })).nonce;
  const nextNonce = async () =>
    chain.connection.publicClient.getTransactionCount({ address: chain.operator.address, blockTag: 'latest' });

  it('writes 50 transactions at once from three instances with no nonce error, each nonce once', async () => {
    const instances = [instance(), instance(), instance()];
    const recipients = Array.from({ length: 50 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const before = await nextNonce();

    const results = await Promise.allSettled(recipients.map((to, i) => instances[i % 3]!.write(transferTo(to))));

    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const receipts = results.map((r) => (r as PromiseFulfilledResult<{ transactionHash: Hex; status: string }>).value);
    expect(receipts.every((r) => r.status === 'success')).toBe(true);
    const nonces = await Promise.all(receipts.map((r) => nonceOf(r.transactionHash)));
    expect(new Set(nonces).size).toBe(50);
    expect(Math.min(...nonces)).toBe(before);
    expect(await nextNonce()).toBe(before + 50);
    for (const to of recipients) expect(await chain.connection.publicClient.getBalance({ address: to })).toBe(1n);
  });

  it('fills the nonce of a write its caller stopped before broadcasting, so the next write mines', async () => {
    const nonce = await nextNonce();
    await expect(
      chain.connection.write(transferTo(privateKeyToAccount(generatePrivateKey()).address), {
        beforeBroadcast: () => Promise.reject(new Error('the caller could not record it')),
      }),
    ).rejects.toThrow('could not record it');

    const later = await chain.connection.write(transferTo(privateKeyToAccount(generatePrivateKey()).address));
    expect(await nonceOf(later.transactionHash)).toBe(nonce + 1);
    const filled = await chain.connection.publicClient.getTransaction({ blockNumber: later.blockNumber - 1n, index: 0 });
    expect(filled).toMatchObject({ nonce, from: chain.operator.address.toLowerCase(), to: chain.operator.address.toLowerCase(), value: 0n });
  });

  it('broadcasts a write signed before a crash again, releasing the writes that waited behind its nonce', async () => {
    // An instance signed and recorded a write, then died before broadcasting it.
    const lost = privateKeyToAccount(generatePrivateKey()).address;
    const crashed = await signWithoutBroadcast(transferTo(lost));
    // A later write from another instance waits behind the missing nonce, as on a node's mempool.
    const waiting = instance().write(transferTo(privateKeyToAccount(generatePrivateKey()).address));
    const settled = await Promise.race([waiting.then(() => 'mined'), sleep(200).then(() => 'waiting')]);
    expect(settled).toBe('waiting');

    // The lost write goes out; the one behind it mines with it and needs nothing more.
    expect(await chain.connection.settleNonces(0)).toEqual({ rebroadcast: 1, filled: 0 });

    const receipt = await waiting;
    expect(await nonceOf(receipt.transactionHash)).toBe(crashed.nonce + 1);
    expect(await chain.connection.receipt(crashed.hash)).toMatchObject({ status: 'success' });
    expect(await chain.connection.publicClient.getBalance({ address: lost })).toBe(1n);
    expect(await chain.connection.settleNonces(0)).toEqual({ rebroadcast: 0, filled: 0 }); // mined rows are forgotten
  });

  it('a write stalled behind the nonce of a crashed instance settles the stall itself, without the job', async () => {
    const lost = privateKeyToAccount(generatePrivateKey()).address;
    const crashed = await signWithoutBroadcast(transferTo(lost));
    const started = Date.now();
    const receipt = await instance(300).write(transferTo(privateKeyToAccount(generatePrivateKey()).address));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await nonceOf(receipt.transactionHash)).toBe(crashed.nonce + 1);
    expect(await chain.connection.publicClient.getBalance({ address: lost })).toBe(1n);
  });

  it('fills a recorded nonce whose transaction the chain refuses', async () => {
    // Signed with too little gas to be valid: the chain refuses it however often it is sent.
    const refused = await signWithoutBroadcast({ ...transferTo(chain.operator.address), gas: 1_000n });
    const waiting = instance().write(transferTo(privateKeyToAccount(generatePrivateKey()).address));

    expect(await chain.connection.settleNonces(0)).toEqual({ rebroadcast: 0, filled: 1 });

    const receipt = await waiting;
    expect(await nonceOf(receipt.transactionHash)).toBe(refused.nonce + 1);
    expect(await chain.connection.receipt(refused.hash)).toBeNull();
  });

  it('skips past nonces another signer of the key used outside the ledger', async () => {
    const outside = createWalletClient({ chain: chain.chain, account: chain.operator, transport: chain.evm.transport });
    await outside.sendTransaction({ to: chain.operator.address, value: 0n });
    await outside.sendTransaction({ to: chain.operator.address, value: 0n });
    const nonce = await nextNonce();

    const receipt = await chain.connection.write(transferTo(privateKeyToAccount(generatePrivateKey()).address));
    expect(await nonceOf(receipt.transactionHash)).toBe(nonce);
  });

  /** What an instance that crashed after signing leaves: a recorded, never broadcast transaction. */
  async function signWithoutBroadcast(call: { to: Address; data: Hex; value: bigint; gas?: bigint }) {
    const wallet = chain.connection.walletClient;
    const request = await wallet.prepareTransactionRequest({ account: chain.operator, chain: chain.chain, ...call, parameters: ['chainId', 'fees', 'gas', 'type'] });
    const signed = await chain.connection.nonces.sign(
      { chain: `eip155:${chain.chain.id}`, address: chain.operator.address },
      () => nextNonce(),
      (nonce) => wallet.signTransaction({ ...request, nonce } as never),
    );
    expect(signed.hash).toBe(keccak256(signed.raw));
    return signed;
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
