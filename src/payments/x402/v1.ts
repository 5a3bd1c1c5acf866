import type { Network, PaymentPayload, PaymentRequirements, PaymentRequirementsV1 } from '@x402/core/types';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { V1_TO_V2_NETWORK_MAP } from '@x402/svm';

/**
 * x402 v1 clients name networks (`base`, `solana-devnet`) where v2 uses CAIP-2 ids, read
 * `maxAmountRequired` and the resource from each `accepts` entry of a 402 JSON body, and send
 * `X-PAYMENT: base64({x402Version: 1, scheme, network, payload})`. The exact scheme's inner
 * payload (an EIP-3009 authorization, or a partially signed Solana transaction) is the same in
 * both versions, so a v1 payment is verified and settled as the v2 payment it maps to.
 */

const V1_TO_V2: Record<string, Network> = {
  ...Object.fromEntries(Object.entries(EVM_NETWORK_CHAIN_ID_MAP).map(([name, chainId]) => [name, `eip155:${chainId}` as Network])),
  ...(V1_TO_V2_NETWORK_MAP as Record<string, Network>),
};
const V2_TO_V1: Record<string, string> = Object.fromEntries(Object.entries(V1_TO_V2).map(([name, network]) => [network, name]));

/** The CAIP-2 id of a v1 network name (`base` -> `eip155:8453`); undefined when unknown. */
export function v2Network(v1Name: string): Network | undefined {
  return Object.hasOwn(V1_TO_V2, v1Name) ? V1_TO_V2[v1Name] : undefined;
}

/** The v1 name of a CAIP-2 network (`eip155:8453` -> `base`); undefined when v1 has none. */
export function v1Network(network: string): string | undefined {
  return Object.hasOwn(V2_TO_V1, network) ? V2_TO_V1[network] : undefined;
}

export interface V1Resource {
  url: string;
  description: string;
  mimeType?: string;
}

/** The `accepts` entries of a v1 402 body for these v2 requirements (those v1 can name). */
export function toV1Accepts(requirements: readonly PaymentRequirements[], resource: V1Resource): PaymentRequirementsV1[] {
  return requirements.flatMap((requirement) => {
    const network = v1Network(requirement.network);
    if (!network) return [];
    return [
      {
        scheme: requirement.scheme,
        network: network as Network,
        maxAmountRequired: requirement.amount,
        resource: resource.url,
        description: resource.description,
        mimeType: resource.mimeType ?? 'application/json',
        outputSchema: {},
        payTo: requirement.payTo,
        maxTimeoutSeconds: requirement.maxTimeoutSeconds,
        asset: requirement.asset,
        extra: { ...requirement.extra },
      },
    ];
  });
}

export type V1Mapping = { ok: true; payload: PaymentPayload; requirement: PaymentRequirements } | { ok: false; reason: string };

/**
 * A decoded v1 payment (the JSON of an `X-PAYMENT` header) as the v2 payload it stands for, with
 * the offered v2 requirement it answers (same scheme, same network). The amount, recipient and
 * asset are then checked by verification against that requirement, as for any v2 payment.
 */
export function fromV1Payload(decoded: unknown, requirements: readonly PaymentRequirements[]): V1Mapping {
  if (typeof decoded !== 'object' || decoded === null) return { ok: false, reason: 'the v1 payment is not a JSON object' };
  const { x402Version, scheme, network, payload } = decoded as Record<string, unknown>;
  if (x402Version !== 1) return { ok: false, reason: 'the payment is not x402 version 1' };
  if (typeof scheme !== 'string' || typeof network !== 'string') return { ok: false, reason: 'the v1 payment lacks a scheme or network' };
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { ok: false, reason: 'the v1 payment lacks its payload' };
  const caip2 = v2Network(network);
  if (!caip2) return { ok: false, reason: `unknown v1 network ${network}` };
  const requirement = requirements.find((r) => r.scheme === scheme && r.network === caip2);
  if (!requirement) return { ok: false, reason: `this route takes no ${scheme} payment on ${network}` };
  return {
    ok: true,
    requirement,
    payload: { x402Version: 2, accepted: requirement, payload: payload as Record<string, unknown> },
  };
}
