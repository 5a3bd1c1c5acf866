import { Credential, Errors, Expires, Method, type Challenge, type z } from 'mppx';
import { Methods as TempoMethods } from 'mppx/tempo';
import {
  decodeFunctionData,
  isAddressEqual,
  keccak256,
  parseAbiItem,
  parseEventLogs,
  stringToHex,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { topUpGas, type EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import {
  assertTempoTransactionTimely,
  decodeTempoTransaction,
  settlementQueue,
  InvalidTempoTransactionError,
  recoverTempoSender,
  sendAs,
} from '../../chains/embedded/tempo-transactions.js';
import { stablecoinAbi } from '../../chains/evm/abis.js';
import { asChainError, ChainRevertError } from '../../chains/evm/connection.js';

/**
 * Rail A in local mode: an mppx server method on mppx's own Tempo charge schema (`tempo/charge`),
 * verifying against the embedded Tempo chain.
 *
 * - `transaction` credentials (pull: a signed Tempo transaction, type 0x76): `validate` checks
 *   them without moving money; `broadcast` (or `settle`) applies them. The embedded EVM cannot run
 *   Tempo's transaction type, so settlement replays the verified calls as the signer (impersonation).
 * - `hash` credentials (push: the payer already sent a plain EVM transaction) are checked from the
 *   receipt's logs; nothing is left to settle.
 */

type ChargeMethod = typeof TempoMethods.charge;
type ChargePayload = z.output<ChargeMethod['schema']['credential']['payload']>;
/** The challenge's request in canonical (output) form: amounts in base units. */
export type ChargeRequest = z.output<ChargeMethod['schema']['request']>;
type ChargeRequestInput = z.input<ChargeMethod['schema']['request']>;
export type ChargeCredential = Credential.Credential<ChargePayload, Challenge.Challenge<ChargeRequest, 'charge', 'tempo'>>;

export interface TempoSettlement {
  /** The embedded transaction that carried the challenge-bound transfer (for `hash`: the payer's own). */
  txHash: Hex;
  /** Every embedded transaction of the settlement, primary transfer first. */
  txHashes: Hex[];
  /** The mppx receipt reference verify returned: keccak256 of the signed Tempo bytes, or the hash. */
  reference: Hex;
  payer: Address;
  /** True when the transfer was already on chain (a second settle, or a retry after a crash). */
  alreadySettled: boolean;
}

/** Settlement refused before any money moved (expired, unfunded, invalid); retrying will not help. */
export class SettlementRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`Settlement refused: ${reason}.`);
    this.name = 'SettlementRefusedError';
  }
}

const TOKEN_DECIMALS = 6;

/**
 * Builds the local-mode `tempo/charge` server method. Give `method` to `Mppx.create({ methods })`;
 * call `settle(credential)` once the paid handler answered below 500.
 */
