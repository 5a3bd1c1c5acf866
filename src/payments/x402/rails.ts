import { createHash } from 'node:crypto';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { address, getTransactionDecoder } from '@solana/kit';
import { isPaymentPayloadV2 } from '@x402/core/schemas';
import { HTTPFacilitatorClient, x402ResourceServer, type FacilitatorClient, type FacilitatorConfig } from '@x402/core/server';
import {
  SettleError,
  VerifyError,
  type Network,
  type PaymentPayload,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  type SettleResponse,
  type VerifyResponse,
} from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { getAddress, isAddress, isHex, parseAbi, type Address } from 'viem';
import type { LocalChains } from '../../chains/embedded/index.js';
import { embeddedFacilitator } from './embedded-facilitator.js';
import { fromV1Payload, toV1Accepts } from './v1.js';

/** B: x402 exact on Base (EIP-3009 USDC). C: x402 exact on Solana (SPL transfer, facilitator pays fees). */

/** 402 answers kept per resource (rails.paymentRequired); the whole cache starts afresh when full. */
const ANSWERED_MAX = 1000;

/**
 * @x402/core's `encodePaymentRequiredHeader`, byte for byte (x402.test.ts compares them), with
 * Node's base64: the library's browser-safe encoder builds one string per byte and took about a
 * tenth of a 402's CPU (BENCH_PROFILE_DIR).
 */
export function paymentRequiredHeader(required: object): string {
  return Buffer.from(JSON.stringify(required), 'utf8').toString('base64');
}

export type X402Rail = 'B' | 'C';

/** A rail C payment's claim key: its network and the SHA-256 of its transaction message. */
export function svmProofKey(network: string, messageBytes: ArrayLike<number>): string {
  return `x402:${network}:${createHash('sha256').update(Uint8Array.from(messageBytes)).digest('hex')}`;
}

/**
 * How long a signed payment stays usable (EVM `validBefore` = signing time + this). Long enough for
 * the handler to run between verification and settlement; the claim makes it single-use anyway.
 */
export const X402_MAX_TIMEOUT_SECONDS = 300;
/** The facilitator broadcast the payment but could not confirm it: the outcome is unknown. */
const SETTLEMENT_PENDING = 'settlement_pending';

export interface X402Offer {
  /** Price in 6-decimal base units. */
  amountUnits: bigint;
  /** The full URL of the paid resource. */
  resourceUrl: string;
  description: string;
  /** Of the paid response; default application/json. */
  mimeType?: string;
  rails: readonly X402Rail[];
  /** PaymentRequired `extensions` (the route's discovery metadata); one object per route, compared by identity. */
  extensions?: Readonly<Record<string, unknown>>;
}

/** What a 402 carries for x402 clients. */
/** Shared by every 402 for one resource (cached): read-only. */
export interface X402PaymentRequired {
  readonly requirements: readonly PaymentRequirements[];
  /** Value of the `PAYMENT-REQUIRED` header: base64 JSON `{x402Version: 2, error, resource, accepts}`. */
  readonly header: string;
  /** `accepts` of the v1 JSON body `{x402Version: 1, accepts}`. */
  readonly accepts: readonly PaymentRequirementsV1[];
}

/** A client's decoded payment paired with the offered requirement it answers. */
export type X402Match =
  | { ok: true; version: 1 | 2; payload: PaymentPayload; requirement: PaymentRequirements }
  | { ok: false; reason: string };

export interface X402Settlement {
  /** settled: the money moved. refused: nothing moved and nothing will. unknown: it may have moved. */
  outcome: 'settled' | 'refused' | 'unknown';
  /** For the `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1) header (`encodePaymentResponseHeader`). */
  response: SettleResponse;
}

