import {
  concatHex,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  encodePacked,
  keccak256,
  pad,
  parseSignature,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadArtifacts, type ContractArtifact } from '../src/chains/contracts/compile.js';
import { startEmbeddedEvm, type EmbeddedEvm } from '../src/chains/embedded/evm.js';

const CHAIN_ID = 4217;
const chain = defineChain({
  id: CHAIN_ID,
  name: 'embedded',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://embedded.invalid'] } },
});

let artifacts: Record<string, ContractArtifact>;
let evm: EmbeddedEvm;
let publicClient: PublicClient;
const deployer = privateKeyToAccount(generatePrivateKey());
const alice = privateKeyToAccount(generatePrivateKey());
const bob = privateKeyToAccount(generatePrivateKey());

const wallet = (account: PrivateKeyAccount) => createWalletClient({ chain, account, transport: evm.transport });

async function deploy(name: string, args: unknown[]): Promise<Address> {
  const artifact = artifacts[name]!;
  const hash = await wallet(deployer).deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  return receipt.contractAddress!;
}

async function send(account: PrivateKeyAccount, address: Address, name: string, functionName: string, args: unknown[]) {
  // Errors of every contract, so a revert raised in a called contract decodes by name too.
  const abi = [...artifacts[name]!.abi, ...Object.values(artifacts).flatMap((a) => a.abi.filter((item) => item.type === 'error'))];
  // Simulate first: a revert surfaces as a decoded contract error, as a client would see it.
  const { request } = await publicClient.simulateContract({ account, address, abi, functionName, args });
  const hash = await wallet(account).writeContract(request);
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  expect(receipt.status).toBe('success');
  return receipt;
}

const read = (address: Address, name: string, functionName: string, args: unknown[] = []) =>
  publicClient.readContract({ address, abi: artifacts[name]!.abi, functionName, args });

function events(abi: Abi, logs: { data: Hex; topics: [Hex, ...Hex[]] | [] }[]) {
  return logs.map((log) => decodeEventLog({ abi, data: log.data, topics: log.topics }));
}

beforeAll(async () => {
  artifacts = await loadArtifacts();
  evm = await startEmbeddedEvm({
    chainId: CHAIN_ID,
    funded: [deployer, alice, bob].map((a) => ({ address: a.address, balance: 10n ** 21n })),
  });
  publicClient = createPublicClient({ chain, transport: evm.transport });
});