export function createEmbeddedTempoCharge(options: { chain: EmbeddedEvmChain }) {
  const { chain } = options;
  const chainId = chain.chain.id;
  const currency = chain.contracts.stablecoin;
  if (!currency) throw new Error('the embedded Tempo chain has no stablecoin');
  const client = chain.connection.publicClient;
  const queue = settlementQueue(chain.evm);
  // Settlements under way, by reference: a concurrent second call waits for the first one.
  const inflight = new Map<Hex, Promise<TempoSettlement>>();
  const ctx: ChargeChain = { chain, chainId, client };

  const method = Method.toServer(TempoMethods.charge, {
    defaults: { currency, decimals: TOKEN_DECIMALS, chainId },
    request({ request }) {
      // Misconfiguration, not a payment failure: a challenge we could never accept must not be issued.
      if (request.chainId !== undefined && request.chainId !== chainId) {
        throw new Error(`the embedded Tempo charge settles on chain ${chainId}, not ${request.chainId}`);
      }
      if (request.feePayer !== undefined) throw new Error('the embedded Tempo charge pays gas itself: do not set feePayer');
      return { ...request, chainId };
    },
    // Checks the payment without moving money (mppx's validateCredential).
    async validate({ credential, request }) {
      const resolved = resolveRequest(request);
      const payer = await check(ctx, credential, resolved);
      return { challenge: credential.challenge, credential, details: { payer }, intent: 'charge', method: 'tempo', request: resolved, source: credential.source };
    },
    // Checks it again and moves the money (mppx's broadcastCredential, and its 402 handler path).
    async broadcast({ credential }) {
      await check(ctx, credential, resolveRequest(credential.challenge.request));
      try {
        const settled = await settle(credential);
        // Real time, as mppx's own tempo.charge stamps its receipts (live mode): a protocol field, no service time rule reads it.
        return { method: 'tempo', status: 'success', timestamp: new Date().toISOString(), reference: settled.txHash };
      } catch (error) {
        if (error instanceof SettlementRefusedError) throw new Errors.VerificationFailedError({ reason: error.reason });
        throw error;
      }
    },
  });

  /**
   * Moves the money of a credential `verify` accepted: applies a `transaction` credential on the
   * embedded chain as its signer; a `hash` credential has already paid. Idempotent: a second call
   * (or a call after a restart) finds the challenge-bound transfer on chain and returns it.
   * Throws SettlementRefusedError when nothing moved and nothing will.
   */
  async function settle(input: string | ChargeCredential): Promise<TempoSettlement> {
    const credential = parseCredential(input);
    const payload = credential.payload;
    if (payload.type === 'hash') {
      const hash = payload.hash as Hex;
      const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
      if (!receipt || receipt.status !== 'success') throw new SettlementRefusedError(`transaction ${hash} did not pay`);
      const payer = parseSource(credential.source)?.address ?? receipt.from;
      return { txHash: hash, txHashes: [hash], reference: hash, payer, alreadySettled: true };
    }
    if (payload.type !== 'transaction') throw new SettlementRefusedError('only transaction and hash credentials can be settled');

    let tx: InspectedTransaction;
    try {
      const request = resolveRequest(credential.challenge.request);
      assertChargeable(chainId, request, 'pull');
      tx = inspectTransaction(payload.signature as Hex, credential, request, chainId);
    } catch (error) {
      throw error instanceof Errors.PaymentError ? new SettlementRefusedError(reasonOf(error)) : error;
    }
    const running = inflight.get(tx.reference);
    if (running) return running;
    const settlement = queue(() => apply(ctx, tx)).finally(() => inflight.delete(tx.reference));
    inflight.set(tx.reference, settlement);
    return settlement;
  }

  return { method, settle };
}

export type EmbeddedTempoCharge = ReturnType<typeof createEmbeddedTempoCharge>;

// ---- checks and settlement ---------------------------------------------------------------------

/** What the checks and the settlement read: the embedded chain, its id and its public client. */
interface ChargeChain {
  chain: EmbeddedEvmChain;
  chainId: number;
  client: EmbeddedEvmChain['connection']['publicClient'];
}

/** Every check of a payment, without moving money; returns the payer. */
async function check(ctx: ChargeChain, credential: ChargeCredential, request: ChargeRequest): Promise<Address> {
  Expires.assert(credential.challenge.expires, credential.challenge.id);
  const payload = credential.payload;
  if (payload.type === 'hash') return verifyHash(ctx, payload.hash as Hex, credential, request);
  if (payload.type === 'transaction') return verifyTransaction(ctx, payload.signature as Hex, credential, request);
  return refuse('proof credentials (zero-amount charges) are not accepted here');
}

function assertChargeable(chainId: number, request: ChargeRequest, mode: 'pull' | 'push') {
  if (request.methodDetails?.chainId !== chainId) {
    refuse(`the challenge is for chain ${request.methodDetails?.chainId ?? 'unknown'}, this server settles on chain ${chainId}`);
  }
  if (BigInt(request.amount) === 0n) refuse('zero-amount charges are not accepted here');
  const modes = request.methodDetails?.supportedModes;
  if (modes && !modes.includes(mode)) refuse(`the challenge does not allow ${mode} payments`);
  if (request.methodDetails?.machineTokenEnabled) refuse('machine-token routes are not available on the embedded chain');
}

