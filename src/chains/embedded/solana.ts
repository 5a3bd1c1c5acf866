import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
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
import { embeddedChains } from '../tables.js';
import type { ChainJournal } from './evm.js';
import { escrowProgram, LOCAL_ESCROW_PROGRAM_ID } from '../solana/escrow-program/index.js';
import { databaseJournal } from './journal.js';
import { serialQueue } from '../serial.js';

const CHAIN = 'solana';
/**
 * The embedded chain poses as Solana devnet: the x402 SVM client accepts only mainnet, devnet and
 * testnet ids, and devnet is the one where a local signature could never move anything of value
 * (our mint and blockhash do not exist there either).
 */
export const EMBEDDED_SOLANA_NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
// SPL Memo v3, which LiteSVM loads (@solana-program/memo defaults to a newer address it does not).
const SPL_MEMO_V3 = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
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
 * What the service uses of local mode's Solana, whether it runs in this process (EmbeddedSolana) or
 * in a shared devnet (`DevnetSolana`, src/devnet/remote.ts).
 */
export interface LocalSolana {
  /** CAIP-2 id of the chain. */
  readonly network: string;
  readonly mint: Address;
  /** The service wallet of local mode (fee payer, mint authority). */
  readonly operator: KeyPairSigner;
  readonly operatorSeed: Uint8Array;
  lamports(account: Address): Promise<bigint>;
  hasAccount(account: Address): Promise<boolean>;
  /** Runs a transaction without keeping its effects; its error, when it fails. */
  trySimulate(wireBase64: string): Promise<{ error?: string }>;
  sendTransaction(wireBase64: string): Promise<SolanaSendResult>;
  /** Whether the chain processed this signature, and how it ended (null: never seen). */
  statusOf(signature: Signature): Promise<{ error?: string } | null>;
  /** Builds, signs and sends a transaction paid by the operator. */
  submit(instructions: Instruction[]): Promise<SolanaSendResult>;
  /** Mints the stablecoin to the owner's token account (created when missing): the faucet. */
  mintTo(owner: Address, amount: bigint): Promise<SolanaSendResult>;
  /** Grants lamports for fees. */
  airdrop(to: Address, amount: bigint): Promise<SolanaSendResult>;
  /** Moves the chain's clock forward (the dev clock); it never goes back. */
  advanceClock(seconds: number): Promise<void>;
}