export interface X402Rails {
  /** CAIP-2 network of each rail. */
  readonly networks: Readonly<Record<X402Rail, Network>>;
  /** v2 requirements for a price on the given rails, in the order of `rails`. */
  requirements(offer: X402Offer): Promise<PaymentRequirements[]>;
  /** Requirements plus the 402's v2 header and v1 body entries. */
  paymentRequired(offer: X402Offer & { error?: string }): Promise<X402PaymentRequired>;
  /**
   * Pairs a decoded `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1 or v2) JSON object with the
   * requirement it answers among `requirements` (rebuilt for the route, never the client's copy).
   */
  match(decoded: unknown, requirements: readonly PaymentRequirements[]): X402Match;
  /** Checks the payment against the requirement without moving money. */
  verify(payload: PaymentPayload, requirement: PaymentRequirements): Promise<VerifyResponse>;
  /** Moves the money (EIP-3009 transferWithAuthorization / the co-signed Solana transfer). */
  settle(payload: PaymentPayload, requirement: PaymentRequirements): Promise<X402Settlement>;
  /**
   * The payment's unique key, to claim before the handler runs. EVM: network, token, payer and
   * EIP-3009 nonce (the token accepts each once). SVM: network and the SHA-256 of the transaction
   * message (the fee payer's signature, and so the transaction id, does not exist before
   * settlement, and the message fixes it). Call it on a payload `match` accepted.
   */
  proofKey(payload: PaymentPayload): string;
}

export interface X402PayTo {
  evm: Address;
  /** Base58 owner address; its token account for the mint must exist (the client does not create it). */
  solana: string;
}

interface RailsConfig {
  facilitator: FacilitatorClient;
  payTo: X402PayTo;
  networks: Record<X402Rail, Network>;
  /** Base's token and its EIP-712 domain (clients sign the authorization over it). */
  evmAsset: { address: Address; name: string; version: string };
  solanaMint: string;
}

function createRails(config: RailsConfig): X402Rails {
  const { networks } = config;
  const server = new x402ResourceServer(config.facilitator)
    .register(networks.B, new ExactEvmScheme())
    .register(networks.C, new ExactSvmScheme());
  const rs: RailsServer = { server, ready: initialiseOnce(server), networks };
  const requirements = cachedRequirements(rs, config);

  const buildPaymentRequired = async (offer: X402Offer & { error?: string }): Promise<X402PaymentRequired> => {
    const accepts = await requirements(offer);
    const resource = { url: offer.resourceUrl, description: offer.description, mimeType: offer.mimeType ?? 'application/json' };
    const required = await server.createPaymentRequiredResponse(accepts, resource, offer.error, offer.extensions && { ...offer.extensions });
    return { requirements: accepts, header: paymentRequiredHeader(required), accepts: toV1Accepts(accepts, resource) };
  };
  const answered = new Map<string, Promise<X402PaymentRequired>>();
  // A route's extensions are one object built when it was defined: its identity keys them.
  const extensionIds = new WeakMap<object, number>();
  let extensionCount = 0;
  const extensionsId = (extensions: object | undefined) => {
    if (!extensions) return null;
    let id = extensionIds.get(extensions);
    if (id === undefined) extensionIds.set(extensions, (id = ++extensionCount));
    return id;
  };

  return {
    networks,
    requirements,

    paymentRequired(offer) {
      // Nothing in it varies between 402s for one resource (no nonce, no expiry): built once, it
      // answers the rest. Bounded, since a path with an id in it is a resource per id.
      const key = JSON.stringify([offer.amountUnits.toString(), offer.rails, offer.resourceUrl, offer.description, offer.mimeType ?? null, offer.error ?? null, extensionsId(offer.extensions)]);
      let answer = answered.get(key);
      if (!answer) {
        if (answered.size >= ANSWERED_MAX) answered.clear();
        answer = buildPaymentRequired(offer);
        answered.set(key, answer);
        answer.catch(() => answered.delete(key));
      }
      return answer;
    },

    match: (decoded, offered) => matchPayment(rs, decoded, offered),
    verify: (payload, requirement) => verifyPayment(rs, payload, requirement),
    settle: (payload, requirement) => settlePayment(rs, payload, requirement),
    proofKey: (payload) => proofKeyOf(rs, payload),
  };
}

