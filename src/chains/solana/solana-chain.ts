import { createHmac } from 'node:crypto';
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpcFromTransport,
  createTransactionMessage,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type RpcTransport,
  type Signature,
} from '@solana/kit';
import { getAddMemoInstruction } from '@solana-program/memo';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTokenDecoder, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  decodeEscrowState,
  escrowAccounts,
  EscrowStatus,
  initializeInstruction,
  recordVerdictInstruction,
  releaseInstruction,
  STATE_SIZE,
  submitDeliverableInstruction,
  type EscrowState,
} from './escrow-program/index.js';

/** SPL Memo (the same program id on every cluster and on LiteSVM). */
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;
const DECIMALS = 6;

/** A signed transaction, known by its signature before it is sent. */
export interface SignedSolanaTransaction {
  signature: Signature;
  wire: string;
  /** After this block height the transaction can never land. */
  lastValidBlockHeight: bigint;
}

export interface SolanaWriteOptions {
  /** Runs after signing and before sending: record the signature to pay exactly once. */
  beforeSend?: (signed: SignedSolanaTransaction) => Promise<void>;
}

export type SolanaTransactionStatus = { state: 'landed' } | { state: 'failed'; error: string } | { state: 'unknown' };

/** Live mode without SOLANA_ESCROW_PROGRAM_ID: there is no program to hold escrows. */
export class EscrowProgramMissingError extends Error {
  constructor() {
    super('no escrow program is configured (SOLANA_ESCROW_PROGRAM_ID)');
  }
}

/** The chain refused a transaction. */
export class SolanaTransactionError extends Error {
  constructor(
    readonly signature: Signature,
    readonly reason: string,
  ) {
    super(`Solana transaction ${signature} failed: ${reason}`);
    this.name = 'SolanaTransactionError';
  }
}

export type Attestation = Record<string, unknown> & { type: string };

/**
 * The Solana port: stablecoin (SPL, 6 decimals) transfers from the service wallet, escrow
 * custody in the escrow program (vaults only the program can move), and attestations
 * written as signed memos. One code path over @solana/kit's RPC; the embedded chain and a live
 * cluster differ only in the transport.
 */
export class SolanaChain {
  private readonly rpc;

  private constructor(
    transport: RpcTransport,
    /** CAIP-2 id, `solana:<genesis hash prefix>`. */
    readonly network: string,
    readonly mint: Address,
    /** Pays fees, holds the service's stablecoin and signs attestations. */
    readonly service: KeyPairSigner,
    /** Records verdicts on the escrow program; used only by the escrow methods below. */
    private readonly escrowValidator: KeyPairSigner,
    /** The escrow program (null: live mode without SOLANA_ESCROW_PROGRAM_ID, no escrow custody). */
    readonly escrowProgram: Address | null,
    private readonly pollingInterval: number,
  ) {
    this.rpc = createSolanaRpcFromTransport(transport);
  }

  /** `seed`: the service's 32-byte Ed25519 private key; the escrow validator's key is derived from it. */
  static async create(options: { transport: RpcTransport; network: string; mint: Address; seed: Uint8Array; escrowProgram: Address | null; pollingInterval: number }) {
    const service = await createKeyPairSignerFromPrivateKeyBytes(options.seed);
    const validator = await createKeyPairSignerFromPrivateKeyBytes(derive(options.seed, 'escrow-validator'));
    return new SolanaChain(options.transport, options.network, options.mint, service, validator, options.escrowProgram, options.pollingInterval);
  }

  get serviceAddress(): Address {
    return this.service.address;
  }

  /** An explorer link for a signature: mainnet and devnet by name, any other cluster as custom. */
  explorerUrl(signature: string): string {
    const cluster = { 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': '', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': '?cluster=devnet' }[this.network] ?? '?cluster=custom';
    return `https://explorer.solana.com/tx/${signature}${cluster}`;
  }

  blockHeight(): Promise<bigint> {
    return this.rpc.getBlockHeight({ commitment: 'confirmed' }).send();
  }

  async tokenBalance(owner: Address): Promise<bigint> {
    return this.tokenAccountBalance(await this.tokenAccount(owner));
  }

  /** Pays from the service wallet; `reference` goes on chain as a memo (and keeps equal payments apart). */
  async transfer(to: Address, amount: bigint, reference: string, options?: SolanaWriteOptions): Promise<{ signature: Signature }> {
    return this.send(await this.transferInstructions(to, amount, reference), options);
  }

