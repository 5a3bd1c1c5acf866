import { randomBytes } from 'node:crypto';
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { LiteSVM, FailedTransactionMetadata } from 'litesvm';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
  type Transaction,
} from '@solana/kit';
import { getAddMemoInstruction } from '@solana-program/memo';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  decodeToken,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { Db } from '../../db/client.js';
import { embeddedChainJournal, embeddedChainSnapshots, embeddedChains } from '../../db/schema.js';
import { databaseJournal } from './journal.js';

const CHAIN = 'solana';
// SPL Memo v3, which LiteSVM loads (@solana-program/memo defaults to a newer address it does not).
const SPL_MEMO_V3 = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
/** A snapshot every this many journal entries bounds how much a start-up replays. */
const SNAPSHOT_EVERY = 100;
// LiteSVM's airdrop source is finite: a larger grant fails silently (no fee payer afterwards).
const OPERATOR_LAMPORTS = 10_000n * 1_000_000_000n;
// Names of LiteSVM's fieldless transaction errors (a const enum, erased at run time), by value.
const FIELDLESS_ERRORS = (
  'AccountInUse AccountLoadedTwice AccountNotFound ProgramAccountNotFound InsufficientFundsForFee InvalidAccountForFee ' +
  'AlreadyProcessed BlockhashNotFound CallChainTooDeep MissingSignatureForFee InvalidAccountIndex SignatureFailure ' +
  'InvalidProgramForExecution SanitizeFailure ClusterMaintenance AccountBorrowOutstanding WouldExceedMaxBlockCostLimit ' +
  'UnsupportedVersion InvalidWritableAccount WouldExceedMaxAccountCostLimit WouldExceedAccountDataBlockLimit ' +
  'TooManyAccountLocks AddressLookupTableNotFound InvalidAddressLookupTableOwner InvalidAddressLookupTableData ' +
  'InvalidAddressLookupTableIndex InvalidRentPayingAccount WouldExceedMaxVoteCostLimit WouldExceedAccountDataTotalLimit ' +
  'MaxLoadedAccountsDataSizeExceeded ResanitizationNeeded InvalidLoadedAccountsDataSizeLimit UnbalancedTransaction ' +
  'ProgramCacheHitMaxLimit CommitCancelled'
).split(' ');

/** A failed transaction's error as text: `AlreadyProcessed`, `InstructionError { index: 0, ... }`. */
export function describeFailure(failure: FailedTransactionMetadata): string {
  const error = failure.err();
  return typeof error === 'number' ? (FIELDLESS_ERRORS[error] ?? `TransactionError(${error})`) : error.toString();
}

export interface SolanaSendResult {
  signature: Signature;
  /** Present when the transaction failed; the chain's error, rendered. */
  error?: string;
}

/**
 * Local mode's Solana: LiteSVM with a USDC-like SPL mint (6 decimals). Its state is the latest
 * snapshot (LiteSVM saves whole state) plus the journal of transactions sent since; the blockhash
 * only changes when a snapshot is restored, never by time, so clients' transactions stay valid.
 */
export class EmbeddedSolana {
  private queue: Promise<unknown> = Promise.resolve();
  private sinceSnapshot = 0;

  private constructor(
    private readonly db: Db,
    private readonly svm: LiteSVM,
    readonly operator: KeyPairSigner,
    readonly mint: Address,
    /** CAIP-2 id: `solana:` and 32 characters of the chain's first blockhash (as real clusters do). */
    readonly network: string,
  ) {}