/** The x402 resource server with both schemes registered, and what the rails' steps share with it. */
interface RailsServer {
  server: x402ResourceServer;
  /** Resolves once the server knows the facilitator's kinds. */
  ready: () => Promise<void>;
  networks: Record<X402Rail, Network>;
}

/** The server learns the facilitator's kinds (and the SVM fee payer) once; a failure is retried. */
function initialiseOnce(server: x402ResourceServer): () => Promise<void> {
  let initialised: Promise<void> | undefined;
  return () => {
    initialised ??= server.initialize().catch((error: unknown) => {
      initialised = undefined;
      throw error;
    });
    return initialised;
  };
}

function railOf(networks: Record<X402Rail, Network>, network: string): X402Rail | undefined {
  return network === networks.B ? 'B' : network === networks.C ? 'C' : undefined;
}

/**
 * Requirements depend only on the price and rails (a handful of routes): built once each, they
 * serve every 402 and every verification after.
 */
function cachedRequirements(rs: RailsServer, config: RailsConfig): (offer: X402Offer) => Promise<PaymentRequirements[]> {
  const built = new Map<string, Promise<PaymentRequirements[]>>();
  return (offer) => {
    const key = `${offer.amountUnits}:${[...new Set(offer.rails)].join('')}`;
    let cached = built.get(key);
    if (!cached) {
      cached = buildRequirements(rs, config, offer);
      built.set(key, cached);
      cached.catch(() => built.delete(key));
    }
    return cached;
  };
}

async function buildRequirements({ server, ready, networks }: RailsServer, config: RailsConfig, offer: X402Offer): Promise<PaymentRequirements[]> {
  const { payTo } = config;
  if (offer.amountUnits <= 0n) throw new Error('an x402 price must be positive');
  await ready();
  const list: PaymentRequirements[] = [];
  for (const rail of new Set(offer.rails)) {
    const evm = rail === 'B';
    const [requirement] = await server.buildPaymentRequirements({
      scheme: 'exact',
      network: networks[rail],
      payTo: evm ? payTo.evm : payTo.solana,
      price: {
        amount: offer.amountUnits.toString(),
        asset: evm ? config.evmAsset.address : config.solanaMint,
        extra: evm ? { name: config.evmAsset.name, version: config.evmAsset.version } : {},
      },
      maxTimeoutSeconds: X402_MAX_TIMEOUT_SECONDS,
    });
    if (requirement) list.push(requirement);
  }
  return list;
}

function matchPayment({ server, networks }: RailsServer, decoded: unknown, offered: readonly PaymentRequirements[]): X402Match {
  const version = (decoded as { x402Version?: unknown } | null)?.x402Version;
  let paired: X402Match;
  if (version === 1) {
    const mapped = fromV1Payload(decoded, offered);
    paired = mapped.ok ? { ok: true, version: 1, payload: mapped.payload, requirement: mapped.requirement } : mapped;
  } else if (version === 2) {
    if (!isPaymentPayloadV2(decoded)) return { ok: false, reason: 'the x402 v2 payment is malformed' };
    const payload = decoded as PaymentPayload;
    const requirement = server.findMatchingRequirements([...offered], payload);
    if (!requirement) return { ok: false, reason: "the payment answers none of this route's offers (scheme, network, asset, amount, recipient)" };
    paired = { ok: true, version: 2, payload, requirement };
  } else {
    return { ok: false, reason: 'x402Version must be 1 or 2' };
  }
  if (!paired.ok) return paired;
  const problem = shapeProblem(paired.payload, railOf(networks, paired.requirement.network));
  return problem ? { ok: false, reason: problem } : paired;
}

async function verifyPayment({ server, ready, networks }: RailsServer, payload: PaymentPayload, requirement: PaymentRequirements): Promise<VerifyResponse> {
  const problem = shapeProblem(payload, railOf(networks, requirement.network));
  if (problem) return { isValid: false, invalidReason: 'invalid_payload', invalidMessage: problem };
  await ready();
  try {
    return await server.verifyPayment(payload, requirement);
  } catch (error) {
    // A facilitator's 4xx verdict; anything else (unreachable, 5xx) is not the payer's fault.
    if (error instanceof VerifyError) {
      const { invalidReason = 'invalid_payment', invalidMessage, payer } = error;
      return { isValid: false, invalidReason, invalidMessage, payer };
    }
    throw error;
  }
}

