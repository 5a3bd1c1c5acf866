import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { address, createSolanaRpc } from '@solana/kit';
import { createPublicClient, http, toFunctionSelector, type Abi, type AbiFunction, type Address, type Chain, type PublicClient, zeroAddress } from 'viem';
import { base, tempo as tempoMainnet } from 'viem/chains';
import type { Config } from '../config.js';
import {
  addressRegistryAbi,
  agentIdentityRegistryAbi,
  agentReputationRegistryAbi,
  payrollTreasuryAbi,
  stablecoinAbi,
  streamVestingAbi,
  tip403RegistryAbi,
  yieldRouterAbi,
} from './evm/abis.js';

/** Live mode refuses to start: every problem the start-up checks found, in one message. */
export class LiveCheckError extends Error {
  constructor(readonly problems: string[]) {
    super(`live start-up checks failed: ${problems.join('; ')}`);
    this.name = 'LiveCheckError';
  }
}

const RPC_TIMEOUT_MS = 10_000;
const STABLECOIN_DECIMALS = 6;
// An SPL mint account's size (Token-2022 mints with extensions are larger).
const MINT_ACCOUNT_BYTES = 82;
const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** Our own contracts on Tempo, checked by the function selectors the chain ports call. */
const OWN_CONTRACTS = {
  payrollTreasury: payrollTreasuryAbi,
  streamVesting: streamVestingAbi,
  yieldRouter: yieldRouterAbi,
  agentIdentityRegistry: agentIdentityRegistryAbi,
  agentReputationRegistry: agentReputationRegistryAbi,
} as const satisfies Record<string, Abi>;

/**
 * Live mode's start-up checks (issue 27): the chains answer with the chain ids the ports sign for,
 * and every configured address holds the contract the ports call. Problems name the setting, never
 * its value: RPC URLs carry API keys, so no RPC error text is ever repeated.
 */
export async function checkLiveChains(live: Config['live']): Promise<void> {
  const problems = (
    await Promise.all([
      tempoProblems(live),
      checkEvmChain(live.baseRpcUrl, 'BASE_RPC_URL', base, async (client) =>
        [await checkStablecoin(client, 'BASE_USDC_ADDRESS', live.baseUsdcAddress)].filter((p): p is string => p !== null),
      ),
      checkSolana(live),
    ])
  ).flat();
  if (problems.length > 0) throw new LiveCheckError(problems);
}

/** Tempo's chain id and every contract TEMPO_CONTRACTS names (also a re-run of deploy:contracts). */
export function tempoProblems(live: Pick<Config['live'], 'tempoRpcUrl' | 'tempoContracts'>): Promise<string[]> {
  return checkEvmChain(live.tempoRpcUrl, 'TEMPO_RPC_URL', tempoMainnet, async (client) => {
    if (!live.tempoContracts) return ['TEMPO_CONTRACTS: not set'];
    const contracts = live.tempoContracts as Record<keyof typeof live.tempoContracts, Address>;
    const setting = (name: string) => `TEMPO_CONTRACTS.${name}`;
    const checks = [
      checkStablecoin(client, setting('stablecoin'), contracts.stablecoin),
      checkReads(client, setting('tip403Registry'), contracts.tip403Registry, async () => {
        // Policy 1 is Tempo's built-in allow-all policy.
        const exists = await client.readContract({ address: contracts.tip403Registry, abi: tip403RegistryAbi, functionName: 'policyExists', args: [1n] });
        return exists ? null : 'policyExists(1) is false';
      }),
      checkReads(client, setting('addressRegistry'), contracts.addressRegistry, async () => {
        // No master is ever registered under id 0: the answer must decode as the zero address.
        const master = await client.readContract({ address: contracts.addressRegistry, abi: addressRegistryAbi, functionName: 'getMaster', args: ['0x00000000'] });
        return master === zeroAddress ? null : `getMaster(0x00000000) is ${master}, expected the zero address`;
      }),
      ...Object.entries(OWN_CONTRACTS).map(([name, abi]) => checkSelectors(client, setting(name), contracts[name as keyof typeof OWN_CONTRACTS], abi)),
    ];
    return (await Promise.all(checks)).filter((p): p is string => p !== null);
  });
}

/** Where deploy:contracts would deploy: Tempo's chain id, and the stablecoin our treasury will hold. */
export function tempoDeployTargetProblems(tempoRpcUrl: string, stablecoin: Address): Promise<string[]> {
  return checkEvmChain(tempoRpcUrl, 'TEMPO_RPC_URL', tempoMainnet, async (client) =>
    [await checkStablecoin(client, 'TEMPO_CONTRACTS.stablecoin', stablecoin)].filter((p): p is string => p !== null),
  );
}

/** The chain answers eth_chainId with the id the ports sign for; then its contract checks. */
async function checkEvmChain(url: string | undefined, setting: string, chain: Chain, contracts: (client: PublicClient) => Promise<string[]>): Promise<string[]> {
  if (!url) return [`${setting}: not set`];
  const client = createPublicClient({ chain, transport: http(url, { retryCount: 0, timeout: RPC_TIMEOUT_MS }) });
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (error) {
    return [`${setting}: does not answer eth_chainId (${errorName(error)})`];
  }
  // Contracts are still checked on a wrong chain: the operator learns everything in one start.
  const problems = chainId === chain.id ? [] : [`${setting}: chain id ${chainId}, expected ${chain.id}`];
  return [...problems, ...(await contracts(client))];
}

