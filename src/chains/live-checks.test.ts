import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../config.js';
import { startDevnet, type RunningDevnet } from '../devnet/devnet.js';
import type { DevnetInfo } from '../devnet/server.js';
import { createLogger } from '../log.js';
import { LOCAL_ESCROW_PROGRAM_ID } from './solana/escrow-program/index.js';
import { checkLiveChains, LiveCheckError } from './live-checks.js';

const BOGUS = '0x00000000000000000000000000000000000b0b05';

/** Live mode's start-up checks against the devnet's chains, as live settings would point at them. */
describe('live start-up checks', () => {
  let devnet: RunningDevnet;
  let info: DevnetInfo;

  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, host: '127.0.0.1', dataDir: null, virtualMasterZeroBytes: 0, log: createLogger('silent') });
    info = (await (await fetch(devnet.url)).json()) as DevnetInfo;
  }, 120_000);
  afterAll(async () => devnet?.close());

  const live = (changes: Partial<Config['live']> = {}): Config['live'] => {
    const c = info.tempo.contracts;
    return {
      tempoRpcUrl: `${devnet.url}/tempo`,
      baseRpcUrl: `${devnet.url}/base`,
      solanaRpcUrl: `${devnet.url}/solana`,
      x402FacilitatorUrl: undefined,
      x402FacilitatorKey: undefined,
      x402FacilitatorTimeoutMs: 30_000,
      mppSecretKey: undefined,
      smtpUrl: undefined,
      emailFrom: undefined,
      stripe: undefined,
      evmServiceKey: undefined,
      solanaServiceSeed: undefined,
      tempoContracts: {
        payrollTreasury: c.payrollTreasury!,
        streamVesting: c.streamVesting!,
        yieldRouter: c.yieldRouter!,
        agentIdentityRegistry: c.agentIdentityRegistry!,
        agentReputationRegistry: c.agentReputationRegistry!,
        stablecoin: c.stablecoin!,
        tip403Registry: c.tip403Registry!,
        addressRegistry: c.addressRegistry!,
      },
      baseUsdcAddress: info.base.contracts.stablecoin as `0x${string}`,
      solanaUsdcMint: info.solana.mint,
      solanaEscrowProgramId: LOCAL_ESCROW_PROGRAM_ID,
      solanaNetwork: info.solana.network,
      ...changes,
    };
  };
  const problemsOf = async (settings: Config['live']) => {
    const error = await checkLiveChains(settings).then(
      () => null,
      (e: unknown) => e,
    );
    if (error === null) return [];
    expect(error).toBeInstanceOf(LiveCheckError);
    return (error as LiveCheckError).problems;
  };

  it('pass on the chains and contracts the devnet serves', async () => {
    expect(await problemsOf(live())).toEqual([]);
  });

  it('name every problem at once, with settings instead of URLs', async () => {
    const good = live();
    const settings = live({
      // Tempo's setting pointing at Base: chain 8453, where none of the Tempo contracts are.
      tempoRpcUrl: `${devnet.url}/base?apikey=SECRET_KEY`,
      tempoContracts: { ...good.tempoContracts!, payrollTreasury: BOGUS },
      // A contract, but not the stablecoin's interface; an unrelated contract of ours in place of another.
      baseUsdcAddress: '0xcA11bde05977b3631167028862bE2a173976CA11',
      solanaNetwork: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', // mainnet's, not the devnet's
      solanaUsdcMint: '11111111111111111111111111111111',
      solanaEscrowProgramId: info.solana.mint, // an account, but no program
    });
    const error = await checkLiveChains(settings).catch((e: unknown) => e as LiveCheckError);
    expect(error).toBeInstanceOf(LiveCheckError);
    const { problems, message } = error as LiveCheckError;
    expect(problems).toContain('TEMPO_RPC_URL: chain id 8453, expected 4217');
    expect(problems).toContain(`TEMPO_CONTRACTS.payrollTreasury ${BOGUS}: no contract code`);
    expect(problems.some((p) => p.startsWith('BASE_USDC_ADDRESS 0xcA11bde05977b3631167028862bE2a173976CA11: not the expected interface'))).toBe(true);
    expect(problems.some((p) => p.startsWith('SOLANA_RPC_URL: genesis hash'))).toBe(true);
    expect(problems).toContain('SOLANA_USDC_MINT 11111111111111111111111111111111: not an SPL token mint');
    expect(problems).toContain(`SOLANA_ESCROW_PROGRAM_ID ${info.solana.mint}: not an executable program`);
    expect(message).not.toContain(devnet.url);
    expect(message).not.toContain('SECRET_KEY');
  });

  it('tell our contracts apart from each other and from unrelated ones', async () => {
    const good = live();
    const c = good.tempoContracts!;
    const problems = await problemsOf(live({ tempoContracts: { ...c, streamVesting: c.yieldRouter, agentReputationRegistry: c.stablecoin } }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^TEMPO_CONTRACTS\.streamVesting 0x[0-9a-fA-F]{40}: not our contract \(lacks /);
    expect(problems[1]).toMatch(/^TEMPO_CONTRACTS\.agentReputationRegistry 0x[0-9a-fA-F]{40}: not our contract \(lacks /);
  });

  it('report an RPC that does not answer without repeating its URL', async () => {
    const problems = await problemsOf(live({ baseRpcUrl: 'http://127.0.0.1:9/rpc?key=SECRET_KEY' }));
    expect(problems).toEqual(['BASE_RPC_URL: does not answer eth_chainId (HttpRequestError)']);
  });
});
