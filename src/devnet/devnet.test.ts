import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Receipt } from 'mppx';
import { createPublicClient, erc20Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../test/support/database.js';
import { railA, x402WithAssets } from '../../test/support/pay.js';
import { RemoteService } from '../../test/support/service-process.js';
import { embeddedChainDefinition } from '../chains/embedded/devnet.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { startService, type RunningService } from '../service.js';
import { startDevnet, type RunningDevnet } from './devnet.js';
import { openDevnetChains } from './remote.js';
import type { DevnetInfo } from './server.js';

const log = createLogger('silent');

/**
 * The shared devnet (issue 25, part 4): the embedded chains in a process of their own, and local-mode
 * instances that use them through DEVNET_URL. With PostgreSQL, two instances share one database.
 */
describe('local mode on a shared devnet', () => {
  let devnet: RunningDevnet;
  let target: TestDatabaseTarget;
  const instances: RunningService[] = [];
  const dataDirs: string[] = [];
  let info: DevnetInfo;

  const startInstance = async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devnet-instance-'));
    dataDirs.push(dataDir);
    const config = loadConfig({
      APP_MODE: 'local',
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      DEVNET_URL: devnet.url,
      ...(target.url ? { DATABASE_URL: target.url } : {}),
    });
    const instance = await startService(config, log);
    instances.push(instance);
    return new RemoteService(instance.url);
  };
  const base = () => createPublicClient({ chain: embeddedChainDefinition('base'), transport: devnet.chains.base.evm.transport });
  const baseBalance = (holder: Address) =>
    base().readContract({ address: info.base.contracts.stablecoin as Address, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });

  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, host: '127.0.0.1', dataDir: null, virtualMasterZeroBytes: 1, log });
    info = (await (await fetch(devnet.url)).json()) as DevnetInfo;
    target = await createTestDatabaseTarget();
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await devnet.close();
    await target.drop();
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the chains at /tempo, /base and /solana, a faucet, and what instances start from at /', async () => {
    expect(info.tempo).toMatchObject({ chain_id: 4217, contracts: devnet.chains.tempo.contracts, operator_key: devnet.chains.tempo.operatorKey });
    expect(info.solana).toMatchObject({ network: devnet.chains.solana.network, mint: devnet.chains.solana.mint });
    const rpc = async (chain: string, method: string) =>
      (await (await fetch(`${devnet.url}/${chain}`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) })).json()) as {
        result: unknown;
      };
    expect((await rpc('tempo', 'eth_chainId')).result).toBe('0x1079');
    expect((await rpc('base', 'eth_chainId')).result).toBe('0x2105');
    expect((await rpc('solana', 'getHealth')).result).toBe('ok');

    const holder = privateKeyToAccount(generatePrivateKey()).address;
    const minted = await fetch(`${devnet.url}/faucet`, {
      method: 'POST',
      body: JSON.stringify({ network: 'eip155:8453', address: holder, amount: '2.50' }),
    });
    expect(minted.status).toBe(200);
    expect(await baseBalance(holder)).toBe(2_500_000n);
    const refused = await fetch(`${devnet.url}/faucet`, { method: 'POST', body: JSON.stringify({ network: 'eip155:8453', address: holder, amount: 'lots' }) });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ field: 'amount' });
  });

  it('an instance with DEVNET_URL uses the devnet: its dev routes, faucet and paid calls land there', async () => {
    const instance = await startInstance();
    const networks = await instance.chains();
    expect(networks.find((n) => n.network === 'eip155:8453')?.contracts).toMatchObject(info.base.contracts);

    const holder = privateKeyToAccount(generatePrivateKey()).address;
    expect((await instance.request('POST', '/api/dev/faucet', { body: { network: 'eip155:8453', address: holder, amount: '3' } })).status).toBe(200);
    expect(await baseBalance(holder)).toBe(3_000_000n);

    const rpc = await instance.request('POST', '/api/dev/rpc/base', { body: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] } });
    expect(BigInt(((await rpc.json()) as { result: Hex }).result)).toBe(await base().getBlockNumber());

    const { pay: payOnTempo } = await railA(instance, instance.base, '2');
    const paidOnTempo = await payOnTempo('/api/mpp/treasury/yield-rates');
    expect(paidOnTempo.status).toBe(200);
    const { reference } = Receipt.deserialize(paidOnTempo.headers.get('payment-receipt') ?? '');
    expect(await devnet.chains.tempo.connection.receipt(reference as Hex)).toMatchObject({ status: 'success' });

    const assets = { baseStablecoin: info.base.contracts.stablecoin!, solanaNetwork: info.solana.network, solanaMint: info.solana.mint };
    for (const rail of ['B', 'C'] as const) {
      const { pay } = await x402WithAssets(instance, assets, instance.base, rail, '2');
      const paid = await pay('/api/mpp/treasury/yield-rates');
      expect(paid.status, rail).toBe(200);
      const settlement = JSON.parse(atob(paid.headers.get('payment-response') ?? '')) as unknown;
      expect(settlement, rail).toMatchObject({ success: true, network: rail === 'B' ? 'eip155:8453' : info.solana.network });
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)('two instances on one database write with the operator key at once: no nonce error, each nonce once', async () => {
    while (instances.length < 2) await startInstance();
    const remotes = instances.map((i) => new RemoteService(i.url));
    const holders = Array.from({ length: 40 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const answers = await Promise.all(
      holders.map((holder, i) => remotes[i % 2]!.request('POST', '/api/dev/faucet', { body: { network: 'eip155:8453', address: holder, amount: '1' } })),
    );
    expect(answers.map((a) => a.status)).toEqual(holders.map(() => 200));
    const hashes = await Promise.all(answers.map(async (a) => ((await a.json()) as { tx_hash: Hex }).tx_hash));
    const nonces = await Promise.all(hashes.map(async (hash) => (await base().getTransaction({ hash })).nonce));
    expect(new Set(nonces).size).toBe(40);
    for (const holder of holders) expect(await baseBalance(holder)).toBe(1_000_000n);
  });

  it('an instance refuses to start when the devnet does not answer', async () => {
    const chains = openDevnetChains('http://127.0.0.1:9', (instances[0] ?? { database: undefined }).database!);
    await expect(chains).rejects.toThrow(/does not answer \(start it with npm run devnet\)/);
  });
});