async function verifyTransaction(ctx: ChargeChain, serialized: Hex, credential: ChargeCredential, request: ChargeRequest): Promise<Address> {
  assertChargeable(ctx.chainId, request, 'pull');
  const tx = inspectTransaction(serialized, credential, request, ctx.chainId);
  assertTimely(tx);
  await assertPayable(ctx, tx);
  return tx.sender;
}

async function verifyHash(ctx: ChargeChain, hash: Hex, credential: ChargeCredential, request: ChargeRequest): Promise<Address> {
  const { chainId, client } = ctx;
  assertChargeable(chainId, request, 'push');
  const source = parseSource(credential.source);
  if (source && source.chainId !== chainId) refuse(`the credential source is on chain ${source.chainId}, not ${chainId}`);
  const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
  if (!receipt) return refuse(`transaction ${hash} is not on the embedded Tempo chain`);
  if (receipt.status !== 'success') refuse(`transaction ${hash} reverted`);
  const payer = source?.address ?? receipt.from;
  matchTransfers(expectedTransfers(request), transferEffects(receipt, request.currency as Address, payer), {
    exact: false,
    realm: credential.challenge.realm,
    challengeId: credential.challenge.id,
    noun: 'transfer',
  });
  return payer;
}

function assertTimely(tx: InspectedTransaction) {
  try {
    assertTempoTransactionTimely(tx);
  } catch (error) {
    if (error instanceof InvalidTempoTransactionError) refuse(error.reason);
    throw error;
  }
}

/** The sender holds the whole amount and every call would succeed if sent now. */
async function assertPayable({ client }: ChargeChain, tx: InspectedTransaction) {
  const total = tx.transfers.reduce((sum, t) => sum + t.amount, 0n);
  const balance = await client.readContract({ address: tx.currency, abi: stablecoinAbi, functionName: 'balanceOf', args: [tx.sender] });
  if (balance < total) {
    refuse(`the payer ${tx.sender} holds ${balance} base units, less than the ${total} this payment moves`);
  }
  for (const transfer of tx.transfers) {
    await client.call({ account: tx.sender, to: transfer.to, data: transfer.data }).catch((error: unknown) => {
      const chainError = asChainError(error);
      const why = chainError instanceof ChainRevertError ? chainError.message : String((error as Error).message ?? error);
      refuse(`the transfer to ${transfer.recipient} would fail: ${why}`);
    });
  }
}

/** The primary transfer's embedded transaction, if this settlement (or its challenge) already paid. */
async function findApplied({ client }: ChargeChain, tx: InspectedTransaction): Promise<Hex | null> {
  const primary = tx.transfers[0]!;
  const logs = await client.getLogs({
    address: tx.currency,
    event: transferWithMemoEvent,
    args: { from: tx.sender, to: primary.recipient, memo: primary.memo! },
    fromBlock: 0n,
    strict: true,
  });
  const hit = logs.find((log) => log.args.amount === primary.amount);
  return hit?.transactionHash ?? null;
}

async function apply(ctx: ChargeChain, tx: InspectedTransaction): Promise<TempoSettlement> {
  const { chain, client } = ctx;
  const settled = (txHashes: Hex[], alreadySettled: boolean): TempoSettlement => ({
    txHash: txHashes[0]!,
    txHashes,
    reference: tx.reference,
    payer: tx.sender,
    alreadySettled,
  });
  // Durable idempotency: the challenge-bound transfer on chain means this payment happened.
  const applied = await findApplied(ctx, tx);
  if (applied) return settled([applied], true);

  try {
    assertTimely(tx);
    await assertPayable(ctx, tx);
  } catch (error) {
    throw error instanceof Errors.PaymentError ? new SettlementRefusedError(reasonOf(error)) : error;
  }
  const gas: bigint[] = [];
  for (const transfer of tx.transfers) {
    gas.push(await client.estimateGas({ account: tx.sender, to: transfer.to, data: transfer.data }));
  }
  // The signer may hold no ETH: the embedded chain's operator pays its gas.
  await topUpGas(chain, tx.sender);

  const hashes: Hex[] = [];
  // Primary (challenge-bound) transfer first: if it is on chain, the payment is recorded.
  for (const [index, transfer] of tx.transfers.entries()) {
    const hash = await sendAs(chain.evm, { from: tx.sender, to: transfer.to, data: transfer.data, gas: gas[index]! });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: chain.connection.pollingInterval, retryCount: 0 });
    if (receipt.status !== 'success') {
      if (index === 0) throw new SettlementRefusedError(`the transfer to ${transfer.recipient} reverted (${hash})`);
      throw new Error(`split transfer to ${transfer.recipient} reverted (${hash}) after the primary transfer ${hashes[0]} was applied`);
    }
    hashes.push(hash);
  }
  return settled(hashes, false);
}