describe('Stablecoin', () => {
  let token: Address;
  let registry: Address;
  const nonce = () => toHex(crypto.getRandomValues(new Uint8Array(32)));

  beforeAll(async () => {
    registry = await deploy('AddressRegistry', [1]);
    token = await deploy('Stablecoin', ['Local USD', 'lUSD', '2', registry]);
    await send(deployer, token, 'Stablecoin', 'setMinter', [deployer.address, true]);
    await send(deployer, token, 'Stablecoin', 'mint', [alice.address, 1_000_000_000n]);
  });

  async function authorization(
    signer: PrivateKeyAccount,
    message: { to: Address; value: bigint; validAfter?: bigint; validBefore?: bigint; nonce?: Hex },
    primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization' = 'TransferWithAuthorization',
  ) {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const full = {
      from: signer.address,
      to: message.to,
      value: message.value,
      validAfter: message.validAfter ?? 0n,
      validBefore: message.validBefore ?? now + 3600n,
      nonce: message.nonce ?? nonce(),
    };
    const fields = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const;
    const signature = await signer.signTypedData({
      domain: { name: 'Local USD', version: '2', chainId: CHAIN_ID, verifyingContract: token },
      types: {
        [primaryType]: fields.map((name) => ({
          name,
          type: name === 'from' || name === 'to' ? 'address' : name === 'nonce' ? 'bytes32' : 'uint256',
        })),
      },
      primaryType,
      message: full,
    });
    const { r, s, v } = parseSignature(signature);
    return { args: fields.map((f) => full[f]), signature, vrs: [Number(v), r, s] as const, nonce: full.nonce };
  }

  it('has 6 decimals', async () => {
    expect(await read(token, 'Stablecoin', 'decimals')).toBe(6);
  });

  it('emits TransferWithMemo with the memo', async () => {
    const memo = pad('0x1234', { size: 32 });
    const receipt = await send(alice, token, 'Stablecoin', 'transferWithMemo', [bob.address, 5_000_000n, memo]);
    const decoded = events(artifacts.Stablecoin!.abi, receipt.logs as never);
    expect(decoded.map((e) => e.eventName)).toEqual(['Transfer', 'TransferWithMemo']);
    expect(decoded[1]!.args).toMatchObject({ from: alice.address, to: bob.address, amount: 5_000_000n, memo });
  });

  it('moves funds with a signed authorization (v/r/s form), once', async () => {
    const auth = await authorization(alice, { to: bob.address, value: 1_000_000n });
    const before = (await read(token, 'Stablecoin', 'balanceOf', [bob.address])) as bigint;
    await send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...auth.args, ...auth.vrs]);
    expect(await read(token, 'Stablecoin', 'balanceOf', [bob.address])).toBe(before + 1_000_000n);
    expect(await read(token, 'Stablecoin', 'authorizationState', [alice.address, auth.nonce])).toBe(true);
    // Replay: same signature, any submitter.
    await expect(send(deployer, token, 'Stablecoin', 'transferWithAuthorization', [...auth.args, ...auth.vrs])).rejects.toThrow(
      /AuthorizationAlreadyUsed/,
    );
  });

  it('accepts the bytes-signature form and refuses its replay', async () => {
    const auth = await authorization(alice, { to: bob.address, value: 2_000_000n });
    await send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...auth.args, auth.signature]);
    await expect(send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...auth.args, auth.signature])).rejects.toThrow(
      /AuthorizationAlreadyUsed/,
    );
  });

  it('refuses expired, not yet valid, tampered and foreign-signed authorizations', async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const expired = await authorization(alice, { to: bob.address, value: 1n, validBefore: now - 10n });
    await expect(send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...expired.args, expired.signature])).rejects.toThrow(
      /AuthorizationExpired/,
    );
    const early = await authorization(alice, { to: bob.address, value: 1n, validAfter: now + 3600n, validBefore: now + 7200n });
    await expect(send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...early.args, early.signature])).rejects.toThrow(
      /AuthorizationNotYetValid/,
    );
    const tampered = await authorization(alice, { to: bob.address, value: 1n });
    const args = [...tampered.args];
    args[2] = 999_000_000n; // more than was signed
    await expect(send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...args, tampered.signature])).rejects.toThrow(
      /InvalidSignature/,
    );
    const foreign = await authorization(bob, { to: bob.address, value: 1n });
    const claimed = [...foreign.args];
    claimed[0] = alice.address; // bob signs, claims to be alice
    await expect(send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...claimed, foreign.signature])).rejects.toThrow(
      /InvalidSignature/,
    );
  });

  it('lets only the payee submit receiveWithAuthorization', async () => {
    const auth = await authorization(alice, { to: bob.address, value: 1_000n }, 'ReceiveWithAuthorization');
    await expect(send(deployer, token, 'Stablecoin', 'receiveWithAuthorization', [...auth.args, auth.signature])).rejects.toThrow(
      /CallerMustBePayee/,
    );
    await send(bob, token, 'Stablecoin', 'receiveWithAuthorization', [...auth.args, ...auth.vrs]);
  });

  it('cancels an unused authorization so it can never be used', async () => {
    const auth = await authorization(alice, { to: bob.address, value: 1_000n });
    const signature = await alice.signTypedData({
      domain: { name: 'Local USD', version: '2', chainId: CHAIN_ID, verifyingContract: token },
      types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      primaryType: 'CancelAuthorization',
      message: { authorizer: alice.address, nonce: auth.nonce },
    });
    await send(bob, token, 'Stablecoin', 'cancelAuthorization', [alice.address, auth.nonce, signature]);
    await expect(send(bob, token, 'Stablecoin', 'transferWithAuthorization', [...auth.args, auth.signature])).rejects.toThrow(
      /AuthorizationAlreadyUsed/,
    );
  });

  it('forwards a transfer to a virtual address to its master with two Transfer events', async () => {
    const master = bob;
    const salt = await mineSalt(master.address, 1);
    const registered = await send(master, registry, 'AddressRegistry', 'registerVirtualMaster', [salt]);
    const [{ args }] = events(artifacts.AddressRegistry!.abi, registered.logs as never) as [{ args: { masterId: Hex } }];
    const userTag = '0x0000000000aa';
    const virtual = concatHex([args.masterId, '0xfdfdfdfdfdfdfdfdfdfd', userTag]) as Address;

    const before = (await read(token, 'Stablecoin', 'balanceOf', [master.address])) as bigint;
    const receipt = await send(alice, token, 'Stablecoin', 'transfer', [virtual, 7_000_000n]);
    const transfers = events(artifacts.Stablecoin!.abi, receipt.logs as never).map((e) => e.args);
    expect(transfers).toEqual([
      { from: alice.address, to: expect.stringMatching(new RegExp(`^${virtual}$`, 'i')), amount: 7_000_000n },
      { from: expect.stringMatching(new RegExp(`^${virtual}$`, 'i')), to: master.address, amount: 7_000_000n },
    ]);
    expect(await read(token, 'Stablecoin', 'balanceOf', [master.address])).toBe(before + 7_000_000n);
    expect(await read(token, 'Stablecoin', 'balanceOf', [virtual])).toBe(0n);
  });

  it('refuses a transfer to an unregistered virtual address', async () => {
    const virtual = '0xdeadbeeffdfdfdfdfdfdfdfdfdfd000000000001' as Address;
    await expect(send(alice, token, 'Stablecoin', 'transfer', [virtual, 1n])).rejects.toThrow(/VirtualAddressUnregistered/);
  });
});

