import type { Credential, Method } from 'mppx';
import { tempo } from 'mppx/server';
import { TxEnvelopeTempo } from 'ox/tempo';
import { getAddress, type Address, type Hex, type PublicClient } from 'viem';
import type { EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import { createEmbeddedTempoCharge } from './embedded-tempo-charge.js';
import type { TempoChargeRail } from './rail.js';

/** Local rail A: our method on mppx's charge schema, settling on the embedded Tempo chain. */
export function embeddedTempoRail(chain: EmbeddedEvmChain): TempoChargeRail {
  return {
    method: createEmbeddedTempoCharge({ chain }).method,
    network: `eip155:${chain.chain.id}`,
    currency: getAddress(chain.contracts.stablecoin!),
    client: chain.connection.publicClient,
    // Our validate names the payer it checked.
    payerOf: async (_credential, validation) => (validation.details as { payer: Address }).payer,
  };
}

/** Live rail A: mppx's own `tempo.charge`, unchanged (its validate moves nothing; broadcast pays). */
export function liveTempoRail(options: { client: PublicClient; currency: Address; recipient: Address }): TempoChargeRail {
  const method = tempo.charge({ currency: options.currency, recipient: options.recipient, getClient: () => options.client } as never);
  return {
    method: method as Method.AnyServer,
    network: `eip155:${options.client.chain?.id ?? 4217}`,
    currency: options.currency,
    client: options.client,
    // About a day of Tempo blocks: the reconciler looks within minutes of a payment.
    lookbackBlocks: 200_000n,
    async payerOf(credential: Credential.Credential) {
      const source = /^did:pkh:eip155:\d+:(0x[0-9a-fA-F]{40})$/.exec(credential.source ?? '')?.[1];
      if (source) return getAddress(source);
      const payload = credential.payload as { type: string; signature?: Hex; hash?: Hex };
      if (payload.type === 'transaction' && payload.signature) {
        const from = TxEnvelopeTempo.deserialize(payload.signature as TxEnvelopeTempo.Serialized).from;
        if (from) return getAddress(from);
      }
      if (payload.type === 'hash' && payload.hash) return (await options.client.getTransaction({ hash: payload.hash })).from;
      throw new Error('the credential names no payer');
    },
  };
}