async function settlePayment({ server, ready }: RailsServer, payload: PaymentPayload, requirement: PaymentRequirements): Promise<X402Settlement> {
  try {
    await ready();
  } catch (error) {
    // Nothing was sent to the facilitator: the payment is intact and may be presented again.
    return { outcome: 'refused', response: unsettled('facilitator_unavailable', error, requirement.network) };
  }
  let response: SettleResponse;
  try {
    response = await server.settlePayment(payload, requirement);
  } catch (error) {
    if (error instanceof SettleError) {
      response = {
        success: false,
        errorReason: error.errorReason,
        errorMessage: error.errorMessage,
        payer: error.payer,
        transaction: error.transaction,
        network: error.network,
      };
    } else {
      // The request may have reached the facilitator: do not call it refused.
      return { outcome: 'unknown', response: unsettled('settlement_unconfirmed', error, requirement.network) };
    }
  }
  if (response.success) return { outcome: 'settled', response };
  return { outcome: response.errorReason === SETTLEMENT_PENDING ? 'unknown' : 'refused', response };
}

function proofKeyOf({ networks }: RailsServer, payload: PaymentPayload): string {
  const network = payload.accepted.network;
  const rail = railOf(networks, network);
  if (rail === 'B') {
    const { authorization } = payload.payload as { authorization: { from: string; nonce: string } };
    return `x402:${network}:${payload.accepted.asset.toLowerCase()}:${authorization.from.toLowerCase()}:${authorization.nonce.toLowerCase()}`;
  }
  if (rail === 'C') {
    const transaction = getTransactionDecoder().decode(Buffer.from((payload.payload as { transaction: string }).transaction, 'base64'));
    return svmProofKey(network, transaction.messageBytes);
  }
  throw new Error(`no x402 rail on ${network}`);
}

/**
 * Local mode: requirements name the embedded Base stablecoin and Solana mint, and payments are
 * verified and settled by an in-process `x402Facilitator` on the embedded chains (Base operator
 * submits transferWithAuthorization; Solana operator is the fee payer).
 */
export async function embeddedX402Rails(
  embedded: LocalChains,
  payTo: X402PayTo,
  hooks: { beforeSvmSend?: (proofKey: string, signature: string) => Promise<void> } = {},
): Promise<X402Rails> {
  const { base, solana } = embedded;
  const stablecoin = base.contracts.stablecoin;
  if (!stablecoin) throw new Error('the embedded Base chain has no stablecoin');
  // Clients sign over the token's own EIP-712 domain; read it rather than assume it.
  const domainAbi = parseAbi(['function name() view returns (string)', 'function version() view returns (string)']);
  const client = base.connection.publicClient;
  const [name, version] = await Promise.all([
    client.readContract({ address: stablecoin, abi: domainAbi, functionName: 'name' }),
    client.readContract({ address: stablecoin, abi: domainAbi, functionName: 'version' }),
  ]);
  await ensureTokenAccount(embedded, payTo.solana);
  return createRails({
    facilitator: embeddedFacilitator(embedded, {
      beforeSvmSend: async (messageBytes, signature) => hooks.beforeSvmSend?.(svmProofKey(solana.network, messageBytes), signature),
    }),
    payTo: { evm: getAddress(payTo.evm), solana: payTo.solana },
    networks: { B: `eip155:${base.chain.id}`, C: solana.network as Network },
    evmAsset: { address: getAddress(stablecoin), name, version },
    solanaMint: solana.mint,
  });
}