/** Brute-forces a salt whose keccak256(master, salt) starts with `zeroBytes` zero bytes. */
async function mineSalt(master: Address, zeroBytes: number): Promise<Hex> {
  for (let i = 0n; ; i++) {
    const salt = pad(toHex(i), { size: 32 });
    const hash = keccak256(encodePacked(['address', 'bytes32'], [master, salt]));
    if (hash.slice(2, 2 + zeroBytes * 2) === '0'.repeat(zeroBytes * 2)) return salt;
  }
}

describe('AddressRegistry', () => {
  it('refuses a salt whose hash does not start with 4 zero bytes', async () => {
    const registry = await deploy('AddressRegistry', [4]);
    await expect(
      send(alice, registry, 'AddressRegistry', 'registerVirtualMaster', [pad('0x01', { size: 32 })]),
    ).rejects.toThrow(/ProofOfWorkFailed/);
  });

  it('assigns the 4 bytes after the zero prefix as masterId, once', async () => {
    const registry = await deploy('AddressRegistry', [1]);
    const salt = await mineSalt(alice.address, 1);
    const expected = `0x${keccak256(encodePacked(['address', 'bytes32'], [alice.address, salt])).slice(10, 18)}`;
    await send(alice, registry, 'AddressRegistry', 'registerVirtualMaster', [salt]);
    expect(await read(registry, 'AddressRegistry', 'getMaster', [expected])).toBe(alice.address);
    await expect(send(alice, registry, 'AddressRegistry', 'registerVirtualMaster', [salt])).rejects.toThrow(/MasterIdCollision/);
    const virtual = `${expected}fdfdfdfdfdfdfdfdfdfd112233445566` as Address;
    expect(await read(registry, 'AddressRegistry', 'decodeVirtualAddress', [virtual])).toEqual([true, expected, '0x112233445566']);
    expect(await read(registry, 'AddressRegistry', 'resolveRecipient', [virtual])).toBe(alice.address);
    expect(await read(registry, 'AddressRegistry', 'resolveRecipient', [bob.address])).toBe(bob.address);
  });
});

