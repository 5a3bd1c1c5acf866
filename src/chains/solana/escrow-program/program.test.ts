import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  decodeToken,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTransferInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { decodeEscrowState, escrowAccounts, initializeInstruction, recordVerdictInstruction, releaseInstruction, submitDeliverableInstruction } from './client.js';
import { EscrowProgramError, EscrowStatus, STATE_SIZE } from './layout.js';
import { escrowProgram } from './program.js';

const PROGRAM = 'Esc1111111111111111111111111111111111111111' as Address;
const AMOUNT = 12_500_000n;
const NOW = 1_900_000_000n;
const HASH = new Uint8Array(32).fill(7);

/** A LiteSVM with the program, a 6-decimal mint, and the parties of one escrow (requester funded). */
async function setUp() {
  const svm = new LiteSVM();
  svm.addProgram(PROGRAM, escrowProgram());
  setNow(svm, NOW);
  const [requester, worker, validator, stranger, mintKey] = await Promise.all([
    generateKeyPairSigner(),
    generateKeyPairSigner(),
    generateKeyPairSigner(),
    generateKeyPairSigner(),
    generateKeyPairSigner(),
  ]);
  for (const party of [requester, worker, validator, stranger]) svm.airdrop(party.address, lamports(10_000_000_000n));
  const send = async (payer: KeyPairSigner, instructions: Instruction[]) => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const outcome = svm.sendTransaction(await signTransactionMessageWithSigners(message));
    svm.expireBlockhash();
    return outcome instanceof FailedTransactionMetadata ? { error: outcome.err().toString() } : { error: undefined };
  };
  const mint = mintKey.address;
  const space = BigInt(getMintSize());
  const minted = await send(requester, [
    getCreateAccountInstruction({ payer: requester, newAccount: mintKey, lamports: svm.minimumBalanceForRentExemption(space), space, programAddress: TOKEN_PROGRAM_ADDRESS }),
    getInitializeMint2Instruction({ mint, decimals: 6, mintAuthority: requester.address }),
  ]);
  expect(minted.error).toBeUndefined();
  const tokenAccount = async (owner: Address) => (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  const openTokenAccount = (payer: KeyPairSigner, owner: Address) =>
    tokenAccount(owner).then((ata) => getCreateAssociatedTokenIdempotentInstruction({ payer, ata, owner, mint }));
  const source = await tokenAccount(requester.address);
  expect((await send(requester, [await openTokenAccount(requester, requester.address), getMintToInstruction({ mint, token: source, mintAuthority: requester, amount: 100n * AMOUNT })])).error).toBeUndefined();
  const balance = async (owner: Address) => {
    const account = svm.getAccount(await tokenAccount(owner));
    return account.exists ? decodeToken({ ...account, address: await tokenAccount(owner) } as never).data.amount : 0n;
  };
  return { svm, send, mint, requester, worker, validator, stranger, source, tokenAccount, openTokenAccount, balance };
}

type Chain = Awaited<ReturnType<typeof setUp>>;

function setNow(svm: LiteSVM, unixTimestamp: bigint) {
  const clock = svm.getClock();
  clock.unixTimestamp = unixTimestamp;
  svm.setClock(clock);
}

/** Posts an escrow (vault opened and funded in one transaction) expiring an hour from NOW. */
async function post(chain: Chain, escrowId = randomUUID()) {
  const accounts = await escrowAccounts(PROGRAM, escrowId, chain.mint);
  const outcome = await chain.send(chain.requester, [
    getCreateAssociatedTokenIdempotentInstruction({ payer: chain.requester, ata: accounts.vault, owner: accounts.state, mint: chain.mint }),
    initializeInstruction({
      program: PROGRAM,
      requester: chain.requester,
      source: chain.source,
      ...accounts,
      escrowId,
      amount: AMOUNT,
      expiresAt: NOW + 3600n,
      stateLamports: chain.svm.minimumBalanceForRentExemption(BigInt(STATE_SIZE)),
      worker: chain.worker.address,
      validator: chain.validator.address,
    }),
  ]);
  return { escrowId, ...accounts, outcome };
}

type Escrow = Awaited<ReturnType<typeof post>>;

const state = (chain: Chain, escrow: Escrow) => {
  const account = chain.svm.getAccount(escrow.state);
  if (!account.exists) throw new Error('no state account');
  return decodeEscrowState(account.data);
};
const custom = (error: EscrowProgramError) => new RegExp(`code: ${error}\\b`);