// ---- transactions ------------------------------------------------------------------------------

interface TransferCall {
  to: Address;
  data: Hex;
  recipient: Address;
  amount: bigint;
  memo?: Hex;
}

interface InspectedTransaction {
  reference: Hex;
  sender: Address;
  currency: Address;
  /** The matched transfers, primary (challenge-bound) first. */
  transfers: TransferCall[];
  validBefore?: number;
  validAfter?: number;
}

/**
 * Everything about a signed Tempo transaction that needs no chain: type, chain id, a valid
 * single-key signature (recovered here, not taken from the envelope), the credential's source, and
 * exactly the transfers the challenge asks for.
 */
function inspectTransaction(serialized: Hex, credential: ChargeCredential, request: ChargeRequest, chainId: number): InspectedTransaction {
  let envelope: ReturnType<typeof decodeTempoTransaction>;
  let sender: Address;
  try {
    envelope = decodeTempoTransaction(serialized);
    sender = recoverTempoSender(envelope);
  } catch (error) {
    if (error instanceof InvalidTempoTransactionError) refuse(error.reason);
    throw error;
  }
  if (envelope.chainId !== chainId) refuse(`the transaction is signed for chain ${envelope.chainId}, the challenge asks for chain ${chainId}`);

  const source = parseSource(credential.source);
  if (source && (source.chainId !== chainId || !isAddressEqual(source.address, sender))) {
    refuse(`the credential source ${credential.source} is not the transaction's signer ${sender} on chain ${chainId}`);
  }
  const currency = request.currency as Address;
  const calls = envelope.calls ?? [];
  const expected = expectedTransfers(request);
  if (calls.length !== expected.length) {
    refuse(`the transaction makes ${calls.length} call(s); the challenge asks for exactly ${expected.length} transfer(s)`);
  }
  const decoded = calls.map((call, index) => decodeTransferCall(call, currency, index));
  const matched = matchTransfers(expected, decoded, {
    exact: true,
    realm: credential.challenge.realm,
    challengeId: credential.challenge.id,
    noun: 'transfer call',
  });
  return {
    reference: keccak256(serialized),
    sender,
    currency,
    transfers: matched,
    ...(envelope.validBefore === undefined ? {} : { validBefore: Number(envelope.validBefore) }),
    ...(envelope.validAfter === undefined ? {} : { validAfter: Number(envelope.validAfter) }),
  };
}

function decodeTransferCall(call: { to?: string | undefined; value?: bigint | undefined; data?: Hex | undefined }, currency: Address, index: number): TransferCall {
  const position = `call ${index + 1}`;
  if (!call.to || !isAddressEqual(call.to as Address, currency)) refuse(`${position} goes to ${call.to ?? 'nowhere'}, not the challenge's currency ${currency}`);
  if (call.value) refuse(`${position} sends native value`);
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: stablecoinAbi, data: call.data ?? '0x' });
  } catch {
    return refuse(`${position} is not a token transfer`);
  }
  if (decoded.functionName === 'transferWithMemo') {
    const [recipient, amount, memo] = decoded.args;
    return { to: currency, data: call.data!, recipient, amount, memo };
  }
  if (decoded.functionName === 'transfer') {
    const [recipient, amount] = decoded.args;
    return { to: currency, data: call.data!, recipient, amount };
  }
  return refuse(`${position} calls ${decoded.functionName}, not transfer or transferWithMemo`);
}

// ---- matching ----------------------------------------------------------------------------------

interface ExpectedTransfer {
  recipient: Address;
  amount: bigint;
  /** The primary transfer must carry the memo bound to the challenge. */
  primary: boolean;
  /** A split's own memo, when the challenge names one. */
  memo?: Hex;
}