/** The exact SVM client pays into the recipient's associated token account; it must exist. */
async function ensureTokenAccount(embedded: LocalChains, owner: string): Promise<void> {
  const { solana } = embedded;
  const [ata] = await findAssociatedTokenPda({ mint: solana.mint, owner: address(owner), tokenProgram: TOKEN_PROGRAM_ADDRESS });
  if (await solana.hasAccount(ata)) return;
  const created = await solana.submit([
    getCreateAssociatedTokenIdempotentInstruction({ payer: solana.operator, ata, owner: address(owner), mint: solana.mint }),
  ]);
  if (created.error) throw new Error(`creating the x402 recipient's token account failed: ${created.error}`);
}

export interface LiveX402Options {
  /** e.g. https://x402.org/facilitator or a CDP facilitator URL. */
  facilitatorUrl: string;
  /** Headers per facilitator call (verify, settle, supported), for facilitators that need auth. */
  createAuthHeaders?: FacilitatorConfig['createAuthHeaders'] | undefined;
  /** How long one facilitator call may take (X402_FACILITATOR_TIMEOUT_MS); @x402/core's own default is 90 s. */
  timeoutMs?: number | undefined;
  payTo: X402PayTo;
  /** USDC on Base. */
  baseUsdc: Address;
  /** USDC's EIP-712 domain on Base (default: USD Coin, 2). */
  baseUsdcDomain?: { name: string; version: string };
  solanaMint: string;
  /** CAIP-2, e.g. solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp (mainnet). */
  solanaNetwork: string;
  /** Default eip155:8453. */
  baseNetwork?: string;
}

/** Live mode: verification and settlement by an x402 facilitator over HTTP. */
export function liveX402Rails(options: LiveX402Options): X402Rails {
  return createRails({
    facilitator: new HTTPFacilitatorClient({ url: options.facilitatorUrl, createAuthHeaders: options.createAuthHeaders, timeoutMs: options.timeoutMs }),
    payTo: { evm: getAddress(options.payTo.evm), solana: options.payTo.solana },
    networks: { B: (options.baseNetwork ?? 'eip155:8453') as Network, C: options.solanaNetwork as Network },
    evmAsset: { address: getAddress(options.baseUsdc), ...(options.baseUsdcDomain ?? { name: 'USD Coin', version: '2' }) },
    solanaMint: options.solanaMint,
  });
}

function unsettled(errorReason: string, error: unknown, network: Network): SettleResponse {
  const errorMessage = error instanceof Error ? error.message : String(error);
  return { success: false, errorReason, errorMessage, transaction: '', network };
}

/** Why a payload cannot be an exact-scheme payment on its rail, or null when its shape is right. */
function shapeProblem(payload: PaymentPayload, rail: X402Rail | undefined): string | null {
  const inner = payload.payload as Record<string, unknown> | undefined;
  if (typeof inner !== 'object' || inner === null) return 'the payment has no payload';
  if (rail === 'B') {
    const { authorization, signature } = inner as { authorization?: Record<string, unknown>; signature?: unknown };
    if (!isHex(signature)) return 'the payment is not an EIP-3009 authorization (signature missing)';
    if (typeof authorization !== 'object' || authorization === null) return 'the payment is not an EIP-3009 authorization';
    const { from, to, value, validAfter, validBefore, nonce } = authorization;
    if (typeof from !== 'string' || !isAddress(from) || typeof to !== 'string' || !isAddress(to)) return 'the authorization addresses are malformed';
    for (const field of [value, validAfter, validBefore]) {
      if (typeof field !== 'string' || !/^\d{1,78}$/.test(field)) return 'the authorization amounts or times are malformed';
    }
    if (typeof nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) return 'the authorization nonce is malformed';
    return null;
  }
  if (rail === 'C') {
    const { transaction } = inner as { transaction?: unknown };
    if (typeof transaction !== 'string' || !/^[A-Za-z0-9+/]+=*$/.test(transaction)) return 'the payment is not a base64 Solana transaction';
    try {
      getTransactionDecoder().decode(Buffer.from(transaction, 'base64'));
    } catch {
      return 'the Solana transaction cannot be decoded';
    }
    return null;
  }
  return `no x402 rail on network ${payload.accepted?.network ?? 'unknown'}`;
}