  static async open(db: Db): Promise<EmbeddedSolana> {
    await db
      .insert(embeddedChains)
      .values({ chain: CHAIN, operatorKey: randomBytes(32).toString('hex'), genesisTime: BigInt(Math.floor(Date.now() / 1000)) })
      .onConflictDoNothing();
    const [record] = await db.select().from(embeddedChains).where(eq(embeddedChains.chain, CHAIN));
    if (!record) throw new Error('embedded solana has no record');
    const operator = await createKeyPairSignerFromPrivateKeyBytes(Buffer.from(record.operatorKey, 'hex'));
    const [snapshot] = await db.select().from(embeddedChainSnapshots).where(eq(embeddedChainSnapshots.chain, CHAIN));

    if (!snapshot || !record.deployment) {
      const svm = new LiteSVM();
      const network = `solana:${svm.latestBlockhash().slice(0, 32)}`;
      const mint = await createMint(svm, operator);
      const chain = new EmbeddedSolana(db, svm, operator, mint, network);
      await db.update(embeddedChains).set({ deployment: { mint, network } }).where(eq(embeddedChains.chain, CHAIN));
      await chain.saveSnapshot();
      return chain;
    }

    const svm = LiteSVM.fromBytes(new Uint8Array(snapshot.state));
    const deployment = record.deployment as { mint: string; network: string };
    const chain = new EmbeddedSolana(db, svm, operator, address(deployment.mint), deployment.network);
    const entries = await db
      .select()
      .from(embeddedChainJournal)
      .where(and(eq(embeddedChainJournal.chain, CHAIN), gt(embeddedChainJournal.id, snapshot.lastJournalId)))
      .orderBy(asc(embeddedChainJournal.id));
    for (const entry of entries) {
      // The same calls in the same order reach the same outcomes, failures included.
      const [first, second] = entry.params as string[];
      if (entry.method === 'sendTransaction') svm.sendTransaction(decodeWire(String(first)));
      if (entry.method === 'airdrop') svm.airdrop(address(String(first)), lamports(BigInt(String(second))));
    }
    chain.sinceSnapshot = entries.length;
    return chain;
  }

  latestBlockhash(): string {
    return this.svm.latestBlockhash();
  }

  slot(): bigint {
    return this.svm.getClock().slot;
  }

  getAccount(account: Address) {
    return this.svm.getAccount(account);
  }

  getBalance(account: Address): bigint {
    return this.svm.getBalance(account) ?? 0n;
  }

  minimumBalanceForRentExemption(bytes: bigint): bigint {
    return this.svm.minimumBalanceForRentExemption(bytes);
  }

  /** Runs a transaction without keeping its effects. */
  simulate(wireBase64: string): { error?: string; logs: string[]; unitsConsumed: bigint } {
    const outcome = this.svm.simulateTransaction(decodeWire(wireBase64));
    const meta = outcome.meta();
    const result = { logs: meta.logs(), unitsConsumed: meta.computeUnitsConsumed() };
    return outcome instanceof FailedTransactionMetadata ? { ...result, error: describeFailure(outcome) } : result;
  }