async function checkStablecoin(client: PublicClient, setting: string, token: Address): Promise<string | null> {
  return checkReads(client, setting, token, async () => {
    const [decimals] = await Promise.all([
      client.readContract({ address: token, abi: stablecoinAbi, functionName: 'decimals' }),
      client.readContract({ address: token, abi: stablecoinAbi, functionName: 'balanceOf', args: [token] }),
    ]);
    return decimals === STABLECOIN_DECIMALS ? null : `decimals() is ${decimals}, expected ${STABLECOIN_DECIMALS}`;
  });
}

/**
 * A token or registry may be a proxy (Base USDC) or a Tempo precompile without EVM bytecode, so its
 * interface is checked by read calls that must decode to the expected values.
 */
async function checkReads(client: PublicClient, setting: string, at: Address, reads: () => Promise<string | null>): Promise<string | null> {
  try {
    const problem = await reads();
    return problem && `${setting} ${at}: ${problem}`;
  } catch (error) {
    const code = await client.getCode({ address: at }).catch(() => undefined);
    return `${setting} ${at}: ${code === undefined || code === '0x' ? 'no contract code' : `not the expected interface (${errorName(error)})`}`;
  }
}

/**
 * Our own contracts are not proxies: their dispatcher holds the selector of every function the
 * ports call (PUSH4, or fewer bytes for leading zeros). An unrelated contract lacks most of them.
 */
async function checkSelectors(client: PublicClient, setting: string, at: Address, abi: Abi): Promise<string | null> {
  let code: string | undefined;
  try {
    code = (await client.getCode({ address: at }))?.toLowerCase();
  } catch (error) {
    return `${setting} ${at}: eth_getCode failed (${errorName(error)})`;
  }
  if (!code || code === '0x') return `${setting} ${at}: no contract code`;
  const missing = abi
    .filter((item): item is AbiFunction => item.type === 'function')
    .filter((item) => !code.includes(toFunctionSelector(item).slice(2).replace(/^(00)+/, '')))
    .map((item) => item.name);
  return missing.length === 0 ? null : `${setting} ${at}: not our contract (lacks ${missing.join(', ')})`;
}

/** Solana answers with the genesis hash SOLANA_NETWORK names, the mint is an SPL mint, the escrow program is deployed. */
async function checkSolana(live: Config['live']): Promise<string[]> {
  if (!live.solanaRpcUrl) return ['SOLANA_RPC_URL: not set'];
  const rpc = createSolanaRpc(live.solanaRpcUrl);
  const expected = live.solanaNetwork.slice('solana:'.length);
  let genesis: string;
  try {
    genesis = await withTimeout(rpc.getGenesisHash().send());
  } catch (error) {
    return [`SOLANA_RPC_URL: does not answer getGenesisHash (${errorName(error)})`];
  }
  const problems = genesis.startsWith(expected) ? [] : [`SOLANA_RPC_URL: genesis hash ${genesis}, expected SOLANA_NETWORK's ${expected}`];
  try {
    const { value } = await withTimeout(rpc.getAccountInfo(address(live.solanaUsdcMint), { encoding: 'base64' }).send());
    const owner = value?.owner as string | undefined;
    if (!value) problems.push(`SOLANA_USDC_MINT ${live.solanaUsdcMint}: no such account`);
    else if ((owner !== TOKEN_PROGRAM_ADDRESS && owner !== TOKEN_2022_PROGRAM_ADDRESS) || Buffer.from(value.data[0], 'base64').length < MINT_ACCOUNT_BYTES) {
      problems.push(`SOLANA_USDC_MINT ${live.solanaUsdcMint}: not an SPL token mint`);
    }
  } catch (error) {
    problems.push(`SOLANA_USDC_MINT: getAccountInfo failed (${errorName(error)})`);
  }
  if (live.solanaEscrowProgramId) problems.push(...(await checkEscrowProgram(rpc, live.solanaEscrowProgramId)));
  return problems;
}

/** SOLANA_ESCROW_PROGRAM_ID names a deployed program (unset: escrows answer 503, nothing to check). */
async function checkEscrowProgram(rpc: ReturnType<typeof createSolanaRpc>, programId: string): Promise<string[]> {
  try {
    const { value } = await withTimeout(rpc.getAccountInfo(address(programId), { encoding: 'base64' }).send());
    return value?.executable ? [] : [`SOLANA_ESCROW_PROGRAM_ID ${programId}: ${value ? 'not an executable program' : 'no such account'}`];
  } catch (error) {
    return [`SOLANA_ESCROW_PROGRAM_ID: getAccountInfo failed (${errorName(error)})`];
  }
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new TimeoutError()), RPC_TIMEOUT_MS).unref())]);
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** The error's class name only: RPC error texts can carry the URL and its API key. */
function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'error';
}
