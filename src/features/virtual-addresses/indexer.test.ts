import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { createWalletClient, encodePacked, erc20Abi, getAddress, keccak256, pad, toHex, zeroHash, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { employers } from '../employers/tables.js';
import { indexerCursors, virtualAddressInflows } from './tables.js';
import { userTag, virtualAddress } from './address.js';
import type { JobDefinition } from '../../jobs/runner.js';
import { cursorName, decodeVirtualAddress, inflowTokens, TEMPO_KNOWN_USD_TOKENS, VirtualInflowIndexer } from './indexer.js';
import { defineVirtualAddressJobs } from './jobs.js';

/**
 * The `index-virtual-inflows` job's indexer on the embedded Tempo chain (whose registry wants one
 * zero byte of proof of work in tests): transfers to employees' virtual addresses become one row
 * each, attributed by user tag, however often the job runs, in chunks or not, once their block is
 * CONFIRMATIONS blocks deep; a reorganised chain takes back the rows of its orphaned blocks.
 */
let t: TestApp;
let indexer: VirtualInflowIndexer;
/** Blocks on top of an inflow's block before it is recorded (the embedded chain mines one per transaction). */
const CONFIRMATIONS = 2;
const DEPTH = BigInt(CONFIRMATIONS);
const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

interface Employer {
  id: string;
  token: string;
  master: PrivateKeyAccount;
  masterId: Hex;
}
interface Employee {
  id: string;
  token: string;
}

async function employerWithMaster(name: string): Promise<Employer> {
  const token = await t.token(`inflow-owner-${randomUUID()}`, `owner-${randomUUID().slice(0, 6)}@inflow.example`);
  const id = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token, body: { name } }))).id;
  // Mine a salt at the test chain's difficulty (1 zero byte) and register the employer's own master.
  const master = privateKeyToAccount(generatePrivateKey());
  const hashOf = (salt: Hex) => keccak256(encodePacked(['address', 'bytes32'], [master.address, salt]));
  let salt: Hex = zeroHash;
  for (let i = 0n; !hashOf(salt).startsWith('0x00'); i++) salt = pad(toHex(i), { size: 32 });
  const registered = await t.chains!.tempo.registerVirtualMaster(master, salt);
  await t.database.db
    .update(employers)
    .set({ virtualMasterId: registered.masterId.toLowerCase(), virtualMasterAddress: master.address, virtualMasterSalt: salt, virtualMasterTxHash: registered.txHash })
    .where(eq(employers.id, id));
  return { id, token, master, masterId: registered.masterId };
}

async function hire(employer: Employer, name: string): Promise<Employee> {
  const email = `${name.toLowerCase()}-${randomUUID().slice(0, 6)}@inflow.example`;
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const response = await t.request('POST', `/api/employers/${employer.id}/team`, { token: employer.token, body: { email, full_name: name, wallet_address: wallet } });
  expect(response.status).toBe(201);
  const id = (await json<{ id: string }>(response)).id;
  return { id, token: await t.token(`inflow-${id}`, email) };
}

const depositAddress = (employer: Employer, employee: Employee) => virtualAddress(employer.masterId, userTag(employer.id, employee.id));

/** A funded outside wallet sends the token (what an employee's friend or exchange does). */
async function send(from: PrivateKeyAccount, to: Address, amount: bigint): Promise<{ txHash: Hex; blockNumber: bigint }> {
  const chain = t.embeddedChains!.tempo;
  const wallet = createWalletClient({ account: from, chain: chain.chain, transport: chain.evm.transport });
  const hash = await wallet.writeContract({ address: t.chains!.tempo.token, abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  const receipt = await chain.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  expect(receipt.status).toBe('success');
  return { txHash: hash, blockNumber: receipt.blockNumber };
}

/** Mines `blocks` empty blocks on the embedded Tempo chain. */
async function mine(blocks = CONFIRMATIONS): Promise<void> {
  for (let i = 0; i < blocks; i++) await t.embeddedChains!.tempo.evm.request({ method: 'evm_mine' } as never);
}

const blockHash = async (blockNumber: bigint) => (await t.chains!.tempo.connection.publicClient.getBlock({ blockNumber })).hash;
const inflowsOf = (employerId: string) => t.database.db.select().from(virtualAddressInflows).where(eq(virtualAddressInflows.employerId, employerId));
const cursorOf = async (employerId: string) =>
  (await t.database.db.select().from(indexerCursors).where(eq(indexerCursors.name, cursorName(employerId))))[0]?.lastBlock;

let acme: Employer;
let globex: Employer;
let ada: Employee;
let bob: Employee;
let carol: Employee;
let sender: PrivateKeyAccount;
let first: { txHash: Hex; blockNumber: bigint };

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  indexer = new VirtualInflowIndexer({ database: t.database, chain: t.chains!.tempo, tokens: inflowTokens('local', t.chains!.tempo.token), confirmations: CONFIRMATIONS });
  acme = await employerWithMaster('Acme');
  globex = await employerWithMaster('Globex');
  ada = await hire(acme, 'Ada');
  bob = await hire(acme, 'Bob');
  carol = await hire(globex, 'Carol');
  sender = privateKeyToAccount(generatePrivateKey());
  const funded = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: sender.address, amount: '1000' } });
  expect(funded.status).toBe(200);
});

