import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type RunningDevnet } from '../../devnet/devnet.js';
import type { DevnetInfo } from '../../devnet/server.js';
import { createLogger } from '../../log.js';
import { tempoProblems } from '../live-checks.js';

const run = promisify(execFile);

/** `npm run deploy:contracts` against a devnet started here, as an operator runs it against a live chain. */
describe('npm run deploy:contracts', () => {
  let devnet: RunningDevnet;
  let info: DevnetInfo;
  const key = generatePrivateKey();

  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, host: '127.0.0.1', dataDir: null, virtualMasterZeroBytes: 0, log: createLogger('silent') });
    info = (await (await fetch(devnet.url)).json()) as DevnetInfo;
    // The deployer is a fresh wallet with the devnet faucet's gas money, as a live one would be funded.
    await fetch(`${devnet.url}/faucet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'eip155:4217', address: privateKeyToAccount(key).address, amount: '1.00' }),
    });
  }, 120_000);
  afterAll(async () => devnet?.close());

  const deploy = (network: string, env: Record<string, string>) =>
    run('npx', ['tsx', 'scripts/deploy-contracts.ts', '--network', network], { env: { ...process.env, ...env }, timeout: 120_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
  const natives = () => ({
    stablecoin: info.tempo.contracts.stablecoin,
    tip403Registry: info.tempo.contracts.tip403Registry,
    addressRegistry: info.tempo.contracts.addressRegistry,
  });

  it('deploys our Tempo contracts, prints a TEMPO_CONTRACTS value the start-up checks accept, and a re-run sends nothing', async () => {
    const env = { TEMPO_RPC_URL: `${devnet.url}/tempo`, EVM_SERVICE_KEY: key, TEMPO_CONTRACTS: JSON.stringify(natives()) };
    const first = await deploy('tempo', env);
    expect(first.stderr).toContain('deployed; set TEMPO_CONTRACTS to:');
    expect(first.code).toBe(0);
    const value = JSON.parse(first.stdout) as Record<string, `0x${string}`>;
    expect(value).toMatchObject(natives());
    for (const name of ['payrollTreasury', 'streamVesting', 'yieldRouter', 'agentIdentityRegistry', 'agentReputationRegistry']) {
      expect(value[name]).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(value[name]).not.toBe(info.tempo.contracts[name]); // new ones, not the devnet's own
    }
    expect(await tempoProblems({ tempoRpcUrl: env.TEMPO_RPC_URL, tempoContracts: value as never })).toEqual([]);

    const nonce = () => devnet.chains.tempo.connection.publicClient.getTransactionCount({ address: privateKeyToAccount(key).address });
    const sent = await nonce();
    const second = await deploy('tempo', { ...env, TEMPO_CONTRACTS: first.stdout.trim() });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('already deployed and checked; nothing sent');
    expect(JSON.parse(second.stdout)).toEqual(value);
    expect(await nonce()).toBe(sent);
  }, 180_000);

  it('refuses a chain with the wrong id without deploying, naming the setting and never the URL', async () => {
    const result = await deploy('tempo', { TEMPO_RPC_URL: `${devnet.url}/base?key=SECRET_KEY`, EVM_SERVICE_KEY: key, TEMPO_CONTRACTS: JSON.stringify(natives()) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('TEMPO_RPC_URL: chain id 8453, expected 4217');
    expect(result.stderr).not.toContain('SECRET_KEY');
    expect(result.stdout).toBe('');
  }, 120_000);

  it('says base has nothing of ours to deploy', async () => {
    const result = await deploy('base', { BASE_RPC_URL: `${devnet.url}/base`, EVM_SERVICE_KEY: key });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('base has nothing of ours to deploy');
  }, 120_000);
});
