import { randomUUID } from 'node:crypto';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type KeyPairSigner,
} from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../../test/support/database.js';
import { openDatabase, type Database } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import {
  decodeEscrowState,
  escrowAccounts,
  EscrowProgramError,
  EscrowStatus,
  initializeInstruction,
  LOCAL_ESCROW_PROGRAM_ID,
  releaseInstruction,
  STATE_SIZE,
} from '../solana/escrow-program/index.js';
import { EmbeddedSolana } from './solana.js';

describe('embedded Solana', () => {
  let target: TestDatabaseTarget;
  let database: Database;
  let alice: KeyPairSigner;
  let bob: KeyPairSigner;

  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    database = await openDatabase({ url: target.url, dataDir: null });
    await migrate(database);
    [alice, bob] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  });
  afterAll(async () => {
    await database.close();
    await target.drop();
  });

  /** A transfer alice signs herself, as a wallet would, sent in wire format. */
  async function aliceTransfers(chain: EmbeddedSolana, amount: bigint): Promise<string> {
    const [source] = await findAssociatedTokenPda({ mint: chain.mint, owner: alice.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const [destination] = await findAssociatedTokenPda({ mint: chain.mint, owner: bob.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(alice, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: chain.latestBlockhash() as Blockhash, lastValidBlockHeight: 10n ** 9n }, m),
      (m) =>
        appendTransactionMessageInstructions(
          [getTransferCheckedInstruction({ source, mint: chain.mint, destination, authority: alice, amount, decimals: 6 })],
          m,
        ),
    );
    return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
  }

  it('mints, transfers between wallets, and keeps every balance across a reopen', async () => {
    const chain = await EmbeddedSolana.open(database.db);
    expect(chain.network).toMatch(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/);
    // Two identical faucet mints both land: the operator's transactions carry a nonce.
    expect((await chain.mintTo(alice.address, 5_000_000n)).error).toBeUndefined();
    expect((await chain.mintTo(alice.address, 5_000_000n)).error).toBeUndefined();
    await chain.mintTo(bob.address, 1n); // bob's token account
    await chain.submit([]); // an empty operator transaction is fine too
    const fee = 10n ** 7n;
    const { getTransferSolInstruction } = await import('@solana-program/system');
    await chain.submit([getTransferSolInstruction({ source: chain.operator, destination: alice.address, amount: fee as never })]);

    const sent = await chain.sendTransaction(await aliceTransfers(chain, 3_000_000n));
    expect(sent.error).toBeUndefined();
    expect(await chain.tokenBalance(alice.address)).toBe(7_000_000n);
    expect(await chain.tokenBalance(bob.address)).toBe(3_000_001n);

    const overdraft = await chain.sendTransaction(await aliceTransfers(chain, 100_000_000n));
    expect(overdraft.error).toBeDefined();

    const reopened = await EmbeddedSolana.open(database.db);
    expect(reopened.mint).toBe(chain.mint);
    expect(reopened.network).toBe(chain.network);
    expect(await reopened.tokenBalance(alice.address)).toBe(7_000_000n);
    expect(await reopened.tokenBalance(bob.address)).toBe(3_000_001n);
  });

  it('rebuilds exactly after a long history', async () => {
    const chain = await EmbeddedSolana.open(database.db);
    const before = await chain.tokenBalance(bob.address);
    for (let i = 0; i < 120; i++) await chain.mintTo(bob.address, 1n);
    const reopened = await EmbeddedSolana.open(database.db);
    expect(await reopened.tokenBalance(bob.address)).toBe(before + 120n);
    expect(reopened.mint).toBe(chain.mint);
  });

  it('refuses a malformed transaction without journaling it', async () => {
    const chain = await EmbeddedSolana.open(database.db);
    const { rows: before } = await database.pool.query("SELECT count(*)::int AS n FROM embedded_chain_journal WHERE chain = 'solana'");
    await expect(chain.sendTransaction('bm90IGEgdHJhbnNhY3Rpb24=')).rejects.toThrow();
    const { rows: after } = await database.pool.query("SELECT count(*)::int AS n FROM embedded_chain_journal WHERE chain = 'solana'");
    expect(after[0].n).toBe(before[0].n);
  });

  it('runs the escrow program at the chain\'s time; an advanced clock and each outcome replay after a reopen', async () => {
    const chain = await EmbeddedSolana.open(database.db);
    const wall = BigInt(Math.floor(Date.now() / 1000));
    await chain.mintTo(chain.operator.address, 10_000_000n);
    const escrowId = randomUUID();
    const accounts = await escrowAccounts(LOCAL_ESCROW_PROGRAM_ID, escrowId, chain.mint);
    const [source] = await findAssociatedTokenPda({ mint: chain.mint, owner: chain.operator.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const posted = await chain.submit([
      getCreateAssociatedTokenIdempotentInstruction({ payer: chain.operator, ata: accounts.vault, owner: accounts.state, mint: chain.mint }),
      initializeInstruction({
        program: LOCAL_ESCROW_PROGRAM_ID,
        requester: chain.operator,
        source,
        ...accounts,
        escrowId,
        amount: 10_000_000n,
        expiresAt: chain.unixTime() + 100n,
        stateLamports: chain.minimumBalanceForRentExemption(BigInt(STATE_SIZE)),
        worker: bob.address,
        validator: alice.address,
      }),
    ]);
    expect(posted.error).toBeUndefined();
    const refund = releaseInstruction('refund', { program: LOCAL_ESCROW_PROGRAM_ID, ...accounts, destination: source, requester: chain.operator.address });
    expect((await chain.submit([refund])).error).toMatch(new RegExp(`code: ${EscrowProgramError.NotExpired}\\b`));
    await chain.advanceClock(101);
    expect(chain.unixTime()).toBeGreaterThanOrEqual(wall + 101n);
    expect((await chain.submit([refund])).error).toBeUndefined();

    const reopened = await EmbeddedSolana.open(database.db);
    expect(reopened.unixTime()).toBeGreaterThanOrEqual(wall + 101n);
    const state = reopened.getAccount(accounts.state);
    expect(state.exists && decodeEscrowState(state.data).status).toBe(EscrowStatus.Refunded);
    expect(await reopened.tokenBalance(chain.operator.address)).toBe(await chain.tokenBalance(chain.operator.address));
  });
});