afterAll(async () => {
  await t?.close();
});

describe('virtual address decoding and tokens', () => {
  it('reads masterId and userTag from a virtual address and refuses other addresses', () => {
    expect(decodeVirtualAddress('0x0000ABCDfdfdFDFDfdfdfdfdFDFD7a0667ea99C2')).toEqual({ masterId: '0x0000abcd', tag: '0x7a0667ea99c2' });
    expect(decodeVirtualAddress(sender?.address ?? '0x5FbDB2315678afecb367f032d93F642f64180aa3')).toBeNull();
  });

  it('scans the four known tokens plus the configured one live, and the embedded stablecoin locally', () => {
    const local = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    expect(inflowTokens('local', local)).toEqual([local]);
    expect(inflowTokens('live', TEMPO_KNOWN_USD_TOKENS['USDC.e']!)).toHaveLength(4);
    expect(inflowTokens('live', local)).toHaveLength(5);
  });
});

describe('index-virtual-inflows', () => {
  it('indexes a transfer to an employee virtual address once, attributed to the employee, with the sender', async () => {
    const before = await t.chains!.tempo.balanceOf(acme.master.address);
    first = await send(sender, depositAddress(acme, ada), 12_500_000n);
    expect(await t.chains!.tempo.balanceOf(acme.master.address)).toBe(before + 12_500_000n); // it landed on the master
    await mine();

    const run = await indexer.indexVirtualInflows();
    expect(run.inserted).toBe(1);
    const rows = await inflowsOf(acme.id);
    expect(rows).toHaveLength(1);
    const block = await t.chains!.tempo.connection.publicClient.getBlock({ blockNumber: first.blockNumber });
    expect(rows[0]).toMatchObject({
      txHash: first.txHash,
      employerId: acme.id,
      employeeId: ada.id,
      amount: 12_500_000n,
      tokenAddress: getAddress(t.chains!.tempo.token),
      virtualAddress: depositAddress(acme, ada),
      userTag: userTag(acme.id, ada.id),
      senderAddress: sender.address,
      blockNumber: first.blockNumber,
      blockTimestamp: new Date(Number(block.timestamp) * 1000),
    });
    // The virtual -> master leg is the row (the sender -> virtual leg comes first in the transaction).
    const receipt = await t.chains!.tempo.connection.publicClient.getTransactionReceipt({ hash: first.txHash });
    expect(rows[0]!.logIndex).toBe(receipt.logs.find((log) => log.topics[2]?.toLowerCase().endsWith(acme.master.address.slice(2).toLowerCase()))!.logIndex);
    expect(await cursorOf(acme.id)).toBe(run.head - DEPTH);
  });

  it('writes nothing new when the job runs again, even over the same blocks', async () => {
    const again = await indexer.indexVirtualInflows();
    expect(again.inserted).toBe(0);
    // Forget the cursor: the same blocks are read again, and the (tx_hash, log_index) key keeps one row.
    await t.database.db.delete(indexerCursors).where(eq(indexerCursors.name, cursorName(acme.id)));
    const rescan = await indexer.indexVirtualInflows();
    expect(rescan.found).toBeGreaterThanOrEqual(1);
    expect(rescan.inserted).toBe(0);
    expect(await inflowsOf(acme.id)).toHaveLength(1);
  });

  it('keeps an unknown tag unattributed, skips direct payments to the master and tells masters apart', async () => {
    const unknown = virtualAddress(acme.masterId, '0x123456789abc');
    const stray = await send(sender, unknown, 1_000_000n);
    await send(sender, acme.master.address, 2_000_000n); // a plain transfer to the master: no virtual leg
    const toCarol = await send(sender, depositAddress(globex, carol), 3_000_000n);
    await mine();

    const run = await indexer.indexVirtualInflows();
    expect(run).toMatchObject({ inserted: 2, unattributed: 1 });
    const acmeRows = await inflowsOf(acme.id);
    expect(acmeRows).toHaveLength(2);
    expect(acmeRows.find((row) => row.txHash === stray.txHash)).toMatchObject({ employeeId: null, virtualAddress: unknown, userTag: '0x123456789abc', amount: 1_000_000n });
    expect(await inflowsOf(globex.id)).toEqual([expect.objectContaining({ txHash: toCarol.txHash, employeeId: carol.id, amount: 3_000_000n })]);
  });

  it('scans only the blocks after the cursor on the next run', async () => {
    await indexer.indexVirtualInflows();
    const cursor = (await cursorOf(acme.id))!;
    expect(await cursorOf(globex.id)).toBe(cursor);
    const next = await send(sender, depositAddress(acme, bob), 4_000_000n);
    await mine();

    const getLogs = vi.spyOn(t.chains!.tempo.connection.publicClient, 'getLogs');
    try {
      const run = await indexer.indexVirtualInflows();
      // Both masters resumed from the same block: one range, shared queries.
      expect(run.ranges).toEqual([{ fromBlock: cursor + 1n, toBlock: run.head - DEPTH, masters: 2 }]);
      expect(run.inserted).toBe(1);
      for (const [query] of getLogs.mock.calls) expect((query as { fromBlock: bigint }).fromBlock).toBeGreaterThan(cursor);
    } finally {
      getLogs.mockRestore();
    }
    expect((await inflowsOf(acme.id)).find((row) => row.txHash === next.txHash)).toMatchObject({ employeeId: bob.id, amount: 4_000_000n });
  });

  it('finds the same rows with one-block chunks, and never scans more than maxBlocks', async () => {
    const before = await t.database.db.select().from(virtualAddressInflows);
    await t.database.db.delete(virtualAddressInflows);
    await t.database.db.delete(indexerCursors);

    const head = await t.chains!.tempo.blockNumber();
    const getLogs = vi.spyOn(t.chains!.tempo.connection.publicClient, 'getLogs');
    let run;
    try {
      run = await indexer.indexVirtualInflows({ chunk: 1, maxBlocks: Number(head) + 1 });
      const ranges = getLogs.mock.calls.map(([query]) => query as { fromBlock: bigint; toBlock: bigint });
      const masterQueries = ranges.filter((range) => range.toBlock - range.fromBlock === 0n);
      expect(masterQueries.length).toBeGreaterThanOrEqual(Number(head - DEPTH) + 1);
    } finally {
      getLogs.mockRestore();
    }
    expect(run.ranges).toEqual([{ fromBlock: 0n, toBlock: run.head - DEPTH, masters: 2 }]);
    const after = await t.database.db.select().from(virtualAddressInflows);
    const key = (row: { txHash: string; logIndex: number }) => `${row.txHash}:${row.logIndex}`;
    const strip = ({ createdAt: _createdAt, ...row }: (typeof before)[number]) => row;
    expect(after.map(strip).sort((a, b) => key(a).localeCompare(key(b)))).toEqual(before.map(strip).sort((a, b) => key(a).localeCompare(key(b))));

    // A window: at most maxBlocks per run, resuming where the last one stopped.
    await t.database.db.delete(indexerCursors);
    const bounded = await indexer.indexVirtualInflows({ maxBlocks: 3, chunk: 2 });
    expect(bounded.ranges).toEqual([{ fromBlock: bounded.head - DEPTH - 2n, toBlock: bounded.head - DEPTH, masters: 2 }]);
  });

  it('is the index-virtual-inflows job, every 5 minutes', async () => {
    let job: JobDefinition | undefined;
    defineVirtualAddressJobs({ define: (definition: JobDefinition) => (job = definition) } as never, { indexer });
    expect(job).toMatchObject({ name: 'index-virtual-inflows', schedule: '*/5 * * * *' });
    const next = await send(sender, depositAddress(globex, carol), 500_000n);
    await mine();
    const log = { info: vi.fn() };
    await job!.handle({}, { jobId: 'j', retryCount: 0, signal: new AbortController().signal, log: log as never });
    expect(log.info).toHaveBeenCalledWith(expect.objectContaining({ inserted: 1 }), 'virtual inflows indexed');
    expect((await inflowsOf(globex.id)).map((row) => row.txHash)).toContain(next.txHash);
  });

  it('catches up from an old cursor at most maxBlocks per run', async () => {
    await t.database.db.update(indexerCursors).set({ lastBlock: 0n, lastBlockHash: await blockHash(0n) });
    const run = await indexer.indexVirtualInflows({ maxBlocks: 5, chunk: 2 });
    expect(run.ranges).toEqual([{ fromBlock: 1n, toBlock: 5n, masters: 2 }]);
    expect(await cursorOf(acme.id)).toBe(5n);
    const next = await indexer.indexVirtualInflows({ maxBlocks: 5, chunk: 2 });
    expect(next.ranges).toEqual([{ fromBlock: 6n, toBlock: 10n, masters: 2 }]);
  });
});

