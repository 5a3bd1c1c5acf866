import { http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoMainnet } from 'viem/chains';
import type { DeployConfig } from '../../config.js';
import { LiveCheckError, tempoDeployTargetProblems, tempoProblems } from '../live-checks.js';
import { createDeployer, deployPayrollContracts, type PayrollContracts } from './deploy.js';

const OURS: readonly (keyof PayrollContracts)[] = ['payrollTreasury', 'streamVesting', 'yieldRouter', 'agentIdentityRegistry', 'agentReputationRegistry'];

export type DeployOutcome =
  | { network: 'tempo'; deployed: boolean; tempoContracts: Record<string, Address> }
  | { network: 'base'; deployed: false; note: string };

/**
 * `npm run deploy:contracts`: our Tempo contracts on a live chain, or, when TEMPO_CONTRACTS already
 * names all of them and they pass the start-up checks, nothing sent and the same value back.
 * Base has nothing of ours: the service uses Circle's USDC and the canonical Multicall3 there.
 */
export async function deployLiveContracts(config: DeployConfig): Promise<DeployOutcome> {
  if (config.network === 'base') {
    return { network: 'base', deployed: false, note: "base has nothing of ours to deploy: the service uses BASE_USDC_ADDRESS (Circle's USDC) and Multicall3 there" };
  }
  const named = OURS.filter((name) => config.tempoContracts[name] !== undefined);
  if (named.length === OURS.length) {
    const tempoContracts = config.tempoContracts as Required<DeployConfig['tempoContracts']> & Record<string, Address>;
    const problems = await tempoProblems({ tempoRpcUrl: config.rpcUrl, tempoContracts });
    if (problems.length > 0) throw new LiveCheckError(problems);
    return { network: 'tempo', deployed: false, tempoContracts };
  }
  if (named.length > 0) {
    throw new LiveCheckError([`TEMPO_CONTRACTS: names ${named.join(', ')} but not all of ours; name all five (a re-run) or none (a fresh deployment)`]);
  }
  const problems = await tempoDeployTargetProblems(config.rpcUrl, config.tempoContracts.stablecoin as Address);
  if (problems.length > 0) throw new LiveCheckError(problems);
  const account = privateKeyToAccount(config.deployerKey);
  const deployer = await createDeployer({ chain: tempoMainnet, transport: http(config.rpcUrl), account, pollingInterval: 500 });
  const ours = await deployPayrollContracts(deployer, config.tempoContracts.stablecoin as Address, account.address);
  return { network: 'tempo', deployed: true, tempoContracts: { ...config.tempoContracts, ...ours } as Record<string, Address> };
}