describe('TIP403Registry', () => {
  let registry: Address;
  beforeAll(async () => {
    registry = await deploy('TIP403Registry', []);
  });
  const policyId = async (receipt: Awaited<ReturnType<typeof send>>) =>
    (events(artifacts.TIP403Registry!.abi, receipt.logs as never).find((e) => e.eventName === 'PolicyCreated')!.args as {
      policyId: bigint;
    }).policyId;

  it('has the built-in reject-all (0) and allow-all (1) policies', async () => {
    expect(await read(registry, 'TIP403Registry', 'isAuthorized', [0n, alice.address])).toBe(false);
    expect(await read(registry, 'TIP403Registry', 'isAuthorized', [1n, alice.address])).toBe(true);
  });

  it('authorises only listed accounts on a whitelist and all but listed ones on a blacklist', async () => {
    const white = await policyId(await send(alice, registry, 'TIP403Registry', 'createPolicy', [alice.address, 0]));
    await send(alice, registry, 'TIP403Registry', 'modifyPolicyWhitelist', [white, bob.address, true]);
    expect(await read(registry, 'TIP403Registry', 'isAuthorized', [white, bob.address])).toBe(true);
    expect(await read(registry, 'TIP403Registry', 'isAuthorized', [white, deployer.address])).toBe(false);

    const black = await policyId(await send(alice, registry, 'TIP403Registry', 'createPolicyWithAccounts', [alice.address, 1, [bob.address]]));
    expect(await read(registry, 'TIP403Registry', 'isAuthorized', [black, bob.address])).toBe(false);
    expect(await read(registry, 'TIP403Registry', 'isAuthorized', [black, deployer.address])).toBe(true);
    expect(await read(registry, 'TIP403Registry', 'policyData', [black])).toEqual([1, alice.address]);
  });

  it('lets only the policy admin change it', async () => {
    const id = await policyId(await send(alice, registry, 'TIP403Registry', 'createPolicy', [alice.address, 1]));
    await expect(send(bob, registry, 'TIP403Registry', 'modifyPolicyBlacklist', [id, bob.address, false])).rejects.toThrow(/Unauthorized/);
    await expect(send(alice, registry, 'TIP403Registry', 'modifyPolicyWhitelist', [id, bob.address, true])).rejects.toThrow(
      /IncompatiblePolicyType/,
    );
    await expect(read(registry, 'TIP403Registry', 'isAuthorized', [9999n, bob.address])).rejects.toThrow(/PolicyNotFound/);
  });
});

