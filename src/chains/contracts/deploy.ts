import { createPublicClient, createWalletClient, type Address, type Chain, type Hex, type PrivateKeyAccount, type Transport } from 'viem';
import { loadArtifacts } from './compile.js';

/** Creates our compiled contracts and calls them as the deployer, each transaction awaited to a successful receipt. */
export interface Deployer {
  create(name: string, args?: unknown[]): Promise<Address>;
  call(address: Address, name: string, functionName: string, args: unknown[]): Promise<void>;
  getCode(address: Address): Promise<Hex | undefined>;
}

export async function createDeployer(options: { chain: Chain; transport: Transport; account: PrivateKeyAccount; pollingInterval: number }): Promise<Deployer> {
  const { chain, transport, account, pollingInterval } = options;
  const artifacts = await loadArtifacts();
  const wallet = createWalletClient({ chain, account, transport });
  const client = createPublicClient({ chain, transport, pollingInterval });
  const artifact = (name: string) => {
    const found = artifacts[name];
    if (!found) throw new Error(`no compiled contract ${name}`);
    return found;
  };
  const mined = async (hash: Hex) => {
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval });
    if (receipt.status !== 'success') throw new Error(`deployment transaction ${hash} reverted`);
    return receipt;
  };
  return {
    async create(name, args = []) {
      const { abi, bytecode } = artifact(name);
      return (await mined(await wallet.deployContract({ abi, bytecode, args }))).contractAddress as Address;
    },
    async call(address, name, functionName, args) {
      await mined(await wallet.writeContract({ address, abi: artifact(name).abi, functionName, args, chain, account }));
    },
    getCode: (address) => client.getCode({ address }),
  };
}

/** Our payroll and agent contracts on Tempo, over its stablecoin (TEMPO_CONTRACTS without the Tempo-native three). */
export interface PayrollContracts {
  payrollTreasury: Address;
  streamVesting: Address;
  yieldRouter: Address;
  agentIdentityRegistry: Address;
  agentReputationRegistry: Address;
}

/**
 * Deploys our Tempo contracts in dependency order; `operator` (the service wallet) may run stream
 * vesting. The same steps on the embedded chain and, through `npm run deploy:contracts`, on a live one.
 */
export async function deployPayrollContracts(deployer: Deployer, stablecoin: Address, operator: Address): Promise<PayrollContracts> {
  const payrollTreasury = await deployer.create('PayrollTreasury', [stablecoin]);
  const streamVesting = await deployer.create('StreamVesting', [payrollTreasury]);
  const yieldRouter = await deployer.create('YieldRouter', [payrollTreasury, ['treasury-bills', 'money-market', 'lending'], [420n, 510n, 630n]]);
  const agentIdentityRegistry = await deployer.create('AgentIdentityRegistry');
  const agentReputationRegistry = await deployer.create('AgentReputationRegistry', [agentIdentityRegistry]);
  await deployer.call(streamVesting, 'StreamVesting', 'setOperator', [operator, true]);
  return { payrollTreasury, streamVesting, yieldRouter, agentIdentityRegistry, agentReputationRegistry };
}
