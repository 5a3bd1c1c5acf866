/**
 * What finds a fee payment again after the request that claimed it is gone (a crash, a lost
 * connection to the chain): kept with the claim (`payments.trace`) and read by the rail adapter's
 * `lookup` when the reconciler asks whether the money moved. Plain JSON: strings, no bigints.
 */
export type PaymentTrace =
  /** Rail A, a signed Tempo transaction the service broadcasts: its transfer carries a memo bound to the challenge. */
  | { kind: 'tempo-pull'; payer: string; recipient: string; amount: string; realm: string; challengeId: string; expires: string }
  /** Rail A, a transaction the payer already sent: it moved the money before the proof arrived. */
  | { kind: 'tempo-push'; hash: string }
  /** Rail B, an EIP-3009 authorization: the token records each nonce it has used. */
  | { kind: 'eip3009'; token: string; from: string; nonce: string; validBefore: string }
  /** Rail C, a Solana transfer the facilitator co-signs: found by its signature (the payment's reference). */
  | { kind: 'svm'; expires: string }
  /** The card: charged when it was verified. */
  | { kind: 'card'; paymentIntent: string }
  /** A draw on a card credit (src/payments/card/credit.ts): found by its key (the payment's proof key). */
  | { kind: 'card-credit'; creditId: string; paymentIntent: string; drawKey: string };
