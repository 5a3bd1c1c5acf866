import type { RpcTransport } from '@solana/kit';
import type { Transport } from 'viem';
import type { SecretRedactor } from '../secrets.js';

/**
 * RPC transports whose errors never carry the endpoint's credentials: viem's and Solana's HTTP errors
 * name the URL, and a hosted RPC's URL holds its API key. Cleaned here, at the adapter boundary, an
 * error can travel on into a payment refusal or a log line as it is.
 */
export function redactedEvmTransport(transport: Transport, redactor: SecretRedactor): Transport {
  return ((options) => {
    const inner = transport(options);
    const request: typeof inner.request = async (args, requestOptions) => {
      try {
        return await inner.request(args, requestOptions);
      } catch (error) {
        throw redactor.redactError(error);
      }
    };
    return { ...inner, request };
  }) as Transport;
}

export function redactedSolanaTransport(transport: RpcTransport, redactor: SecretRedactor): RpcTransport {
  return (async (config) => {
    try {
      return await transport(config);
    } catch (error) {
      throw redactor.redactError(error);
    }
  }) as RpcTransport;
}