const deliver = (chain: Chain, escrow: Escrow, by: KeyPairSigner = chain.worker) =>
  chain.send(by, [submitDeliverableInstruction({ program: PROGRAM, deliverer: by, state: escrow.state, escrowId: escrow.escrowId, hash: HASH })]);
const verdict = (chain: Chain, escrow: Escrow, approved: boolean, by: KeyPairSigner = chain.validator) =>
  chain.send(by, [recordVerdictInstruction({ program: PROGRAM, validator: by, state: escrow.state, approved })]);
/** settle or refund sent by a stranger, who also opens the destination token account. */
const release = async (chain: Chain, escrow: Escrow, kind: 'settle' | 'refund', to = kind === 'settle' ? chain.worker.address : chain.requester.address) =>
  chain.send(chain.stranger, [
    await chain.openTokenAccount(chain.stranger, to),
    releaseInstruction(kind, { program: PROGRAM, state: escrow.state, vault: escrow.vault, destination: await chain.tokenAccount(to), requester: chain.requester.address }),
  ]);

describe('the escrow program (sBPF on LiteSVM)', () => {
  it('initialize: the state at its PDA, the amount in a vault only the program can move', async () => {
    const chain = await setUp();
    const escrow = await post(chain);
    expect(escrow.outcome.error).toBeUndefined();
    expect(state(chain, escrow)).toMatchObject({
      status: EscrowStatus.Funded,
      escrowId: escrow.escrowId,
      amount: AMOUNT,
      expiresAt: NOW + 3600n,
      requester: chain.requester.address,
      worker: chain.worker.address,
      validator: chain.validator.address,
      vault: escrow.vault,
      mint: chain.mint,
      deliverable: null,
    });
    const stateAccount = chain.svm.getAccount(escrow.state);
    expect(stateAccount.exists && stateAccount.programAddress).toBe(PROGRAM);
    expect(await chain.balance(escrow.state)).toBe(AMOUNT);

    // The requester (the service's key) cannot move the vault's funds: the vault's authority is the state.
    const taken = await chain.send(chain.requester, [
      getTransferInstruction({ source: escrow.vault, destination: chain.source, authority: chain.requester, amount: AMOUNT }),
    ]);
    expect(taken.error).toBeDefined();
    expect(await chain.balance(escrow.state)).toBe(AMOUNT);

    // A vault the state does not own (here a stranger's token account) is refused.
    const otherId = randomUUID();
    const other = await escrowAccounts(PROGRAM, otherId, chain.mint);
    const ownVault = await chain.send(chain.requester, [
      await chain.openTokenAccount(chain.requester, chain.stranger.address),
      initializeInstruction({
        program: PROGRAM,
        requester: chain.requester,
        source: chain.source,
        ...other,
        vault: await chain.tokenAccount(chain.stranger.address),
        escrowId: otherId,
        amount: AMOUNT,
        expiresAt: NOW + 3600n,
        stateLamports: chain.svm.minimumBalanceForRentExemption(BigInt(STATE_SIZE)),
        worker: chain.worker.address,
        validator: chain.validator.address,
      }),
    ]);
    expect(ownVault.error).toMatch(custom(EscrowProgramError.VaultNotSecure));

    // One escrow id, one escrow.
    expect((await post(chain, escrow.escrowId)).outcome.error).toBeDefined();
    expect(await chain.balance(escrow.state)).toBe(AMOUNT);
  });

  it('approved: a stranger settles to the worker, once', async () => {
    const chain = await setUp();
    const escrow = await post(chain);
    expect((await release(chain, escrow, 'settle')).error).toMatch(custom(EscrowProgramError.WrongStatus));
    expect((await verdict(chain, escrow, true)).error).toMatch(custom(EscrowProgramError.WrongStatus)); // nothing delivered yet
    expect((await deliver(chain, escrow)).error).toBeUndefined();
    expect(state(chain, escrow)).toMatchObject({ status: EscrowStatus.Delivered, deliverable: Buffer.from(HASH).toString('hex') });
    expect((await deliver(chain, escrow)).error).toMatch(custom(EscrowProgramError.WrongStatus));

    expect((await verdict(chain, escrow, true, chain.stranger)).error).toMatch(custom(EscrowProgramError.NotValidator));
    expect((await verdict(chain, escrow, true, chain.worker)).error).toMatch(custom(EscrowProgramError.NotValidator));
    expect((await verdict(chain, escrow, true)).error).toBeUndefined();
    expect((await verdict(chain, escrow, false)).error).toMatch(custom(EscrowProgramError.WrongStatus));
    expect((await release(chain, escrow, 'refund')).error).toMatch(custom(EscrowProgramError.WrongStatus));
    // Settlement pays only a token account the worker owns.
    expect((await release(chain, escrow, 'settle', chain.stranger.address)).error).toMatch(custom(EscrowProgramError.WrongDestination));

    const rentBefore = chain.svm.getBalance(chain.requester.address)!;
    expect((await release(chain, escrow, 'settle')).error).toBeUndefined();
    expect(await chain.balance(chain.worker.address)).toBe(AMOUNT);
    expect(chain.svm.getAccount(escrow.vault).exists).toBe(false);
    expect(chain.svm.getBalance(chain.requester.address)!).toBeGreaterThan(rentBefore); // the vault's rent went back
    expect(state(chain, escrow).status).toBe(EscrowStatus.Settled);

    expect((await release(chain, escrow, 'settle')).error).toBeDefined();
    expect((await release(chain, escrow, 'refund')).error).toBeDefined();
    expect(await chain.balance(chain.worker.address)).toBe(AMOUNT);
  });

  it('rejected: a stranger refunds the requester', async () => {
    const chain = await setUp();
    const before = await chain.balance(chain.requester.address);
    const escrow = await post(chain);
    expect((await deliver(chain, escrow)).error).toBeUndefined();
    expect((await verdict(chain, escrow, false)).error).toBeUndefined();
    expect((await release(chain, escrow, 'settle')).error).toMatch(custom(EscrowProgramError.WrongStatus));
    expect((await release(chain, escrow, 'refund')).error).toBeUndefined();
    expect(await chain.balance(chain.requester.address)).toBe(before);
    expect(state(chain, escrow).status).toBe(EscrowStatus.Refunded);
  });

  it('expiry: deliver is refused, a stranger refunds; not before', async () => {
    const chain = await setUp();
    const undelivered = await post(chain);
    const delivered = await post(chain);
    expect((await deliver(chain, delivered, chain.validator)).error).toBeUndefined(); // the validator may record it for a keyless worker
    expect((await deliver(chain, undelivered, chain.stranger)).error).toMatch(custom(EscrowProgramError.NotWorker));
    expect((await release(chain, undelivered, 'refund')).error).toMatch(custom(EscrowProgramError.NotExpired));

    setNow(chain.svm, NOW + 3600n);
    expect((await deliver(chain, undelivered)).error).toMatch(custom(EscrowProgramError.Expired));
    // A delivery awaiting its verdict is refundable at expiry as well.
    for (const escrow of [undelivered, delivered]) {
      expect((await release(chain, escrow, 'refund')).error).toBeUndefined();
      expect(state(chain, escrow).status).toBe(EscrowStatus.Refunded);
    }
    expect(await chain.balance(chain.requester.address)).toBe(100n * AMOUNT);
    expect((await verdict(chain, delivered, true)).error).toMatch(custom(EscrowProgramError.WrongStatus));
  });

  it('refuses what is not its own: another program\'s account as state, a signature left off', async () => {
    const chain = await setUp();
    const escrow = await post(chain);
    // A look-alike state account owned by someone else is not an escrow.
    const fake = await generateKeyPairSigner();
    expect(
      (
        await chain.send(chain.stranger, [
          getCreateAccountInstruction({ payer: chain.stranger, newAccount: fake, lamports: chain.svm.minimumBalanceForRentExemption(BigInt(STATE_SIZE)), space: STATE_SIZE, programAddress: TOKEN_PROGRAM_ADDRESS }),
          releaseInstruction('refund', { program: PROGRAM, state: fake.address, vault: escrow.vault, destination: await chain.tokenAccount(chain.requester.address), requester: chain.requester.address }),
        ])
      ).error,
    ).toMatch(custom(EscrowProgramError.NotEscrowState));
    // The worker's key as an unsigned account: the program wants its signature.
    const unsigned = submitDeliverableInstruction({ program: PROGRAM, deliverer: chain.worker, state: escrow.state, escrowId: escrow.escrowId, hash: HASH });
    const stripped = { ...unsigned, accounts: [{ address: chain.worker.address, role: 1 }, unsigned.accounts![1]!] } as Instruction;
    expect((await chain.send(chain.stranger, [stripped])).error).toMatch(custom(EscrowProgramError.NotSigned));
    // Another escrow's id in the data.
    const other = submitDeliverableInstruction({ program: PROGRAM, deliverer: chain.worker, state: escrow.state, escrowId: randomUUID(), hash: HASH });
    expect((await chain.send(chain.worker, [other])).error).toMatch(custom(EscrowProgramError.WrongEscrow));
  });
});
