import type { Logger } from '../../log.js';

/** Largest provider answer we read; a completion capped by maxTokens is far smaller. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface ProviderHttpOptions {
  timeoutMs: number;
  log?: Logger | undefined;
  /** For tests; defaults to the global fetch. */
  fetch?: typeof fetch;
}

/**
 * POSTs JSON to a provider and returns the parsed JSON answer, or null on any failure (timeout,
 * network, non-2xx, oversized or non-JSON body). The URL is the operator's configuration, never
 * user input. The timeout covers the whole exchange, body included.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: ProviderHttpOptions,
  provider: string,
): Promise<unknown> {
  const doFetch = options.fetch ?? fetch;
  const started = Date.now();
  try {
    const response = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs),
      redirect: 'error',
    });
    const text = await readCapped(response);
    if (!response.ok) {
      options.log?.warn({ provider, status: response.status, ms: Date.now() - started }, 'AI provider answered an error; using the deterministic result');
      return null;
    }
    return JSON.parse(text) as unknown;
  } catch (error) {
    options.log?.warn({ provider, reason: (error as Error).message, ms: Date.now() - started }, 'AI provider failed; using the deterministic result');
    return null;
  }
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel();
      throw new Error(`answer larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The base URL without trailing slashes. */
export const trimBase = (url: string) => url.replace(/\/+$/, '');