describe('confirmations and reorgs', () => {
  it(`records an inflow only once ${CONFIRMATIONS} blocks are mined on top of its block`, async () => {
    const erin = await hire(globex, 'Erin');
    await indexer.indexVirtualInflows();
    const pending = await send(sender, depositAddress(globex, erin), 700_000n);
    const recorded = async () => (await inflowsOf(globex.id)).some((row) => row.txHash === pending.txHash);

    const fresh = await indexer.indexVirtualInflows();
    expect(fresh.head).toBe(pending.blockNumber);
    expect(await recorded()).toBe(false);
    expect(await cursorOf(globex.id)).toBe(pending.blockNumber - DEPTH);
    await mine(CONFIRMATIONS - 1);
    await indexer.indexVirtualInflows();
    expect(await recorded()).toBe(false);

    await mine(1);
    const deep = await indexer.indexVirtualInflows();
    expect(deep.inserted).toBe(1);
    expect((await inflowsOf(globex.id)).find((row) => row.txHash === pending.txHash)).toMatchObject({ employeeId: erin.id, blockNumber: pending.blockNumber });
    expect(await cursorOf(globex.id)).toBe(pending.blockNumber);
  });

  it("takes back the inflow of an orphaned block and records the new chain's, once, with two instances running", async () => {
    const initech = await employerWithMaster('Initech');
    const dan = await hire(initech, 'Dan');
    await indexer.indexVirtualInflows();
    const forkCursor = await cursorOf(initech.id);
    const others = async () => [...(await inflowsOf(acme.id)), ...(await inflowsOf(globex.id))].map((row) => `${row.txHash}:${row.logIndex}`).sort();
    const before = await others();

    // A branch with an inflow, deep enough to be recorded.
    const evm = t.embeddedChains!.tempo.evm;
    const snapshot = await evm.request({ method: 'evm_snapshot' } as never);
    const orphan = await send(sender, depositAddress(initech, dan), 1_100_000n);
    await mine();
    await indexer.indexVirtualInflows();
    expect((await inflowsOf(initech.id)).map((row) => row.txHash)).toEqual([orphan.txHash]);

    // The chain reorganises below it: a longer branch replaces that block with another transfer.
    expect(await evm.request({ method: 'evm_revert', params: [snapshot] } as never)).toBe(true);
    const replacement = await send(sender, depositAddress(initech, dan), 2_200_000n);
    expect(replacement.blockNumber).toBe(orphan.blockNumber);
    await mine(CONFIRMATIONS + 2);

    const second = new VirtualInflowIndexer({ database: t.database, chain: t.chains!.tempo, tokens: inflowTokens('local', t.chains!.tempo.token), confirmations: CONFIRMATIONS });
    const runs = await Promise.all([indexer.indexVirtualInflows(), second.indexVirtualInflows()]);
    await indexer.indexVirtualInflows();
    const rollbacks = runs.flatMap((run) => run.reorgs).filter((reorg) => reorg.employerId === initech.id);
    expect(rollbacks).toEqual([expect.objectContaining({ employerId: initech.id, removed: 1 })]);
    expect(rollbacks[0]!.forkBlock).toBe(forkCursor); // the newest checkpoint the new chain still has

    expect(await inflowsOf(initech.id)).toEqual([
      expect.objectContaining({ txHash: replacement.txHash, employeeId: dan.id, amount: 2_200_000n, blockNumber: replacement.blockNumber }),
    ]);
    expect(await others()).toEqual(before); // the other employers' rows stay, none doubled
    const cursor = (await t.database.db.select().from(indexerCursors).where(eq(indexerCursors.name, cursorName(initech.id))))[0]!;
    expect(cursor.lastBlock).toBe((await t.chains!.tempo.blockNumber()) - DEPTH);
    expect(cursor.lastBlockHash).toBe(await blockHash(cursor.lastBlock));
  });

  it('writes nothing of a chunk whose blocks a reorg replaced while its logs were read', async () => {
    const hank = await hire(acme, 'Hank');
    await indexer.indexVirtualInflows();
    const cursor = await cursorOf(acme.id);
    const evm = t.embeddedChains!.tempo.evm;
    const snapshot = await evm.request({ method: 'evm_snapshot' } as never);
    const orphan = await send(sender, depositAddress(acme, hank), 1_300_000n);
    await mine();

    // A reader of the real chain that reorganises it right after the first log query has answered.
    const tempo = t.chains!.tempo;
    let reorganised: { txHash: Hex } | undefined;
    const publicClient = new Proxy(tempo.connection.publicClient, {
      get(target, property, receiver) {
        if (property !== 'getLogs') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<typeof target.getLogs>) => {
          const logs = await target.getLogs(...args);
          if (!reorganised) {
            await evm.request({ method: 'evm_revert', params: [snapshot] } as never);
            reorganised = await send(sender, depositAddress(acme, hank), 3_300_000n);
            await mine(CONFIRMATIONS + 1);
          }
          return logs;
        };
      },
    });
    const racing = new VirtualInflowIndexer({
      database: t.database,
      chain: { connection: { publicClient }, blockNumber: () => tempo.blockNumber() },
      tokens: inflowTokens('local', tempo.token),
      confirmations: CONFIRMATIONS,
    });
    const run = await racing.indexVirtualInflows();
    expect(reorganised).toBeDefined();
    expect(run.inserted).toBe(0);
    expect((await inflowsOf(acme.id)).some((row) => row.txHash === orphan.txHash)).toBe(false);
    expect(await cursorOf(acme.id)).toBe(cursor); // the chunk was dropped whole

    const next = await indexer.indexVirtualInflows();
    expect(next.reorgs).toEqual([]);
    expect((await inflowsOf(acme.id)).filter((row) => row.employeeId === hank.id)).toEqual([
      expect.objectContaining({ txHash: reorganised!.txHash, amount: 3_300_000n }),
    ]);
  });
});