  /** The owner's balance of the chain's stablecoin, in base units (0 without a token account). */
  async tokenBalance(owner: Address): Promise<bigint> {
    const [ata] = await findAssociatedTokenPda({ mint: this.mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const account = this.svm.getAccount(ata);
    return account.exists ? decodeToken(account).data.amount : 0n;
  }

  /** Sends a signed transaction (base64 wire format), journaled first. */
  async sendTransaction(wireBase64: string): Promise<SolanaSendResult> {
    const transaction = decodeWire(wireBase64); // a malformed one throws before anything is journaled
    return this.serialised(() => this.commit(transaction, wireBase64));
  }

  /** Grants lamports (for fees) from LiteSVM's airdrop source; journaled like a transaction. */
  airdrop(to: Address, amount: bigint): Promise<SolanaSendResult> {
    return this.serialised(async () => {
      await databaseJournal(this.db, CHAIN).append('airdrop', [to, amount.toString()]);
      const outcome = this.svm.airdrop(to, lamports(amount));
      await this.afterChange();
      if (!outcome) throw new Error('the airdrop source is exhausted');
      const failed = outcome instanceof FailedTransactionMetadata;
      const signature = base58((failed ? outcome.meta() : outcome).signature()) as Signature;
      return failed ? { signature, error: describeFailure(outcome) } : { signature };
    });
  }

  /** Whether the chain processed this signature, and how it ended (null: never seen). */
  transactionStatus(signature: Signature): { error?: string } | null {
    const outcome = this.svm.getTransaction(signature);
    if (!outcome) return null;
    return outcome instanceof FailedTransactionMetadata ? { error: describeFailure(outcome) } : {};
  }

  /** Mints the stablecoin to the owner's token account (created when missing): the faucet. */
  async mintTo(owner: Address, amount: bigint): Promise<SolanaSendResult> {
    const [ata] = await findAssociatedTokenPda({ mint: this.mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return this.submit([
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.operator, ata, owner, mint: this.mint }),
      getMintToInstruction({ mint: this.mint, token: ata, mintAuthority: this.operator, amount }),
    ]);
  }

  /** Builds, signs and sends a transaction paid by the operator. */
  submit(instructions: Instruction[]): Promise<SolanaSendResult> {
    return this.serialised(async () => {
      // The blockhash stays put, so a random memo keeps two identical operator transactions apart.
      const nonce = getAddMemoInstruction({ memo: randomBytes(8).toString('hex') }, { programAddress: SPL_MEMO_V3 });
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(this.operator, m),
        (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
        (m) => appendTransactionMessageInstructions([...instructions, nonce], m),
      );
      const transaction = await signTransactionMessageWithSigners(message);
      return this.commit(transaction, getBase64EncodedWireTransaction(transaction));
    });
  }

  private async commit(transaction: Transaction, wireBase64: string): Promise<SolanaSendResult> {
    await databaseJournal(this.db, CHAIN).append('sendTransaction', [wireBase64]);
    const outcome = this.svm.sendTransaction(transaction);
    await this.afterChange();
    const signature = getSignatureFromTransaction(transaction);
    return outcome instanceof FailedTransactionMetadata ? { signature, error: describeFailure(outcome) } : { signature };
  }

  private async afterChange(): Promise<void> {
    if (++this.sinceSnapshot >= SNAPSHOT_EVERY) await this.saveSnapshot();
  }

  /** Saves the whole state with the last journal entry it includes. Runs inside the queue. */
  private async saveSnapshot(): Promise<void> {
    const [last] = await this.db
      .select({ id: sql<number>`coalesce(max(${embeddedChainJournal.id}), 0)`.mapWith(Number) })
      .from(embeddedChainJournal)
      .where(eq(embeddedChainJournal.chain, CHAIN));
    const state = Buffer.from(this.svm.toBytes());
    const lastJournalId = last?.id ?? 0;
    await this.db
      .insert(embeddedChainSnapshots)
      .values({ chain: CHAIN, lastJournalId, state })
      .onConflictDoUpdate({ target: embeddedChainSnapshots.chain, set: { lastJournalId, state, createdAt: sql`now()` } });
    this.sinceSnapshot = 0;
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }
}

function decodeWire(wireBase64: string): Transaction {
  return getTransactionDecoder().decode(Buffer.from(wireBase64, 'base64'));
}

async function createMint(svm: LiteSVM, operator: KeyPairSigner): Promise<Address> {
  svm.airdrop(operator.address, lamports(OPERATOR_LAMPORTS));
  const mintKey = await createKeyPairSignerFromPrivateKeyBytes(randomBytes(32));
  const space = BigInt(getMintSize());
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(operator, m),
    (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getCreateAccountInstruction({
            payer: operator,
            newAccount: mintKey,
            lamports: svm.minimumBalanceForRentExemption(space),
            space,
            programAddress: TOKEN_PROGRAM_ADDRESS,
          }),
          getInitializeMint2Instruction({ mint: mintKey.address, decimals: 6, mintAuthority: operator.address }),
        ],
        m,
      ),
  );
  const outcome = svm.sendTransaction(await signTransactionMessageWithSigners(message));
  if (outcome instanceof FailedTransactionMetadata) throw new Error(`creating the embedded mint failed: ${describeFailure(outcome)}`);
  return mintKey.address;
}

/** Base58 text of raw bytes (signatures, keys), for RPC answers. */
export const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);