/** The instructions that mint the stablecoin to an owner, creating its token account when missing. */
export async function mintToInstructions(chain: Pick<LocalSolana, 'mint' | 'operator'>, owner: Address, amount: bigint): Promise<Instruction[]> {
  const [ata] = await findAssociatedTokenPda({ mint: chain.mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return [
    getCreateAssociatedTokenIdempotentInstruction({ payer: chain.operator, ata, owner, mint: chain.mint }),
    getMintToInstruction({ mint: chain.mint, token: ata, mintAuthority: chain.operator, amount }),
  ];
}

/** A memo that keeps two identical operator transactions apart (the embedded blockhash stays put). */
export const distinctMemo = () => getAddMemoInstruction({ memo: randomBytes(8).toString('hex') }, { programAddress: SPL_MEMO_V3 });

/**
 * Local mode's Solana: LiteSVM with a USDC-like SPL mint (6 decimals). Its state is the replay of
 * its journal (transactions and airdrops) from a fresh LiteSVM. The blockhash never moves with
 * time (LiteSVM accepts only the latest), so clients' transactions stay valid.
 */
export class EmbeddedSolana implements LocalSolana {
  private readonly serialised = serialQueue();
  private readonly journal: ChainJournal;
  /** Every transaction the chain processed, by signature (LiteSVM keeps only their outcomes). */
  private readonly processed = new Map<string, string>();
  /** Seconds added to the wall clock (`advanceClock`), and the last unix time a transaction ran at. */
  private clockOffset = 0n;
  private lastUnixTime: bigint;

  private constructor(
    db: Db,
    private readonly svm: LiteSVM,
    /** The operator's 32-byte private key: the service wallet of local mode. */
    readonly operatorSeed: Uint8Array,
    readonly operator: KeyPairSigner,
    readonly mint: Address,
    /** CAIP-2 id the embedded chain answers to (EMBEDDED_SOLANA_NETWORK). */
    readonly network: string,
    genesisTime: bigint,
  ) {
    this.journal = databaseJournal(db, CHAIN);
    this.lastUnixTime = genesisTime;
  }

  static async open(db: Db): Promise<EmbeddedSolana> {
    await db
      .insert(embeddedChains)
      .values({ chain: CHAIN, operatorKey: randomBytes(32).toString('hex'), genesisTime: BigInt(Math.floor(Date.now() / 1000)) })
      .onConflictDoNothing();
    const [record] = await db.select().from(embeddedChains).where(eq(embeddedChains.chain, CHAIN));
    if (!record) throw new Error('embedded solana has no record');
    const seed = Buffer.from(record.operatorKey, 'hex');
    const operator = await createKeyPairSignerFromPrivateKeyBytes(seed);

    // A fresh LiteSVM always starts from the same genesis and blockhash, so replaying the journal
    // (set-up included) rebuilds the same chain; failed transactions fail again the same way.
    const svm = new LiteSVM();
    svm.addProgram(LOCAL_ESCROW_PROGRAM_ID, escrowProgram());
    const network = EMBEDDED_SOLANA_NETWORK;
    const deployment = record.deployment as { mint: string } | null;
    // Until the mint exists its address is unknown; nothing reads it before then.
    const mint = address(deployment?.mint ?? '11111111111111111111111111111111');
    const chain = new EmbeddedSolana(db, svm, seed, operator, mint, network, record.genesisTime);
    for (const entry of await chain.journal.entries()) chain.replay(entry.method, entry.params as string[]);
    if (deployment) return chain;

    // First start: fund the operator and create the mint, both journaled like everything else.
    await chain.airdrop(operator.address, OPERATOR_LAMPORTS);
    const mintKey = await createKeyPairSignerFromPrivateKeyBytes(randomBytes(32));
    const space = BigInt(getMintSize());
    const created = await chain.submit([
      getCreateAccountInstruction({
        payer: operator,
        newAccount: mintKey,
        lamports: svm.minimumBalanceForRentExemption(space),
        space,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mintKey.address, decimals: 6, mintAuthority: operator.address }),
    ]);
    if (created.error) throw new Error(`creating the embedded mint failed: ${created.error}`);
    await db.update(embeddedChains).set({ deployment: { mint: mintKey.address, network } }).where(eq(embeddedChains.chain, CHAIN));
    return new EmbeddedSolana(db, svm, seed, operator, mintKey.address, network, record.genesisTime);
  }

  /** One journal entry again, as it ran: a transaction at its recorded time (older entries: genesis). */
  private replay(method: string, [first, second]: string[]): void {
    if (method === 'sendTransaction') this.process(decodeWire(String(first)), String(first), second === undefined ? this.lastUnixTime : BigInt(second));
    if (method === 'airdrop') this.svm.airdrop(address(String(first)), lamports(BigInt(String(second))));
    if (method === 'advanceClock') this.clockOffset += BigInt(String(first));
  }

  /**
   * Moves the chain's clock forward (tests and the dev clock: an escrow's expiry on chain). The
   * chain's time is the wall clock plus every advance, and never goes back.
   */
  advanceClock(seconds: number): Promise<void> {
    return this.serialised(async () => {
      await this.journal.append('advanceClock', [String(seconds)]);
      this.clockOffset += BigInt(seconds);
    });
  }

  /** The chain's unix time now: the next transaction runs at it. */
  unixTime(): bigint {
    const wall = BigInt(Math.floor(Date.now() / 1000)) + this.clockOffset;
    return wall > this.lastUnixTime ? wall : this.lastUnixTime;
  }

  private setUnixTime(unixTime: bigint): void {
    const clock = this.svm.getClock();
    clock.unixTimestamp = unixTime;
    this.svm.setClock(clock);
    this.lastUnixTime = unixTime;
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
    this.setUnixTime(this.unixTime());
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
      await this.journal.append('airdrop', [to, amount.toString()]);
      const outcome = this.svm.airdrop(to, lamports(amount));
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

  /** A processed transaction: its wire bytes (base64), logs and outcome (null: never seen). */
  transaction(signature: Signature): { wireBase64: string; logs: string[]; error?: string } | null {
    const outcome = this.svm.getTransaction(signature);
    const wireBase64 = this.processed.get(signature);
    if (!outcome || wireBase64 === undefined) return null;
    const failed = outcome instanceof FailedTransactionMetadata;
    const logs = (failed ? outcome.meta() : outcome).logs();
    return failed ? { wireBase64, logs, error: describeFailure(outcome) } : { wireBase64, logs };
  }

  async mintTo(owner: Address, amount: bigint): Promise<SolanaSendResult> {
    return this.submit(await mintToInstructions(this, owner, amount));
  }

  async lamports(account: Address): Promise<bigint> {
    return this.getBalance(account);
  }

  async hasAccount(account: Address): Promise<boolean> {
    return this.getAccount(account).exists;
  }

  async trySimulate(wireBase64: string): Promise<{ error?: string }> {
    const { error } = this.simulate(wireBase64);
    return error === undefined ? {} : { error };
  }

  async statusOf(signature: Signature): Promise<{ error?: string } | null> {
    return this.transactionStatus(signature);
  }

  submit(instructions: Instruction[]): Promise<SolanaSendResult> {
    return this.serialised(async () => {
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(this.operator, m),
        (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
        (m) => appendTransactionMessageInstructions([...instructions, distinctMemo()], m),
      );
      const transaction = await signTransactionMessageWithSigners(message);
      return this.commit(transaction, getBase64EncodedWireTransaction(transaction));
    });
  }

  private async commit(transaction: Transaction, wireBase64: string): Promise<SolanaSendResult> {
    const unixTime = this.unixTime();
    await this.journal.append('sendTransaction', [wireBase64, unixTime.toString()]);
    return this.process(transaction, wireBase64, unixTime);
  }

  private process(transaction: Transaction, wireBase64: string, unixTime: bigint): SolanaSendResult {
    this.setUnixTime(unixTime);
    const outcome = this.svm.sendTransaction(transaction);
    const signature = getSignatureFromTransaction(transaction);
    if (!this.processed.has(signature)) this.processed.set(signature, wireBase64);
    return outcome instanceof FailedTransactionMetadata ? { signature, error: describeFailure(outcome) } : { signature };
  }
}

function decodeWire(wireBase64: string): Transaction {
  return getTransactionDecoder().decode(Buffer.from(wireBase64, 'base64'));
}

/** Base58 text of raw bytes (a signature). */
const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);