describe('GET /api/portal/activity', () => {
  interface Card {
    type: string;
    id: string;
    amount: string;
    amount_base_units: string;
    occurred_at: string;
    details: Record<string, unknown>;
  }
  const activity = async (employee: Employee) => {
    const response = await t.request('GET', '/api/portal/activity', { token: employee.token });
    expect(response.status).toBe(200);
    return (await json<{ activity: Card[] }>(response)).activity;
  };

  it("shows the indexed inflow as a virtual_inflow card to its employee, and to no one else", async () => {
    const block = await t.chains!.tempo.connection.publicClient.getBlock({ blockNumber: first.blockNumber });
    const adaCards = await activity(ada);
    expect(adaCards).toEqual([
      {
        type: 'virtual_inflow',
        id: `${first.txHash}:${(await inflowsOf(acme.id)).find((row) => row.txHash === first.txHash)!.logIndex}`,
        amount: '12.500000',
        amount_base_units: '12500000',
        occurred_at: new Date(Number(block.timestamp) * 1000).toISOString(),
        details: expect.objectContaining({
          direction: 'in',
          employee_id: ada.id,
          employer_id: acme.id,
          tx_hash: first.txHash,
          virtual_address: depositAddress(acme, ada),
          sender_address: sender.address,
          token_address: getAddress(t.chains!.tempo.token),
        }),
      },
    ]);
    const bobCards = await activity(bob);
    expect(bobCards.map((card) => card.amount)).toEqual(['4.000000']);
    expect(bobCards.some((card) => card.id === adaCards[0]!.id)).toBe(false);
    expect((await activity(carol)).map((card) => card.amount).sort()).toEqual(['0.500000', '3.000000']);
    expect((await t.request('GET', '/api/portal/activity')).status).toBe(401);
  });
});