describe('PayrollTreasury, StreamVesting and YieldRouter', () => {
  let token: Address;
  let treasury: Address;
  let accountId: bigint;
  const employer = alice;
  const agent = bob;
  const staff = [1, 2, 3].map(() => privateKeyToAccount(generatePrivateKey()).address);
  const memo = (n: number) => pad(toHex(n), { size: 32 });
  const balance = async (who: Address) => (await read(token, 'Stablecoin', 'balanceOf', [who])) as bigint;
  const account = async () => (await read(treasury, 'PayrollTreasury', 'accountOf', [accountId])) as [Address, bigint, bigint];

  beforeAll(async () => {
    token = await deploy('Stablecoin', ['Local USD', 'lUSD', '2', '0x0000000000000000000000000000000000000000']);
    treasury = await deploy('PayrollTreasury', [token]);
    await send(deployer, token, 'Stablecoin', 'setMinter', [deployer.address, true]);
    await send(deployer, token, 'Stablecoin', 'mint', [employer.address, 100_000_000_000n]);
    const created = await send(employer, treasury, 'PayrollTreasury', 'createAccount', [employer.address]);
    accountId = (events(artifacts.PayrollTreasury!.abi, created.logs as never)[0]!.args as { accountId: bigint }).accountId;
    await send(employer, token, 'Stablecoin', 'approve', [treasury, 50_000_000_000n]);
    await send(employer, treasury, 'PayrollTreasury', 'deposit', [accountId, 50_000_000_000n]);
    await send(employer, treasury, 'PayrollTreasury', 'setAgent', [accountId, agent.address, true]);
  });

  it('pays a whole batch in one transaction with a memo per recipient', async () => {
    const amounts = [1_000_000_000n, 2_000_000_000n, 3_000_000_000n];
    const receipt = await send(agent, treasury, 'PayrollTreasury', 'executeBatchPayroll', [staff, amounts, amounts.map((_, i) => memo(i + 1)), accountId]);
    const memoEvents = events(artifacts.Stablecoin!.abi, receipt.logs.filter((l) => l.address.toLowerCase() === token.toLowerCase()) as never).filter(
      (e) => e.eventName === 'TransferWithMemo',
    );
    expect(memoEvents.map((e) => (e.args as { memo: Hex }).memo)).toEqual([memo(1), memo(2), memo(3)]);
    for (const [i, who] of staff.entries()) expect(await balance(who)).toBe(amounts[i]);
    expect((await account())[1]).toBe(44_000_000_000n);
  });

  it('makes an opener other than the admin the agent of the account it opened', async () => {
    const opened = await send(agent, treasury, 'PayrollTreasury', 'createAccount', [employer.address]);
    const openedId = (events(artifacts.PayrollTreasury!.abi, opened.logs as never)[0]!.args as { accountId: bigint }).accountId;
    expect(await read(treasury, 'PayrollTreasury', 'isAgent', [openedId, agent.address])).toBe(true);
    // An admin opening its own account appoints no one.
    expect(await read(treasury, 'PayrollTreasury', 'isAgent', [accountId, employer.address])).toBe(false);
    // The admin can revoke the opener.
    await send(employer, treasury, 'PayrollTreasury', 'setAgent', [openedId, agent.address, false]);
    expect(await read(treasury, 'PayrollTreasury', 'isAgent', [openedId, agent.address])).toBe(false);
  });

  it('is all-or-nothing: one bad recipient pays no one', async () => {
    const before = await account();
    const recipients = [staff[0]!, '0x0000000000000000000000000000000000000000' as Address];
    await expect(
      send(agent, treasury, 'PayrollTreasury', 'executeBatchPayroll', [recipients, [1n, 1n], [memo(1), memo(2)], accountId]),
    ).rejects.toThrow(/InvalidRecipient/);
    await expect(
      send(agent, treasury, 'PayrollTreasury', 'executeBatchPayroll', [staff, [1n, 1n, 10n ** 15n], [memo(1), memo(2), memo(3)], accountId]),
    ).rejects.toThrow(/InsufficientAvailable/);
    expect(await account()).toEqual(before);
  });

  it('lets only the admin and its agents spend, and locks funds out of reach', async () => {
    await expect(
      send(deployer, treasury, 'PayrollTreasury', 'executeBatchPayroll', [[staff[0]!], [1n], [memo(1)], accountId]),
    ).rejects.toThrow(/Unauthorized/);
    const [, available] = await account();
    await send(employer, treasury, 'PayrollTreasury', 'lock', [accountId, available]);
    await expect(send(agent, treasury, 'PayrollTreasury', 'transferFromAccount', [accountId, staff[0]!, 1n, memo(9)])).rejects.toThrow(
      /InsufficientAvailable/,
    );
    await send(employer, treasury, 'PayrollTreasury', 'unlock', [accountId, available]);
    expect(await account()).toEqual([employer.address, available, 0n]);
  });

  it('streams salary per second and pays a claim from the employer account', async () => {
    const vesting = await deploy('StreamVesting', [treasury]);
    await send(employer, treasury, 'PayrollTreasury', 'setAgent', [accountId, vesting, true]);
    await send(deployer, vesting, 'StreamVesting', 'setOperator', [agent.address, true]);
    const employee = staff[0]!;
    const rate = 3_170n; // 100,000 USD a year is about 0.00317 USD a second
    await send(employer, vesting, 'StreamVesting', 'setStream', [employee, accountId, rate]);
    await evm.request({ method: 'evm_increaseTime' as never, params: [100] as never });
    await evm.request({ method: 'evm_mine' as never, params: [] as never });
    const accrued = (await read(vesting, 'StreamVesting', 'accruedOf', [employee])) as bigint;
    expect(accrued).toBeGreaterThanOrEqual(100n * rate);
    expect(accrued).toBeLessThanOrEqual(102n * rate);

    const before = await balance(employee);
    await expect(send(deployer, vesting, 'StreamVesting', 'claim', [employee])).rejects.toThrow(/Unauthorized/);
    await send(agent, vesting, 'StreamVesting', 'claim', [employee]);
    const paid = (await balance(employee)) - before;
    expect(paid).toBeGreaterThanOrEqual(accrued);
    expect(await read(vesting, 'StreamVesting', 'accruedOf', [employee])).toBeLessThanOrEqual(rate);
  });

  it('rebalances only to allocations summing to 10,000 bps', async () => {
    const router = await deploy('YieldRouter', [treasury, ['treasury-bills', 'lending'], [450n, 600n]]);
    expect(await read(router, 'YieldRouter', 'allocationOf', [accountId])).toEqual([10_000n, 0n]);
    expect(await read(router, 'YieldRouter', 'apyBps', [accountId])).toBe(450n);
    await expect(send(agent, router, 'YieldRouter', 'rebalance', [accountId, [5_000n, 4_999n]])).rejects.toThrow(/AllocationNotWhole/);
    await expect(send(agent, router, 'YieldRouter', 'rebalance', [accountId, [10_000n]])).rejects.toThrow(/LengthMismatch/);
    await expect(send(deployer, router, 'YieldRouter', 'rebalance', [accountId, [5_000n, 5_000n]])).rejects.toThrow(/Unauthorized/);
    await send(agent, router, 'YieldRouter', 'rebalance', [accountId, [5_000n, 5_000n]]);
    expect(await read(router, 'YieldRouter', 'apyBps', [accountId])).toBe(525n);
    expect(await read(router, 'YieldRouter', 'sources')).toEqual(['treasury-bills', 'lending']);
  });
});

