import { eq } from 'drizzle-orm';
import { defineChain, type Address, type Chain, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Database } from '../../db/client.js';
import { embeddedChains } from '../tables.js';
import { createDeployer, deployPayrollContracts } from '../contracts/deploy.js';
import { startEmbeddedEvm, type EmbeddedEvm } from './evm.js';
import { databaseJournal } from './journal.js';
import { evmConnection, type EvmConnection } from '../evm/connection.js';
import { NonceLedger } from '../evm/nonces.js';

export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;
/** Tempo's TIP-1034 channel escrow precompile address, where mppx session clients expect it. */
export const CHANNEL_ESCROW_ADDRESS = '0x4d50500000000000000000000000000000000000' as const;
/** The real stablecoins, which local tokens must never coincide with (RECIPES.md). */
export const REAL_TOKEN_ADDRESSES = [
  '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', // USDC on Base
  '0x20C000000000000000000000b9537d11c60E8b50', // USDC.e on Tempo
] as const;

export type EvmChainKind = 'tempo' | 'base';

export interface EmbeddedEvmChain {
  kind: EvmChainKind;
  chain: Chain;
  evm: EmbeddedEvm;
  /** Deployer, minter and agent wallet of the embedded chain. */
  operator: PrivateKeyAccount;
  /** The operator's private key (local mode derives per-employer virtual-master keys from it). */
  operatorKey: Hex;
  contracts: Record<string, Address>;
  /** The operator's connection: every operator transaction goes through it, so no two reuse a nonce. */
  connection: EvmConnection;
}

export interface EmbeddedEvmOptions {
  /** Leading zero bytes the virtual-master registry demands (4 on real chains). */
  virtualMasterZeroBytes?: number;
}

const GAS_FLOOR = 10n ** 17n; // 0.1 ETH
const GAS_TOP_UP = 10n ** 18n;

/** Gives an account gas money from the operator when it is running low (faucet, virtual masters). */
export async function topUpGas(chain: EmbeddedEvmChain, account: Address): Promise<void> {
  if ((await chain.connection.publicClient.getBalance({ address: account })) >= GAS_FLOOR) return;
  await chain.connection.write({ to: account, data: '0x', value: GAS_TOP_UP });
}

/** Embedded chains mine on send: a receipt is there at once. */
export const EMBEDDED_POLLING_MS = 5;
const CHAIN_IDS: Record<EvmChainKind, number> = { tempo: 4217, base: 8453 };

/** viem's description of an embedded chain. */
export function embeddedChainDefinition(kind: EvmChainKind): Chain {
  return defineChain({
    id: CHAIN_IDS[kind],
    name: `${kind} (embedded)`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    // Never dialled: clients here use the in-process transport; HTTP clients use /api/dev/rpc/<kind>.
    rpcUrls: { default: { http: [`http://localhost/api/dev/rpc/${kind}`] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
}

/**
 * Opens an embedded EVM chain whose state is the replay of its journal in the database: the
 * first time, it creates the operator key and deploys the contracts; afterwards it rebuilds the
 * same chain (same addresses, balances, registrations, transaction hashes).
 */
export async function openEmbeddedEvmChain(database: Database, kind: EvmChainKind, options: EmbeddedEvmOptions = {}): Promise<EmbeddedEvmChain> {
  const { db } = database;
  const chainId = CHAIN_IDS[kind];
  const chain = embeddedChainDefinition(kind);
  await db
    .insert(embeddedChains)
    .values({ chain: kind, operatorKey: generatePrivateKey(), genesisTime: BigInt(Math.floor(Date.now() / 1000)) })
    .onConflictDoNothing();
  const [record] = await db.select().from(embeddedChains).where(eq(embeddedChains.chain, kind));
  if (!record) throw new Error(`embedded chain ${kind} has no record`);
  const operator = privateKeyToAccount(record.operatorKey as Hex);

  const evm = await startEmbeddedEvm({
    chainId,
    genesisTime: record.genesisTime,
    funded: [{ address: operator.address, balance: 10n ** 27n }],
    journal: databaseJournal(db, kind),
  });
  let contracts = record.deployment as Record<string, Address> | null;
  if (!contracts) {
    contracts = await deploy(kind, chain, evm, operator, options);
    await db.update(embeddedChains).set({ deployment: contracts }).where(eq(embeddedChains.chain, kind));
  }
  const connection = evmConnection({
    chain,
    transport: evm.transport,
    signer: operator,
    nonces: new NonceLedger(database),
    pollingInterval: EMBEDDED_POLLING_MS,
  });
  return { kind, chain, evm, operator, operatorKey: record.operatorKey as Hex, contracts, connection };
}

async function deploy(
  kind: EvmChainKind,
  chain: Chain,
  evm: EmbeddedEvm,
  operator: PrivateKeyAccount,
  options: EmbeddedEvmOptions,
): Promise<Record<string, Address>> {
  const deployer = await createDeployer({ chain, transport: evm.transport, account: operator, pollingInterval: 5 });
  const { create, call } = deployer;
  // Copies a deployed contract's code to a fixed address (a canonical contract or a Tempo precompile).
  const place = async (at: Address, name: string) => {
    const code = await deployer.getCode(await create(name));
    await evm.request({ method: 'hardhat_setCode' as never, params: [at, code] as never });
  };

  await place(MULTICALL3_ADDRESS, 'Multicall3');
  const contracts: Record<string, Address> = {};
  if (kind === 'base') {
    contracts.stablecoin = await create('Stablecoin', ['USD Coin', 'USDC', '2', '0x0000000000000000000000000000000000000000']);
  } else {
    contracts.addressRegistry = await create('AddressRegistry', [options.virtualMasterZeroBytes ?? 4]);
    contracts.stablecoin = await create('Stablecoin', ['Bridged USDC', 'USDC.e', '2', contracts.addressRegistry]);
    contracts.tip403Registry = await create('TIP403Registry');
    Object.assign(contracts, await deployPayrollContracts(deployer, contracts.stablecoin, operator.address));
    await place(CHANNEL_ESCROW_ADDRESS, 'TIP20ChannelEscrow');
    contracts.channelEscrow = CHANNEL_ESCROW_ADDRESS;
  }
  contracts.multicall3 = MULTICALL3_ADDRESS;
  await call(contracts.stablecoin, 'Stablecoin', 'setMinter', [operator.address, true]);

  const real = REAL_TOKEN_ADDRESSES.map((a) => a.toLowerCase());
  if (real.includes(contracts.stablecoin.toLowerCase())) throw new Error('local stablecoin collides with a real token address');
  return contracts;
}
