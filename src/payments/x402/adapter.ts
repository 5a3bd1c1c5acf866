import type { Signature } from '@solana/kit';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { parseAbi, type Address, type Hex } from 'viem';
import type { EvmTokenChain } from '../../chains/evm/token-chain.js';
import type { SolanaChain } from '../../chains/solana/solana-chain.js';
import type { PaymentLookup, PaymentRailAdapter, SettlementOutcome } from '../gate.js';
import type { PaidRoute } from '../prices.js';
import type { PaymentTrace } from '../trace.js';
import type { DiscoveryExtensions } from './discovery.js';
import { X402_MAX_TIMEOUT_SECONDS, type X402Offer, type X402Rail, type X402Rails } from './rails.js';

const eip3009Abi = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);
/** A rail C transaction's blockhash expires within about a minute; past this it can never land. */
const SVM_LANDING_WINDOW_MS = X402_MAX_TIMEOUT_SECONDS * 1000;

/**
 * Rails B and C in the gate: the 402 carries `PAYMENT-REQUIRED` (v2) and the v1 body `accepts`; a
 * `PAYMENT-SIGNATURE` or `X-PAYMENT` payload is paired with the route's own requirements (never
 * the client's copy), verified by the facilitator, and settled by the gate (before or after the
 * handler, as the route's effect decides). `chains` reads what a lost settlement did.
 */
export function x402Rail(rails: X402Rails, publicBaseUrl: string, chains: { base: EvmTokenChain; solana: SolanaChain }): PaymentRailAdapter {
  const offerFor = (route: PaidRoute, request: Request, extensions?: DiscoveryExtensions): X402Offer => {
    const url = new URL(request.url);
    return {
      amountUnits: route.price,
      resourceUrl: `${publicBaseUrl}${url.pathname}${url.search}`,
      description: route.summary,
      mimeType: route.unit === 'tick' ? 'text/event-stream' : 'application/json',
      rails: route.rails.filter((rail): rail is X402Rail => rail === 'B' || rail === 'C'),
      ...(extensions && { extensions }),
    };
  };

  return {
    rails: ['B', 'C'],
    accepts: (proof) => proof.kind === 'x402',

    async offer(route, request, discovery) {
      const required = await rails.paymentRequired(offerFor(route, request, discovery));
      return { headers: [['PAYMENT-REQUIRED', required.header]], accepts: required.accepts };
    },

    async verify(route, proof, request) {
      if (proof.kind !== 'x402') return { ok: false, reason: 'not an x402 payment' };
      const matched = rails.match(proof.payload, await rails.requirements(offerFor(route, request)));
      if (!matched.ok) return { ok: false, reason: matched.reason };
      const { payload, requirement } = matched;
      const proofKey = rails.proofKey(payload);
      const verdict = await rails.verify(payload, requirement);
      if (!verdict.isValid) {
        return { ok: false, proofKey, reason: [verdict.invalidReason, verdict.invalidMessage].filter(Boolean).join(': ') || 'the payment is invalid' };
      }
      // v1 clients read X-PAYMENT-RESPONSE; v2 clients PAYMENT-RESPONSE.
      const responseHeader = matched.version === 1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE';
      const rail: X402Rail = requirement.network === rails.networks.B ? 'B' : 'C';
      return {
        ok: true,
        payment: {
          rail,
          network: requirement.network,
          proofKey,
          payer: verdict.payer ?? null,
          asset: requirement.asset,
          trace: traceOf(rail, payload.payload, requirement.asset),
          async settle(): Promise<SettlementOutcome> {
            const settlement = await rails.settle(payload, requirement);
            const { response } = settlement;
            if (settlement.outcome === 'settled') {
              return {
                state: 'settled',
                reference: response.transaction || null,
                payer: response.payer ?? verdict.payer ?? null,
                headers: { [responseHeader]: encodePaymentResponseHeader(response) },
                receipt: { ...response },
              };
            }
            const reason = [response.errorReason, response.errorMessage].filter(Boolean).join(': ');
            if (settlement.outcome === 'refused') return { state: 'refused', reason };
            return { state: 'unknown', reason, reference: response.transaction || null };
          },
        },
      };
    },

    async lookup(trace, reference): Promise<PaymentLookup> {
      if (trace.kind === 'eip3009') {
        // The token marks each authorization nonce it executed.
        const used = await chains.base.connection.publicClient.readContract({
          address: trace.token as Address,
          abi: eip3009Abi,
          functionName: 'authorizationState',
          args: [trace.from as Address, trace.nonce as Hex],
        });
        if (used) return { state: 'landed', reference };
        // Real time: validBefore is the payer's EIP-3009 bound, from its own clock, not a service time rule.
        if (Date.now() / 1000 > Number(trace.validBefore)) return { state: 'absent', reason: 'the authorization expired unused' };
        return { state: 'pending' };
      }
      if (trace.kind !== 'svm') throw new Error(`rails B and C cannot look up a ${trace.kind} payment`);
      // Without the signature the facilitator never returned, nothing tells whether it landed: a person decides.
      if (!reference) return { state: 'pending' };
      const status = await chains.solana.status(reference as Signature);
      if (status.state === 'landed') return { state: 'landed', reference };
      if (status.state === 'failed') return { state: 'absent', reason: `transaction ${reference} failed: ${status.error}` };
      if (Date.now() > Date.parse(trace.expires)) return { state: 'absent', reason: `transaction ${reference} never landed before its blockhash expired` };
      return { state: 'pending' };
    },
  };
}

/** What finds a rail B or C payment again: the EIP-3009 nonce, or (rail C) its signature and how long it can land. */
function traceOf(rail: X402Rail, inner: Record<string, unknown>, asset: string): PaymentTrace {
  if (rail === 'B') {
    const { from, nonce, validBefore } = (inner as { authorization: { from: string; nonce: string; validBefore: string } }).authorization;
    return { kind: 'eip3009', token: asset, from, nonce, validBefore };
  }
  // Real time: how long a blockhash can land is the network's, not a service time rule (the lookup compares it to real time too).
  return { kind: 'svm', expires: new Date(Date.now() + SVM_LANDING_WINDOW_MS).toISOString() };
}
