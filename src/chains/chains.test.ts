import { address as solanaAddress, createKeyPairSignerFromPrivateKeyBytes, type Address as SolanaAddress, type Signature } from '@solana/kit';
import { createWalletClient, encodePacked, keccak256, pad, parseEventLogs, toHex, zeroHash, type Address, type Hex } from 'viem';
import { findAssociatedTokenPda, getTokenDecoder, getTransferInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../test/support/http.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { SecretRedactor } from '../secrets.js';
import { loadConfig } from '../config.js';
import { embeddedChains as embeddedChainsTable } from './tables.js';
import { Faucet } from '../features/dev/faucet.js';
import { agentIdentityRegistryAbi, stablecoinAbi } from './evm/abis.js';
import { ChainRevertError } from './evm/connection.js';
import { embeddedChainPorts, liveChainPorts, type Chains } from './index.js';
import { EscrowStatus, LOCAL_ESCROW_PROGRAM_ID } from './solana/escrow-program/index.js';
import { SolanaTransactionError, type SignedSolanaTransaction } from './solana/solana-chain.js';

const USD = 1_000_000n;
const memo = (text: string) => pad(toHex(text), { size: 32, dir: 'right' });
const randomSolanaAddress = async (): Promise<SolanaAddress> =>
  (await createKeyPairSignerFromPrivateKeyBytes(crypto.getRandomValues(new Uint8Array(32)))).address;

let app: TestApp;
let server: LoopbackServer;
let faucet: Faucet;
const ports: Record<'embedded' | 'live over HTTP', Chains> = {} as never;

beforeAll(async () => {
  app = await startTestApp({}, { chains: true });
  const embedded = app.embeddedChains!;
  faucet = new Faucet({ chains: embedded });
  ports.embedded = await embeddedChainPorts(embedded);

  // The live adapters, pointed at the embedded chains' JSON-RPC over real HTTP, with the
  // embedded operator's keys and deployment: the live code path, run offline.
  server = await serveOnLoopback(app.app.fetch);
  const url = server.url;
  const keys = Object.fromEntries((await app.database.db.select().from(embeddedChainsTable)).map((row) => [row.chain, row.operatorKey]));
  const tempoContracts = embedded.tempo.contracts;
  const config = loadConfig({
    APP_MODE: 'local',
    TEMPO_RPC_URL: `${url}/api/dev/rpc/tempo`,
    BASE_RPC_URL: `${url}/api/dev/rpc/base`,
    SOLANA_RPC_URL: `${url}/api/dev/rpc/solana`,
    EVM_SERVICE_KEY: keys.tempo,
    SOLANA_SERVICE_KEY: keys.solana,
    TEMPO_CONTRACTS: JSON.stringify(tempoContracts),
    BASE_USDC_ADDRESS: embedded.base.contracts.stablecoin,
    SOLANA_USDC_MINT: embedded.solana.mint,
    SOLANA_ESCROW_PROGRAM_ID: LOCAL_ESCROW_PROGRAM_ID,
    SOLANA_NETWORK: embedded.solana.network,
  });
  ports['live over HTTP'] = await liveChainPorts(config.live, app.database, new SecretRedactor(config.secrets));
  // The Tempo operator's key also signs on Base here: give it Base funds and gas.
  await faucet.fund('eip155:8453', ports['live over HTTP'].base.serviceAddress, 1_000n * USD);
  
});

afterAll(async () => {
  await server.close();
  await app.close();
});

describe.each(['embedded', 'live over HTTP'] as const)('chain ports (%s)', (mode) => {
  const chains = () => ports[mode];

  describe('Tempo', () => {
    it('transfers with a memo, and finds the transfer in a block range', async () => {
      const { tempo } = chains();
      await faucet.fund('eip155:4217', tempo.serviceAddress, 100n * USD);
      const to = privateKeyToAccount(generatePrivateKey()).address;
      const from = await tempo.blockNumber();
      const sent = await tempo.transfer(to, 12_340_000n, memo('inv-42'));
      expect(await tempo.balanceOf(to)).toBe(12_340_000n);

      const receipt = await tempo.connection.publicClient.getTransactionReceipt({ hash: sent.txHash });
      const [withMemo] = parseEventLogs({ abi: stablecoinAbi, eventName: 'TransferWithMemo', logs: receipt.logs });
      expect(withMemo?.args).toMatchObject({ to, amount: 12_340_000n, memo: memo('inv-42') });

      const found = await tempo.transfers({ fromBlock: from, toBlock: await tempo.blockNumber(), to });
      expect(found).toEqual([
        expect.objectContaining({ txHash: sent.txHash, from: tempo.serviceAddress, to, amount: 12_340_000n, blockNumber: sent.blockNumber }),
      ]);
      expect(await tempo.transfers({ fromBlock: from, toBlock: sent.blockNumber - 1n, to })).toEqual([]);
    });

    it('pays a payroll batch from a treasury account all-or-nothing', async () => {
      const { tempo } = chains();
      await faucet.fund('eip155:4217', tempo.serviceAddress, 1_000n * USD);
      const { accountId } = await tempo.createTreasuryAccount();
      await tempo.depositToTreasury(accountId, 300n * USD);
      expect(await tempo.treasuryAccount(accountId)).toEqual({ admin: tempo.serviceAddress, available: 300n * USD, locked: 0n });
      expect(await tempo.treasuryAccount(10_000_000n)).toBeNull();

      const [alice, bob] = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
      const tooMuch = [
        { recipient: alice, amount: 200n * USD, memo: memo('run-1:alice') },
        { recipient: bob, amount: 200n * USD, memo: memo('run-1:bob') },
      ];
      await expect(tempo.executeBatchPayroll(accountId, tooMuch)).rejects.toMatchObject({
        name: 'ChainRevertError',
        errorName: 'InsufficientAvailable',
        args: [300n * USD, 400n * USD],
      });
      expect([await tempo.balanceOf(alice), await tempo.balanceOf(bob)]).toEqual([0n, 0n]);

      const batch = [tooMuch[0]!, { ...tooMuch[1]!, amount: 100n * USD }];
      const paid = await tempo.executeBatchPayroll(accountId, batch);
      expect([await tempo.balanceOf(alice), await tempo.balanceOf(bob)]).toEqual([200n * USD, 100n * USD]);
      expect((await tempo.treasuryAccount(accountId))?.available).toBe(0n);
      const receipt = await tempo.connection.publicClient.getTransactionReceipt({ hash: paid.txHash });
      const memos = parseEventLogs({ abi: stablecoinAbi, eventName: 'TransferWithMemo', logs: receipt.logs }).map((log) => log.args.memo);
      expect(memos).toEqual([memo('run-1:alice'), memo('run-1:bob')]);
      // The unsigned call a payroll prepare hands out is this very batch.
      expect(tempo.batchPayrollCall(accountId, batch).to).toBe(tempo.contracts.payrollTreasury);
    });

    it('records a write before broadcasting it, and mines a rebroadcast once', async () => {
      const { tempo } = chains();
      await faucet.fund('eip155:4217', tempo.serviceAddress, 10n * USD);
      const to = privateKeyToAccount(generatePrivateKey()).address;

      // A recorder that fails stops the payment before it leaves.
      await expect(
        tempo.transfer(to, USD, zeroHash, {
          beforeBroadcast: async () => {
            throw new Error('database down');
          },
        }),
      ).rejects.toThrow('database down');
      expect(await tempo.balanceOf(to)).toBe(0n);

      let recorded: { hash: Hex; raw: Hex } | undefined;
      const sent = await tempo.transfer(to, USD, zeroHash, { beforeBroadcast: async (signed) => void (recorded = signed) });
      expect(recorded?.hash).toBe(sent.txHash);
      expect(await tempo.connection.receipt(sent.txHash)).toMatchObject({ status: 'success' });
      expect(await tempo.connection.receipt(keccak256('0x01'))).toBeNull();
      // Recovery after a crash sends the same bytes again: refused, nothing paid twice.
      await tempo.connection.rebroadcast(recorded!.raw).catch(() => {});
      expect(await tempo.balanceOf(to)).toBe(USD);
    });

    it('streams salary and pays what accrued', async () => {
      const { tempo } = chains();
      await faucet.fund('eip155:4217', tempo.serviceAddress, 100n * USD);
      const { accountId } = await tempo.createTreasuryAccount();
      await tempo.depositToTreasury(accountId, 50n * USD);
      await tempo.setTreasuryAgent(accountId, tempo.contracts.streamVesting, true);
      const employee = privateKeyToAccount(generatePrivateKey()).address;
      await expect(tempo.claimSalary(employee)).rejects.toMatchObject({ errorName: 'NoStream' });

      await tempo.setSalaryStream(employee, accountId, 3_170n); // ~100,000 USD a year
      const stream = await tempo.salaryStream(employee);
      expect(stream).toMatchObject({ accountId, ratePerSecond: 3_170n, active: true });
      const evm = app.embeddedChains!.tempo.evm;
      await evm.request({ method: 'evm_setNextBlockTimestamp' as never, params: [Number(stream.accruingSince) + 600] as never });
      await evm.request({ method: 'evm_mine' as never, params: [] as never });
      expect(await tempo.accruedSalary(employee)).toBe(600n * 3_170n);

      const claimed = await tempo.claimSalary(employee);
      expect(claimed.amount).toBeGreaterThanOrEqual(600n * 3_170n);
      expect(await tempo.balanceOf(employee)).toBe(claimed.amount);
    });

    it('reads and rebalances yield; an allocation must sum to 10,000 bps', async () => {
      const { tempo } = chains();
      const { accountId } = await tempo.createTreasuryAccount();
      const before = await tempo.yieldPosition(accountId);
      expect(before.sources.map((s) => s.allocationBps)).toEqual([10_000, 0, 0]);
      expect(before.blendedApyBps).toBe(before.sources[0]!.apyBps);

      await tempo.rebalanceYield(accountId, [5_000, 3_000, 2_000]);
      const after = await tempo.yieldPosition(accountId);
      const expected = Math.floor(after.sources.reduce((sum, s) => sum + s.apyBps * s.allocationBps, 0) / 10_000);
      expect(after.blendedApyBps).toBe(expected);
      await expect(tempo.rebalanceYield(accountId, [5_000, 3_000, 1_999])).rejects.toMatchObject({
        errorName: 'AllocationNotWhole',
        args: [9_999n],
      });
    });

    it('checks TIP-403 whitelist and blacklist policies', async () => {
      const { tempo } = chains();
      const [allowed, other] = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
      const { policyId: whitelist } = await tempo.createPolicy('whitelist', [allowed]);
      expect(await tempo.isAuthorized(whitelist, allowed)).toBe(true);
      expect(await tempo.isAuthorized(whitelist, other)).toBe(false);

      const { policyId: blacklist } = await tempo.createPolicy('blacklist', []);
      expect(await tempo.isAuthorized(blacklist, other)).toBe(true);
      await tempo.setPolicyMember(blacklist, 'blacklist', other, true);
      expect(await tempo.isAuthorized(blacklist, other)).toBe(false);
    });

    it('registers a virtual master and resolves its virtual addresses', async () => {
      const { tempo } = chains();
      const master = privateKeyToAccount(generatePrivateKey());
      const hashOf = (salt: Hex) => keccak256(encodePacked(['address', 'bytes32'], [master.address, salt]));
      let salt: Hex = zeroHash;
      for (let i = 0n; !hashOf(salt).startsWith('0x00'); i++) salt = pad(toHex(i), { size: 32 }); // the test chain wants 1 zero byte
      let badSalt: Hex = zeroHash;
      for (let i = 0n; hashOf(badSalt).startsWith('0x00'); i++) badSalt = pad(toHex(i), { size: 32 });

      const virtual = (masterId: Hex) => `${masterId}${'fd'.repeat(10)}${'ab'.repeat(6)}` as Address;
      // The embedded port gives the master gas itself; a live master account brings its own.
      if (mode === 'live over HTTP') await faucet.fund('eip155:4217', master.address, USD);
      await expect(tempo.registerVirtualMaster(master, badSalt)).rejects.toMatchObject({ errorName: 'ProofOfWorkFailed' });
      const { masterId } = await tempo.registerVirtualMaster(master, salt);
      expect(masterId).toBe(`0x${hashOf(salt).slice(10, 18)}`);
      expect(await tempo.resolveVirtualAddress(virtual(masterId))).toBe(master.address);
      expect(await tempo.resolveVirtualAddress(virtual('0xdeadbeef'))).toBeNull();
    });

    it('registers ERC-8004 agents and records feedback', async () => {
      const { tempo } = chains();
      const { agentId: own } = await tempo.registerAgent('https://agents.example/own.json');
      expect(await tempo.agentOwner(own)).toBe(tempo.serviceAddress);
      expect(await tempo.agentOwner(own + 1_000_000n)).toBeNull();
      await expect(
        tempo.giveFeedback({ agentId: own, score: 90, tag1: 't', tag2: '', endpoint: '', feedbackUri: '', feedbackHash: zeroHash }),
      ).rejects.toMatchObject({ errorName: 'SelfFeedback' });

      // An agent someone else owns gets the service's feedback.
      const owner = privateKeyToAccount(generatePrivateKey());
      await faucet.fund('eip155:4217', owner.address, USD);
      const wallet = createWalletClient({ account: owner, chain: tempo.connection.chain, transport: tempo.connection.transport });
      const hash = await wallet.writeContract({
        address: tempo.contracts.agentIdentityRegistry,
        abi: agentIdentityRegistryAbi,
        functionName: 'register',
        args: ['https://agents.example/worker.json'],
      });
      const receipt = await tempo.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
      const [registered] = parseEventLogs({ abi: agentIdentityRegistryAbi, eventName: 'Registered', logs: receipt.logs });
      const worker = registered!.args.agentId;
      expect(await tempo.agentOwner(worker)).toBe(owner.address);

      for (const score of [80, 100]) {
        await tempo.giveFeedback({ agentId: worker, score, tag1: 'svc-escrow-settled', tag2: '', endpoint: '', feedbackUri: '', feedbackHash: zeroHash });
      }
      expect(await tempo.feedbackSummary(worker)).toEqual({ count: 2, averageScore: 90 });
      expect(await tempo.feedbackSummary(worker, { tag1: 'other' })).toEqual({ count: 0, averageScore: 0 });
      await expect(
        tempo.giveFeedback({ agentId: worker, score: 101, tag1: '', tag2: '', endpoint: '', feedbackUri: '', feedbackHash: zeroHash }),
      ).rejects.toBeInstanceOf(ChainRevertError);
    });
  });

  describe('Base', () => {
    it('transfers the token', async () => {
      const { base } = chains();
      await faucet.fund('eip155:8453', base.serviceAddress, 10n * USD);
      const to = privateKeyToAccount(generatePrivateKey()).address;
      await base.transfer(to, 2_500_000n);
      expect(await base.balanceOf(to)).toBe(2_500_000n);
      expect(base.network).toBe('eip155:8453');
    });
  });

  describe('Solana', () => {
    it('transfers SPL tokens from the service wallet, knowing the signature before sending', async () => {
      const { solana } = chains();
      await faucet.fund(solana.network, solana.serviceAddress, 100n * USD);
      const to = await randomSolanaAddress();
      let recorded: SignedSolanaTransaction | undefined;
      const { signature } = await solana.transfer(to, 7_000_000n, 'payroll:item-1', { beforeSend: async (signed) => void (recorded = signed) });
      expect(recorded?.signature).toBe(signature);
      expect(await solana.tokenBalance(to)).toBe(7_000_000n);
      expect(await solana.status(signature)).toEqual({ state: 'landed' });
      // Recovery after a crash sends the recorded bytes again: they never pay twice ...
      await solana.resend(recorded!).catch(() => {});
      expect(await solana.tokenBalance(to)).toBe(7_000_000n);
      // ... while the same payment with another reference is another transaction.
      await solana.transfer(to, 7_000_000n, 'payroll:item-2');
      expect(await solana.tokenBalance(to)).toBe(14_000_000n);
      await expect(solana.transfer(to, 10_000_000_000n * USD, 'too-much')).rejects.toBeInstanceOf(SolanaTransactionError);
      expect(await solana.status('1111111111111111111111111111111111111111111111111111111111111111' as Signature)).toEqual({ state: 'unknown' });
    });

    it('holds escrow funds in the escrow program: a vault the service key cannot move, paid out once', async () => {
      const { solana } = chains();
      await faucet.fund(solana.network, solana.serviceAddress, 100n * USD);
      const escrowId = crypto.randomUUID();
      const worker = await randomSolanaAddress();
      const terms = { worker, expiresAt: new Date(Date.now() + 3_600_000) };
      const { state } = await solana.fundEscrow(escrowId, 25n * USD, terms);
      const { vault } = await solana.escrowAccounts(escrowId);
      expect(state).toBe((await solana.escrowAccounts(escrowId)).state);
      expect(await solana.escrowBalance(escrowId)).toBe(25n * USD);
      expect(await solana.escrowState(escrowId)).toMatchObject({
        status: EscrowStatus.Funded,
        amount: 25n * USD,
        expiresAt: BigInt(Math.floor(terms.expiresAt.getTime() / 1000)),
        requester: solana.serviceAddress,
        worker,
        validator: solana.escrowValidatorAddress,
        vault,
      });
      // One escrow id, one escrow: funding it again fails on chain.
      await expect(solana.fundEscrow(escrowId, 25n * USD, terms)).rejects.toBeInstanceOf(SolanaTransactionError);
      expect(await solana.escrowBalance(escrowId)).toBe(25n * USD);
      // The vault's authority is the state, an address only the program signs for: the service's key cannot move it.
      const account = app.embeddedChains!.solana.getAccount(solanaAddress(vault));
      expect(account.exists && getTokenDecoder().decode(account.data).owner).toBe(state);
      const [serviceTokens] = await findAssociatedTokenPda({ owner: solana.serviceAddress, mint: solana.mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
      const taking = getTransferInstruction({ source: vault, destination: serviceTokens, authority: solana.service, amount: 25n * USD });
      await expect(solana.sendInstructions([taking])).rejects.toBeInstanceOf(SolanaTransactionError);
      expect(await solana.escrowBalance(escrowId)).toBe(25n * USD);

      const sha256 = 'ab'.repeat(32);
      await solana.recordDeliverable(escrowId, sha256);
      expect(await solana.escrowState(escrowId)).toMatchObject({ status: EscrowStatus.Delivered, deliverable: sha256 });
      const released = await solana.releaseEscrow(escrowId, 'approved');
      expect(released).toMatchObject({ released: 'settled' });
      expect(released.signature).not.toBeNull();
      expect(await solana.tokenBalance(worker)).toBe(25n * USD);
      expect(await solana.escrowBalance(escrowId)).toBe(0n);
      expect(await solana.escrowState(escrowId)).toMatchObject({ status: EscrowStatus.Settled });
      // Released already: nothing is sent, and the answer says how it ended.
      expect(await solana.releaseEscrow(escrowId, 'approved')).toEqual({ signature: null, released: 'settled' });
      expect(await solana.tokenBalance(worker)).toBe(25n * USD);
    });

    it('writes attestations as memos and reads them back', async () => {
      const { solana } = chains();
      const attestation = { type: 'svc-escrow-settled', subject: `erc8004:4217:${mode}`, note: 'quote " backslash \\ and ünïcødé ✓' };
      const { signature } = await solana.writeAttestation(attestation);
      expect(await solana.readAttestation(signature)).toEqual({ attestation, signer: solana.serviceAddress });

      const transfer = await solana.transfer(await randomSolanaAddress(), 1n, 'not-an-attestation');
      expect(await solana.readAttestation(transfer.signature)).toBeNull();
    });
  });
});