/** What the challenge asks to move (mppx's getTransfers): the primary transfer, then any splits. */
function expectedTransfers(request: ChargeRequest): ExpectedTransfer[] {
  if (!request.recipient) refuse('the challenge names no recipient');
  const total = BigInt(request.amount);
  const splits = request.methodDetails?.splits ?? [];
  const splitTotal = splits.reduce((sum, split) => sum + BigInt(split.amount), 0n);
  if (splitTotal >= total) refuse('the challenge splits more than its amount');
  return [
    { recipient: request.recipient as Address, amount: total - splitTotal, primary: true },
    ...splits.map((split) => ({
      recipient: split.recipient as Address,
      amount: BigInt(split.amount),
      primary: false,
      ...(split.memo ? { memo: split.memo as Hex } : {}),
    })),
  ];
}

interface Movement {
  recipient: Address;
  amount: bigint;
  memo?: Hex;
}

/**
 * Pairs every expected transfer with one distinct movement (a call, or a log), primary first, and
 * says precisely what is wrong when one is missing. Pull payments must match amounts exactly; a
 * push payment may pay more.
 */
function matchTransfers<M extends Movement>(
  expected: ExpectedTransfer[],
  movements: M[],
  context: { exact: boolean; realm: string; challengeId: string; noun: string },
): M[] {
  const used = new Set<number>();
  const ordered = [...expected].sort((a, b) => rank(a) - rank(b));
  const byExpected = new Map<ExpectedTransfer, M>();
  for (const want of ordered) {
    const fitsMemo = (m: M) =>
      want.primary
        ? m.memo !== undefined && isChallengeBoundMemo(m.memo, context.realm, context.challengeId)
        : want.memo === undefined || m.memo?.toLowerCase() === want.memo.toLowerCase();
    const fitsAmount = (m: M) => (context.exact ? m.amount === want.amount : m.amount >= want.amount);
    const open = movements.map((m, i) => [m, i] as const).filter(([, i]) => !used.has(i));
    const hit = open.find(([m]) => fitsMemo(m) && isAddressEqual(m.recipient, want.recipient) && fitsAmount(m));
    if (hit) {
      used.add(hit[1]);
      byExpected.set(want, hit[0]);
      continue;
    }
    // Explain the closest candidate.
    const who = want.primary ? 'the payment' : `the split to ${want.recipient}`;
    if (want.primary) {
      const bound = open.filter(([m]) => fitsMemo(m));
      if (bound.length === 0) {
        refuse(
          open.some(([m]) => m.memo !== undefined)
            ? `the ${context.noun}'s memo is not bound to this challenge`
            : `no ${context.noun} carries a memo bound to this challenge`,
        );
      }
      const [m] = bound[0]!;
      if (!isAddressEqual(m.recipient, want.recipient)) refuse(`${who} goes to ${m.recipient}, but the challenge's recipient is ${want.recipient}`);
      amountMismatch(who, m.amount, want.amount, context.exact);
    }
    const toRecipient = open.filter(([m]) => isAddressEqual(m.recipient, want.recipient));
    if (toRecipient.length === 0) refuse(`no ${context.noun} pays ${want.recipient}`);
    const sameAmount = toRecipient.find(([m]) => fitsAmount(m));
    if (!sameAmount) amountMismatch(who, toRecipient[0]![0].amount, want.amount, context.exact);
    refuse(`${who} must carry the memo ${want.memo}`);
  }
  // Primary first, so settlement applies (and finds) the challenge-bound transfer first.
  return expected.map((want) => byExpected.get(want)!);
}

const rank = (t: ExpectedTransfer) => (t.primary ? 0 : t.memo ? 1 : 2);

function amountMismatch(who: string, paid: bigint, price: bigint, exact: boolean): never {
  if (paid < price) {
    throw new Errors.PaymentInsufficientError({ reason: `${who} moves ${paid} base units, the price is ${price}` });
  }
  return refuse(`${who} moves ${paid} base units, the challenge asks for ${exact ? 'exactly ' : ''}${price}`);
}

export const transferWithMemoEvent = parseAbiItem('event TransferWithMemo(address indexed from, address indexed to, uint256 amount, bytes32 indexed memo)');

