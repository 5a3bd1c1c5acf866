import type { Credential, Receipt } from 'mppx';
import { tempo } from 'mppx/server';
import { TxEnvelopeTempo } from 'ox/tempo';
import { getAddress, type Address, type Hex, type PublicClient } from 'viem';
import type { EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import type { SettlementOutcome } from '../gate.js';
import { createEmbeddedTempoCharge, SettlementRefusedError } from './embedded-tempo-charge.js';
import { receiptHeader, type TempoChargeRail } from './rail.js';

/** Local rail A: verified without moving money, settled on the embedded Tempo chain after the handler. */
export function embeddedTempoRail(chain: EmbeddedEvmChain): TempoChargeRail {
  const charge = createEmbeddedTempoCharge({ chain });
  return {
    method: charge.method,
    network: `eip155:${chain.chain.id}`,
    currency: getAddress(chain.contracts.stablecoin!),
    payerOf: (credential) => charge.payerOf(credential as never),
    async settle(credential): Promise<SettlementOutcome> {
      try {
        const settled = await charge.settle(credential as never);
        const receipt: Receipt.Receipt = { method: 'tempo', status: 'success', timestamp: new Date().toISOString(), reference: settled.txHash };
        return { state: 'settled', reference: settled.txHash, payer: settled.payer, headers: receiptHeader(receipt), receipt: { ...receipt, txHashes: settled.txHashes } };
      } catch (error) {
        if (error instanceof SettlementRefusedError) return { state: 'refused', reason: error.reason };
        return { state: 'unknown', reason: error instanceof Error ? error.message : String(error), reference: null };
      }
    },
  };
}

/**
 * Live rail A: mppx's own `tempo.charge`, unchanged. It settles while it verifies (it broadcasts a
 * signed transaction, or finds a pushed one on chain), so `settle` only reports what happened.
 */
export function liveTempoRail(options: { client: PublicClient; currency: Address; recipient: Address }): TempoChargeRail {
  const method = tempo.charge({ currency: options.currency, recipient: options.recipient, getClient: () => options.client } as never);
  return {
    method: method as never,
    network: `eip155:${options.client.chain?.id ?? 4217}`,
    currency: options.currency,
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
    settle: async (_credential, verified) => ({
      state: 'settled',
      reference: verified.reference,
      payer: null,
      headers: receiptHeader(verified),
      receipt: { ...verified },
    }),
  };
}
