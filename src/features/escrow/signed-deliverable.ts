import { createHash } from 'node:crypto';
import { getBase58Decoder, getBase58Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder, type Address } from '@solana/kit';
import { DISCRIMINATORS, uuidString } from '../../chains/solana/escrow-program/index.js';
import { ed25519Verify } from '../agents/index.js';

/**
 * deliver-signed (spec 4.4): the worker's own submit_deliverable for the escrow program
 * (src/chains/solana/escrow-program): data = sha256("global:submit_deliverable")[0..8] || escrow id
 * (16 UUID bytes) || uri_hash (32); accounts = [worker (signer), escrow state (writable)].
 * docs/api.md shows the format.
 */
const DATA_LENGTH = 8 + 16 + 32;
// Solana's packet limit: a larger "transaction" can never land, so it is refused before any work.
const MAX_TRANSACTION_BYTES = 1232;

export function uriHash(uri: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(uri, 'utf8').digest());
}

export type SignedDeliverableFailure = 'TRANSACTION_INVALID' | 'SIGNATURE_MISSING' | 'SIGNATURE_INVALID' | 'INSTRUCTION_MISSING' | 'INSTRUCTION_INVALID';

export type InspectedDeliverable =
  | {
      ok: true;
      feePayer: Address;
      /** The instruction's first account, which signed the transaction. */
      worker: Address;
      escrowId: string;
      escrowAccount: Address;
      uriHash: Uint8Array;
      /** The fee payer's signature, base58: the transaction's id once it lands. */
      signature: string;
      /** The transaction as sent (base64), to broadcast unchanged. */
      wire: string;
    }
  | { ok: false; code: SignedDeliverableFailure; message: string; field: 'signed_transaction' };

const refuse = (code: SignedDeliverableFailure, message: string): InspectedDeliverable => ({ ok: false, code, message, field: 'signed_transaction' });

/**
 * Decodes and checks a base64 transaction without touching a chain: its shape (legacy or v0, no
 * lookup tables, within the packet limit), every required signature (Ed25519 over the message),
 * and exactly one submit-deliverable instruction for `programAddress` whose worker signed. Who the
 * worker and fee payer are and what the instruction names (escrow, account, hash) is the caller's to compare.
 */
export function inspectSignedDeliverable(base64: string, options: { programAddress: Address }): InspectedDeliverable {
  const wire = base64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(wire) || wire.length % 4 !== 0) return refuse('TRANSACTION_INVALID', 'signed_transaction is not base64.');
  const bytes = Buffer.from(wire, 'base64');
  if (bytes.length > MAX_TRANSACTION_BYTES) return refuse('TRANSACTION_INVALID', `The transaction is over ${MAX_TRANSACTION_BYTES} bytes.`);

  let transaction;
  let message;
  try {
    transaction = getTransactionDecoder().decode(bytes);
    message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  } catch {
    return refuse('TRANSACTION_INVALID', 'signed_transaction does not decode as a Solana transaction.');
  }
  if (message.version !== 'legacy' && message.version !== 0) return refuse('TRANSACTION_INVALID', 'Only legacy and v0 transactions are accepted.');
  if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0) {
    return refuse('TRANSACTION_INVALID', 'Address lookup tables are not accepted: every account must be named in the transaction.');
  }

  const accounts = message.staticAccounts;
  const signers = message.header.numSignerAccounts;
  if (accounts.length === 0 || signers === 0) return refuse('TRANSACTION_INVALID', 'The transaction has no fee payer.');
  for (const signer of accounts.slice(0, signers)) {
    const signature = transaction.signatures[signer];
    if (!signature) return refuse('SIGNATURE_MISSING', `${signer} has not signed the transaction.`);
    if (!ed25519Verify(new Uint8Array(getBase58Encoder().encode(signer)), new Uint8Array(transaction.messageBytes), new Uint8Array(signature))) {
      return refuse('SIGNATURE_INVALID', `The signature of ${signer} does not verify.`);
    }
  }

  const ours = message.instructions.filter((instruction) => accounts[instruction.programAddressIndex] === options.programAddress);
  if (ours.length === 0) return refuse('INSTRUCTION_MISSING', `The transaction has no instruction for the escrow program ${options.programAddress}.`);
  if (ours.length > 1) return refuse('INSTRUCTION_INVALID', 'The transaction has more than one escrow-program instruction.');
  const [instruction] = ours as [(typeof ours)[number]];
  const data = instruction.data ?? new Uint8Array();
  if (data.length !== DATA_LENGTH || !Buffer.from(data.subarray(0, 8)).equals(DISCRIMINATORS.submit_deliverable)) {
    return refuse('INSTRUCTION_INVALID', 'The escrow-program instruction is not submit_deliverable (discriminator, escrow id, uri_hash: 56 bytes).');
  }
  const [workerIndex, escrowIndex] = instruction.accountIndices ?? [];
  if (workerIndex === undefined || workerIndex >= signers || escrowIndex === undefined || accounts[escrowIndex] === undefined) {
    return refuse('INSTRUCTION_INVALID', "submit_deliverable's accounts must be [worker (a signer), escrow account].");
  }
  // The program writes the delivery into the escrow's state: a read-only one could never land.
  const { numReadonlyNonSignerAccounts: readonlyUnsigned = 0, numReadonlySignerAccounts: readonlySigned = 0 } = message.header;
  const escrowWritable = escrowIndex < signers ? escrowIndex < signers - readonlySigned : escrowIndex < accounts.length - readonlyUnsigned;
  if (!escrowWritable) return refuse('INSTRUCTION_INVALID', "submit_deliverable's escrow account must be writable.");
  const feePayer = accounts[0]!;
  return {
    ok: true,
    feePayer,
    worker: accounts[workerIndex]!,
    escrowId: uuidString(data.subarray(8, 24)),
    escrowAccount: accounts[escrowIndex]!,
    uriHash: new Uint8Array(data.subarray(24, 56)),
    signature: getBase58Decoder().decode(transaction.signatures[feePayer]!),
    wire,
  };
}