  /** The instructions `transfer` signs, for a caller that inspects them first (a policy wallet). */
  async transferInstructions(to: Address, amount: bigint, reference: string): Promise<Instruction[]> {
    const destination = await this.tokenAccount(to);
    return [
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.service, ata: destination, owner: to, mint: this.mint }),
      getTransferCheckedInstruction({
        source: await this.tokenAccount(this.service.address),
        mint: this.mint,
        destination,
        authority: this.service,
        amount,
        decimals: DECIMALS,
      }),
      this.memo(reference),
    ];
  }

  /** Signs instructions from the service wallet and sends them (after the caller's own checks). */
  sendInstructions(instructions: Instruction[], options?: SolanaWriteOptions): Promise<{ signature: Signature }> {
    return this.send(instructions, options);
  }

  // ---- escrow custody: the escrow program (src/chains/solana/escrow-program) -------------------

  /** The key that records verdicts, and deliveries of workers without keys: the judge's. */
  get escrowValidatorAddress(): Address {
    return this.escrowValidator.address;
  }

  /** The escrow's state account (its `escrow_pda`) and vault (the state's token account). */
  escrowAccounts(escrowId: string): Promise<{ state: Address; bump: number; vault: Address }> {
    if (!this.escrowProgram) throw new EscrowProgramMissingError();
    return escrowAccounts(this.escrowProgram, escrowId, this.mint);
  }

  async escrowBalance(escrowId: string): Promise<bigint> {
    return this.tokenAccountBalance((await this.escrowAccounts(escrowId)).vault);
  }

  /** The escrow as the program recorded it; null before it is initialized. */
  async escrowState(escrowId: string): Promise<EscrowState | null> {
    const { value } = await this.rpc.getAccountInfo((await this.escrowAccounts(escrowId)).state, { encoding: 'base64', commitment: 'confirmed' }).send();
    return value ? decodeEscrowState(Buffer.from(value.data[0], 'base64')) : null;
  }

  /**
   * Moves `amount` from the service wallet into the escrow's vault and records the terms (the
   * program's initialize). The state is created by it, so one escrow is never funded twice.
   */
  async fundEscrow(escrowId: string, amount: bigint, terms: { worker: Address; expiresAt: Date }, options?: SolanaWriteOptions): Promise<{ state: Address; signature: Signature }> {
    const accounts = await this.escrowAccounts(escrowId);
    const stateLamports = await this.rpc.getMinimumBalanceForRentExemption(BigInt(STATE_SIZE)).send();
    const { signature } = await this.send(
      [
        getCreateAssociatedTokenIdempotentInstruction({ payer: this.service, ata: accounts.vault, owner: accounts.state, mint: this.mint }),
        initializeInstruction({
          program: this.escrowProgram!,
          requester: this.service,
          source: await this.tokenAccount(this.service.address),
          ...accounts,
          escrowId,
          amount,
          expiresAt: BigInt(Math.floor(terms.expiresAt.getTime() / 1000)),
          stateLamports,
          worker: terms.worker,
          validator: this.escrowValidator.address,
        }),
      ],
      options,
    );
    return { state: accounts.state, signature };
  }

  /**
   * Puts a delivered escrow's content hash on chain: the program records it (signed by the
   * validator) unless the worker's own submit_deliverable already did, then it goes in a memo.
   */
  async recordDeliverable(escrowId: string, sha256: string, options?: SolanaWriteOptions): Promise<{ signature: Signature }> {
    const state = await this.escrowState(escrowId);
    if (state?.status !== EscrowStatus.Funded) return this.send([this.memo(`escrow:${escrowId}:deliverable:sha256:${sha256}`)], options);
    const { state: address } = await this.escrowAccounts(escrowId);
    const hash = Buffer.from(sha256, 'hex');
    if (hash.length !== 32) throw new TypeError(`not a SHA-256 in hex: ${sha256}`);
    return this.send([submitDeliverableInstruction({ program: this.escrowProgram!, deliverer: this.escrowValidator, state: address, escrowId, hash })], options);
  }

  /**
   * Pays out the vault: to the worker after `approved` (the verdict and the settle in one
   * transaction), back to the service wallet after `rejected` or at expiry. Settle and refund
   * close the vault, so it is paid once. Anyone may release an escrow: one released already says
   * how (`signature` null), which can differ from `outcome` when a stranger refunded an expired
   * escrow before its verdict reached the chain.
   */
  async releaseEscrow(escrowId: string, outcome: 'approved' | 'rejected' | 'expired', options?: SolanaWriteOptions): Promise<{ signature: Signature | null; released: 'settled' | 'refunded' }> {
    const state = await this.escrowState(escrowId);
    if (!state) throw new Error(`escrow ${escrowId} has no state on chain`);
    if (state.status === EscrowStatus.Settled) return { signature: null, released: 'settled' };
    if (state.status === EscrowStatus.Refunded) return { signature: null, released: 'refunded' };
    const settle = outcome === 'approved';
    const { state: address, vault } = await this.escrowAccounts(escrowId);
    const owner = settle ? state.worker : state.requester;
    const destination = await this.tokenAccount(owner);
    const verdict =
      state.status === EscrowStatus.Delivered && outcome !== 'expired'
        ? [recordVerdictInstruction({ program: this.escrowProgram!, validator: this.escrowValidator, state: address, approved: settle })]
        : [];
    const { signature } = await this.send(
      [
        getCreateAssociatedTokenIdempotentInstruction({ payer: this.service, ata: destination, owner, mint: this.mint }),
        ...verdict,
        releaseInstruction(settle ? 'settle' : 'refund', { program: this.escrowProgram!, state: address, vault, destination, requester: state.requester }),
      ],
      options,
    );
    return { signature, released: settle ? 'settled' : 'refunded' };
  }

  /**
   * Broadcasts a transaction someone else signed (a worker's submit-deliverable) and waits until
   * it lands, fails, or `timeoutMs` passes (its blockhash is not ours, so we cannot tell expiry).
   */
  async submitSigned(wire: string, signature: Signature, timeoutMs = 30_000): Promise<void> {
    try {
      await this.rpc.sendTransaction(wire as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    } catch (error) {
      throw new SolanaTransactionError(signature, (error as Error).message);
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await this.status(signature);
      if (status.state === 'landed') return;
      if (status.state === 'failed') throw new SolanaTransactionError(signature, status.error);
      if (Date.now() > deadline) throw new SolanaTransactionError(signature, `not confirmed within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, this.pollingInterval));
    }
  }

  // ---- attestations --------------------------------------------------------------------------

  /**
   * Writes an attestation as a memo signed by the service; its signature identifies it. The same
   * attestation written twice under one blockhash is one transaction, and lands once.
   */
  writeAttestation(attestation: Attestation, options?: SolanaWriteOptions): Promise<{ signature: Signature }> {
    return this.send([this.memo(JSON.stringify(attestation))], options);
  }

  /** The attestation a transaction wrote, or null when there is none (or the service did not sign it). */
  async readAttestation(signature: Signature): Promise<{ attestation: Attestation; signer: Address } | null> {
    const transaction = await this.rpc
      .getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' })
      .send();
    if (!transaction || transaction.meta?.err) return null;
    const { accountKeys, instructions } = transaction.transaction.message;
    const signer = accountKeys[0];
    if (signer !== this.service.address) return null;
    for (const instruction of instructions) {
      if (accountKeys[instruction.programIdIndex] !== MEMO_PROGRAM) continue;
      try {
        const parsed = JSON.parse(Buffer.from(getBase58Encoder().encode(instruction.data)).toString('utf8')) as unknown;
        if (typeof parsed === 'object' && parsed !== null && typeof (parsed as Attestation).type === 'string') {
          return { attestation: parsed as Attestation, signer };
        }
      } catch {
        // a memo that is not an attestation
      }
    }
    return null;
  }

  // ---- transactions --------------------------------------------------------------------------

  /** Whether a transaction landed, failed, or is not (yet) known to the cluster. */
  async status(signature: Signature): Promise<SolanaTransactionStatus> {
    const { value } = await this.rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send();
    const status = value[0];
    if (!status) return { state: 'unknown' };
    if (status.err) return { state: 'failed', error: JSON.stringify(status.err, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) };
    return status.confirmationStatus === 'processed' ? { state: 'unknown' } : { state: 'landed' };
  }

  /** Sends a signed transaction again (recovery after a crash); a signature lands at most once. */
  async resend(signed: SignedSolanaTransaction): Promise<void> {
    await this.rpc.sendTransaction(signed.wire as never, { encoding: 'base64', skipPreflight: true }).send();
  }

  /** Signs with every signer the instructions name, sends, and waits until it lands or fails. */
  private async send(instructions: Instruction[], options: SolanaWriteOptions = {}): Promise<{ signature: Signature }> {
    const { value: lifetime } = await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(this.service, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const transaction = await signTransactionMessageWithSigners(message);
    const signed: SignedSolanaTransaction = {
      signature: getSignatureFromTransaction(transaction),
      wire: getBase64EncodedWireTransaction(transaction),
      lastValidBlockHeight: lifetime.lastValidBlockHeight,
    };
    await options.beforeSend?.(signed);
    try {
      await this.rpc.sendTransaction(signed.wire as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    } catch (error) {
      throw new SolanaTransactionError(signed.signature, (error as Error).message);
    }
    return this.confirm(signed);
  }

  private async confirm(signed: SignedSolanaTransaction): Promise<{ signature: Signature }> {
    for (;;) {
      const status = await this.status(signed.signature);
      if (status.state === 'landed') return { signature: signed.signature };
      if (status.state === 'failed') throw new SolanaTransactionError(signed.signature, status.error);
      if ((await this.blockHeight()) > signed.lastValidBlockHeight) throw new SolanaTransactionError(signed.signature, 'blockhash expired before it landed');
      await new Promise((resolve) => setTimeout(resolve, this.pollingInterval));
    }
  }

  private memo(text: string) {
    return getAddMemoInstruction({ memo: text, signers: [this.service] }, { programAddress: MEMO_PROGRAM });
  }

  private async tokenAccount(owner: Address): Promise<Address> {
    const [ata] = await findAssociatedTokenPda({ mint: this.mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return ata;
  }

  private async tokenAccountBalance(account: Address): Promise<bigint> {
    const { value } = await this.rpc.getAccountInfo(account, { encoding: 'base64', commitment: 'confirmed' }).send();
    if (!value) return 0n;
    return getTokenDecoder().decode(Buffer.from(value.data[0], 'base64')).amount;
  }

}

/** A 32-byte key derived from the service seed for one purpose. */
function derive(seed: Uint8Array, purpose: string): Uint8Array {
  return createHmac('sha256', seed).update(purpose).digest();
}
