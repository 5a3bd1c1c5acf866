import type { EmbeddedEvm } from './evm.js';
import { JsonRpcError } from './evm.js';

const INTRINSIC_GAS = 21_000n;
const MAX_CALLS = 32;

interface TempoCall {
  to?: unknown;
  data?: unknown;
  input?: unknown;
  value?: unknown;
}

/**
 * The embedded Tempo chain's JSON-RPC as Tempo clients (viem's Tempo chain, mppx) need it: a
 * plain EVM, plus `eth_estimateGas` for Tempo's call batches (`calls`, transaction type 0x76),
 * which the EVM cannot run as one transaction. A batch is estimated call by call from the
 * sender, each call's estimate less the intrinsic cost it repeats; a call that reverts fails the
 * estimate, as on Tempo.
 */
export function tempoRpc(evm: EmbeddedEvm) {
  return {
    async request(args: { method: string; params?: unknown }): Promise<unknown> {
      const [transaction, block] = (Array.isArray(args.params) ? args.params : []) as [unknown, unknown];
      const calls = (transaction as { calls?: unknown } | null)?.calls;
      if (args.method !== 'eth_estimateGas' || calls === undefined) return evm.request(args as never);
      if (!Array.isArray(calls) || calls.length === 0 || calls.length > MAX_CALLS) {
        throw new JsonRpcError(-32602, `Invalid params: calls must hold 1-${MAX_CALLS} calls`);
      }
      const from = (transaction as { from?: unknown }).from;
      let total = INTRINSIC_GAS;
      for (const call of calls as TempoCall[]) {
        const data = call.data ?? call.input;
        const value = call.value === '0x' ? '0x0' : call.value; // viem sends an empty value as "0x"
        const single = { from, to: call.to, data, ...(value === undefined ? {} : { value }) };
        const estimate = (await evm.request({ method: 'eth_estimateGas', params: block === undefined ? [single] : [single, block] } as never)) as string;
        total += BigInt(estimate) - INTRINSIC_GAS;
      }
      return `0x${total.toString(16)}`;
    },
  };
}
