import { Signature } from 'ox';
import { SignatureEnvelope, TxEnvelopeTempo } from 'ox/tempo';
import { isAddressEqual, type Address, type Hex } from 'viem';
import { recoverSigner } from '../evm/secp256k1.js';
import { serialQueue } from '../serial.js';
import { SEND_AS, type EmbeddedEvm } from './evm.js';

/**
 * Signed Tempo transactions (type 0x76) on the embedded Tempo chain, which is a plain EVM: it
 * cannot run Tempo's transaction type, so a verified transaction's calls are applied as its
 * signer (impersonation), one application at a time.
 */

export const TEMPO_TX_TYPE = '0x76';

/** The transaction cannot be applied; the reason says why, for the payer. */
export class InvalidTempoTransactionError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'InvalidTempoTransactionError';
  }
}

const invalid = (reason: string): never => {
  throw new InvalidTempoTransactionError(reason);
};

export function decodeTempoTransaction(serialized: Hex): TxEnvelopeTempo.TxEnvelopeTempo {
  if (!serialized.toLowerCase().startsWith(TEMPO_TX_TYPE)) invalid('only signed Tempo transactions (type 0x76) are accepted');
  try {
    return TxEnvelopeTempo.deserialize(serialized as TxEnvelopeTempo.Serialized);
  } catch {
    return invalid('the transaction cannot be decoded as a Tempo transaction');
  }
}

/**
 * The signer, from the signature itself: the envelope's `from` may come from the fee-payer slot
 * unchecked, and applying a transaction as its sender must rest on a verified signature. Access-key
 * (keychain) and multi-signer signatures need Tempo's key registry, which the embedded chain lacks;
 * key authorizations and authorization lists cannot be applied on it either.
 */
export function recoverTempoSender(envelope: TxEnvelopeTempo.TxEnvelopeTempo): Address {
  const signature = envelope.signature;
  if (!signature) return invalid('the transaction is not signed');
  if (signature.type !== 'secp256k1' && signature.type !== 'p256' && signature.type !== 'webAuthn') {
    invalid(`${signature.type} signatures cannot be verified on the embedded chain`);
  }
  let signer: Address;
  try {
    const payload = TxEnvelopeTempo.getSignPayload(envelope);
    if (signature.type === 'secp256k1') {
      // The common case, natively: recovering the key is checking the signature.
      signer = recoverSigner(payload, Signature.toHex(signature.signature)) ?? invalid('the transaction signature is invalid');
    } else {
      signer = SignatureEnvelope.extractAddress({ payload, signature });
      if (!SignatureEnvelope.verify(signature, { address: signer, payload })) throw new Error('invalid');
    }
  } catch {
    return invalid('the transaction signature is invalid');
  }
  if (envelope.from && !isAddressEqual(envelope.from as Address, signer)) invalid('the transaction names a sender other than its signer');
  if (envelope.keyAuthorization) invalid('transactions that authorize access keys cannot be applied on the embedded chain');
  if (envelope.authorizationList?.length) invalid('transactions with authorization lists cannot be applied on the embedded chain');
  return signer;
}

/** Not expired and already valid, by the wall clock (the embedded chain's clock may run ahead). */
export function assertTempoTransactionTimely(envelope: { validBefore?: number | bigint | undefined; validAfter?: number | bigint | undefined }) {
  const now = Math.floor(Date.now() / 1000);
  const before = envelope.validBefore === undefined ? undefined : Number(envelope.validBefore);
  const after = envelope.validAfter === undefined ? undefined : Number(envelope.validAfter);
  if (before !== undefined && before <= now) invalid(`the signed transaction expired at ${new Date(before * 1000).toISOString()} (validBefore)`);
  if (after !== undefined && after > now) invalid(`the signed transaction is not valid before ${new Date(after * 1000).toISOString()} (validAfter)`);
}

// A settlement's idempotency check must see the previous settlement's transfer: every application
// of a signed Tempo transaction on one chain in this process is queued (across instances, the
// payment gate's claim lets one instance settle a proof).
const queues = new WeakMap<EmbeddedEvm, ReturnType<typeof serialQueue>>();
export function settlementQueue(evm: EmbeddedEvm): ReturnType<typeof serialQueue> {
  let queue = queues.get(evm);
  if (!queue) queues.set(evm, (queue = serialQueue()));
  return queue;
}

/** Sends a transaction as `transaction.from` on the embedded chain, whose key we do not hold. */
export async function sendAs(evm: EmbeddedEvm, transaction: { from: Address; to: Address; data: Hex; gas: bigint }): Promise<Hex> {
  const rpc = evm.request as unknown as (args: { method: string; params: unknown[] }) => Promise<unknown>;
  return (await rpc({ method: SEND_AS, params: [{ ...transaction, gas: `0x${transaction.gas.toString(16)}` }] })) as Hex;
}
