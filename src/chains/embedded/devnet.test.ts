import { createPublicClient, createWalletClient, encodePacked, keccak256, pad, parseEther, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../../test/support/database.js';
import { openDatabase, type Database } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { loadArtifacts, type ContractArtifact } from '../contracts/compile.js';
import { MULTICALL3_ADDRESS, openEmbeddedEvmChain, REAL_TOKEN_ADDRESSES, type EmbeddedEvmChain } from './devnet.js';
import { databaseJournal } from './journal.js';

describe('embedded Tempo chain across a restart', () => {
  let target: TestDatabaseTarget;
  let database: Database;
  let artifacts: Record<string, ContractArtifact>;
  const alice = privateKeyToAccount(generatePrivateKey());
  const bob = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    database = await openDatabase({ url: target.url, dataDir: null });
    await migrate(database);
    artifacts = await loadArtifacts();
  });
  afterAll(async () => {
    await database.close();
    await target.drop();
  });

  const clients = (chain: EmbeddedEvmChain) => ({
    public: createPublicClient({ chain: chain.chain, transport: chain.evm.transport }),
    wallet: (account: typeof alice | EmbeddedEvmChain['operator']) =>
      createWalletClient({ chain: chain.chain, account, transport: chain.evm.transport }),
  });

  async function snapshot(chain: EmbeddedEvmChain, transferHash: Hex, masterId: Hex) {
    const { public: client } = clients(chain);
    const token = { address: chain.contracts.stablecoin!, abi: artifacts.Stablecoin!.abi } as const;
    const block = await client.getBlock();
    return {
      contracts: chain.contracts,
      operator: chain.operator.address,
      aliceBalance: await client.readContract({ ...token, functionName: 'balanceOf', args: [alice.address] }),
      bobBalance: await client.readContract({ ...token, functionName: 'balanceOf', args: [bob.address] }),
      master: await client.readContract({
        address: chain.contracts.addressRegistry!,
        abi: artifacts.AddressRegistry!.abi,
        functionName: 'getMaster',
        args: [masterId],
      }),
      transferBlock: (await client.getTransactionReceipt({ hash: transferHash })).blockNumber,
      latestBlock: block.number,
      latestTimestamp: block.timestamp,
      multicallCode: await client.getCode({ address: MULTICALL3_ADDRESS }),
    };
  }

  it('rebuilds the same state from its journal', async () => {
    const first = await openEmbeddedEvmChain(database, 'tempo', { virtualMasterZeroBytes: 1 });
    expect(REAL_TOKEN_ADDRESSES.map((a) => a.toLowerCase())).not.toContain(first.contracts.stablecoin!.toLowerCase());
    const { public: client, wallet } = clients(first);
    const wait = (hash: Hex) => client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    const token = { address: first.contracts.stablecoin!, abi: artifacts.Stablecoin!.abi } as const;

    for (const who of [alice.address, bob.address]) await wait(await wallet(first.operator).sendTransaction({ to: who, value: parseEther('1') }));
    await wait(await wallet(first.operator).writeContract({ ...token, functionName: 'mint', args: [alice.address, 1_000_000_000n] }));
    const transferHash = await wallet(alice).writeContract({ ...token, functionName: 'transfer', args: [bob.address, 250_000_000n] });
    await wait(transferHash);

    let salt: Hex = '0x';
    for (let i = 0n; ; i++) {
      salt = pad(toHex(i), { size: 32 });
      if (keccak256(encodePacked(['address', 'bytes32'], [bob.address, salt])).startsWith('0x00')) break;
    }
    const registry = { address: first.contracts.addressRegistry!, abi: artifacts.AddressRegistry!.abi } as const;
    await wait(await wallet(bob).writeContract({ ...registry, functionName: 'registerVirtualMaster', args: [salt] }));
    const masterId = `0x${keccak256(encodePacked(['address', 'bytes32'], [bob.address, salt])).slice(10, 18)}` as Hex;

    await first.evm.request({ method: 'evm_increaseTime' as never, params: [3600] as never });
    await first.evm.request({ method: 'evm_mine' as never, params: [] as never });
    const before = await snapshot(first, transferHash, masterId);
    expect(before.aliceBalance).toBe(750_000_000n);
    expect(before.master).toBe(bob.address);

    // A fresh EVM from the same database, in a later second (a restart's genesis must not move):
    // the journal rebuilds everything.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await openEmbeddedEvmChain(database, 'tempo', { virtualMasterZeroBytes: 1 });
    expect(await snapshot(second, transferHash, masterId)).toEqual(before);
  });

  it('applies a transaction journaled just before a crash, and skips one that was refused', async () => {
    const chain = await openEmbeddedEvmChain(database, 'tempo');
    const { public: client } = clients(chain);
    const token = { address: chain.contracts.stablecoin!, abi: artifacts.Stablecoin!.abi } as const;
    const before = (await client.readContract({ ...token, functionName: 'balanceOf', args: [bob.address] })) as bigint;

    const signed = await createWalletClient({ chain: chain.chain, account: alice, transport: chain.evm.transport }).signTransaction(
      await createWalletClient({ chain: chain.chain, account: alice, transport: chain.evm.transport }).prepareTransactionRequest({
        to: token.address,
        data: (await import('viem')).encodeFunctionData({ ...token, functionName: 'transfer', args: [bob.address, 1_000_000n] }),
      }),
    );
    // As if the process died after journaling and before running it, plus a junk entry.
    const journal = databaseJournal(database.db, 'tempo');
    await journal.append('eth_sendRawTransaction', [signed]);
    await journal.append('eth_sendRawTransaction', ['0xdeadbeef']);

    const restarted = await openEmbeddedEvmChain(database, 'tempo');
    const after = await createPublicClient({ chain: restarted.chain, transport: restarted.evm.transport }).readContract({
      ...token,
      functionName: 'balanceOf',
      args: [bob.address as Address],
    });
    expect(after).toBe(before + 1_000_000n);
  });
});