describe('Multicall3 at the canonical address', () => {
  it('answers tryAggregate with per-call success', async () => {
    const canonical = '0xcA11bde05977b3631167028862bE2a173976CA11' as Address;
    const deployed = await deploy('Multicall3', []);
    const code = await publicClient.getCode({ address: deployed });
    await evm.request({ method: 'hardhat_setCode' as never, params: [canonical, code] as never });
    const policies = await deploy('TIP403Registry', []);
    const abi = artifacts.TIP403Registry!.abi;
    const { encodeFunctionData } = await import('viem');
    const calls = [
      { target: policies, callData: encodeFunctionData({ abi, functionName: 'isAuthorized', args: [1n, alice.address] }) },
      { target: policies, callData: encodeFunctionData({ abi, functionName: 'isAuthorized', args: [77n, alice.address] }) },
    ];
    const { result } = await publicClient.simulateContract({
      address: canonical,
      abi: artifacts.Multicall3!.abi,
      functionName: 'tryAggregate',
      args: [false, calls],
    });
    expect((result as { success: boolean }[]).map((r) => r.success)).toEqual([true, false]);
  });
});

describe('ERC-8004 identity and reputation', () => {
  let identity: Address;
  let reputation: Address;
  let agentId: bigint;

  beforeAll(async () => {
    identity = await deploy('AgentIdentityRegistry', []);
    reputation = await deploy('AgentReputationRegistry', [identity]);
    const receipt = await send(alice, identity, 'AgentIdentityRegistry', 'register', ['https://agents.example/alice.json']);
    agentId = (events(artifacts.AgentIdentityRegistry!.abi, receipt.logs as never).find((e) => e.eventName === 'Registered')!.args as {
      agentId: bigint;
    }).agentId;
  });

  it('registers an agent owned by its registrant, with its URI', async () => {
    expect(agentId).toBe(1n);
    expect(await read(identity, 'AgentIdentityRegistry', 'ownerOf', [agentId])).toBe(alice.address);
    expect(await read(identity, 'AgentIdentityRegistry', 'tokenURI', [agentId])).toBe('https://agents.example/alice.json');
    await expect(read(identity, 'AgentIdentityRegistry', 'ownerOf', [99n])).rejects.toThrow(/NonexistentAgent/);
  });

  it('takes feedback from clients and summarises it, refusing self-feedback', async () => {
    const give = (who: PrivateKeyAccount, score: number, tag1: string) =>
      send(who, reputation, 'AgentReputationRegistry', 'giveFeedback', [agentId, score, tag1, '', '', '', pad('0x', { size: 32 })]);
    await give(bob, 90, 'agent-pay');
    await give(bob, 70, 'escrow');
    await give(deployer, 80, 'agent-pay');
    await expect(give(alice, 100, 'agent-pay')).rejects.toThrow(/SelfFeedback/);
    await expect(give(bob, 101, 'agent-pay')).rejects.toThrow(/ScoreOutOfRange/);

    expect(await read(reputation, 'AgentReputationRegistry', 'getSummary', [agentId, [], '', ''])).toEqual([3n, 80]);
    expect(await read(reputation, 'AgentReputationRegistry', 'getSummary', [agentId, [], 'agent-pay', ''])).toEqual([2n, 85]);
    expect(await read(reputation, 'AgentReputationRegistry', 'getSummary', [agentId, [bob.address], '', ''])).toEqual([2n, 80]);

    await send(bob, reputation, 'AgentReputationRegistry', 'revokeFeedback', [agentId, 2n]);
    expect(await read(reputation, 'AgentReputationRegistry', 'getSummary', [agentId, [], '', ''])).toEqual([2n, 85]);
    expect(await read(reputation, 'AgentReputationRegistry', 'readFeedback', [agentId, bob.address, 2n])).toEqual([70, 'escrow', '', true]);
  });
});
