import type { Transport } from 'viem';
import type { SecretRedactor } from '../secrets.js';

/**
 * An EVM RPC transport whose errors never carry the endpoint's credentials: viem's HTTP errors name
 * the URL and the request, and a hosted RPC's URL holds its API key. Cleaned here, at the adapter
 * boundary, an error can travel on into a payment refusal or a log line as it is. (@solana/kit's
 * transport errors carry the status and message only, never the URL: it needs no wrapper.)
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