interface LogMovement extends Movement {
  logIndex: number;
}

/**
 * The payer's token movements in a receipt, as mppx's live verifier sees them: a TransferWithMemo
 * counts only together with its Transfer (same from, to, amount); other Transfers count without memo.
 */
function transferEffects(receipt: TransactionReceipt, currency: Address, payer: Address): LogMovement[] {
  const ours = receipt.logs.filter((log) => isAddressEqual(log.address, currency));
  const logs = parseEventLogs({ abi: stablecoinAbi, logs: ours, strict: true });
  const transfers = logs.filter((log) => log.eventName === 'Transfer' && isAddressEqual(log.args.from, payer));
  const paired = new Set<number>();
  const effects: LogMovement[] = [];
  for (const log of logs) {
    if (log.eventName !== 'TransferWithMemo' || !isAddressEqual(log.args.from, payer)) continue;
    const { to, amount, memo } = log.args;
    const partner = transfers.find(
      (t) =>
        t.eventName === 'Transfer' &&
        !paired.has(t.logIndex) &&
        t.logIndex < log.logIndex &&
        isAddressEqual(t.args.to, to) &&
        t.args.amount === amount,
    );
    if (!partner) continue;
    paired.add(partner.logIndex);
    effects.push({ recipient: to, amount, memo, logIndex: log.logIndex });
  }
  for (const t of transfers) {
    if (t.eventName === 'Transfer' && !paired.has(t.logIndex)) effects.push({ recipient: t.args.to, amount: t.args.amount, logIndex: t.logIndex });
  }
  return effects;
}

// ---- attribution memo (mppx tempo/Attribution.js, which mppx does not export) -----------------

const MPP_TAG = keccak256(stringToHex('mpp')).slice(2, 10);
const MEMO_VERSION = '01';

/** bytes 0-3 tag, 4 version, 5-14 keccak(realm)[0..10], 25-31 keccak(challenge id)[0..7]. */
export function isChallengeBoundMemo(memo: Hex, realm: string, challengeId: string): boolean {
  const hex = memo.toLowerCase();
  if (hex.length !== 66) return false;
  return (
    hex.slice(2, 10) === MPP_TAG &&
    hex.slice(10, 12) === MEMO_VERSION &&
    hex.slice(12, 32) === keccak256(stringToHex(realm)).slice(2, 22) &&
    hex.slice(52, 66) === keccak256(stringToHex(challengeId)).slice(2, 16)
  );
}

// ---- helpers -----------------------------------------------------------------------------------

function refuse(reason: string): never {
  throw new Errors.VerificationFailedError({ reason });
}

/** A payment error's reason, without mppx's prefix. */
export function reasonOf(error: Error): string {
  return error.message.replace(/^Payment verification failed: /, '').replace(/\.$/, '');
}

/** Route requests arrive in input form (decimal amount); credential challenges in output form. */
function resolveRequest(request: ChargeRequestInput | ChargeRequest): ChargeRequest {
  const parsed = TempoMethods.charge.schema.request.safeParse(request);
  return parsed.success ? parsed.data : (request as ChargeRequest);
}

function parseCredential(input: string | ChargeCredential): ChargeCredential {
  let credential: Credential.Credential;
  try {
    credential = typeof input === 'string' ? Credential.deserialize(input) : input;
  } catch {
    throw new SettlementRefusedError('the credential cannot be decoded');
  }
  const payload = TempoMethods.charge.schema.credential.payload.safeParse(credential.payload);
  if (!payload.success) throw new SettlementRefusedError('the credential payload is not a Tempo charge payload');
  return { ...credential, payload: payload.data } as ChargeCredential;
}

/** `did:pkh:eip155:<chain id>:<address>`, the payer a credential names. */
function parseSource(source: string | undefined): { chainId: number; address: Address } | undefined {
  if (source === undefined) return undefined;
  const match = /^did:pkh:eip155:(\d+):(0x[0-9a-fA-F]{40})$/.exec(source);
  if (!match) return refuse(`the credential source ${source} is not a did:pkh:eip155 address`);
  return { chainId: Number(match[1]), address: match[2] as Address };
}
