import { Writable } from 'node:stream';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactedEvmTransport } from './chains/redacted-transports.js';
import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { SecretRedactor } from './secrets.js';
import { serveOnLoopback } from '../test/support/http.js';

const RPC_KEY = 'SECRET_ALCHEMY_KEY_0123456789abcdef';
const EVM_KEY = `0x${'ab'.repeat(32)}`;
const DB_PASSWORD = 'db-pass-9f8e7d6c';

/** Everything an error could show: its text, stack, own fields and causes. */
function everythingIn(error: unknown): string {
  const seen = new Set<unknown>();
  const walk = (value: unknown): string => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return String(value);
    seen.add(value);
    return Object.getOwnPropertyNames(value).map((key) => `${key}=${walk((value as Record<string, unknown>)[key])}`).join('\n');
  };
  return `${String(error)}\n${(error as Error).stack}\n${walk(error)}`;
}

describe('secrets never shown', () => {
  let server: { url: string; close(): Promise<void> };
  let redactor: SecretRedactor;
  let rpcUrl: string;

  beforeAll(async () => {
    // An RPC that refuses every call and echoes the path it was called on, as hosted RPCs do.
    server = await serveOnLoopback(async (request) => new Response(`unauthorized: ${new URL(request.url).pathname}`, { status: 401 }));
    rpcUrl = `${server.url}/v2/${RPC_KEY}`;
    redactor = new SecretRedactor(
      loadConfig({
        APP_MODE: 'local',
        TEMPO_RPC_URL: rpcUrl,
        EVM_SERVICE_KEY: EVM_KEY,
        DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.internal:5432/payroll`,
      }).secrets,
    );
  });
  afterAll(() => server.close());

  it("an EVM RPC's error names the setting, never the URL's key", async () => {
    const client = createPublicClient({ transport: redactedEvmTransport(http(rpcUrl, { retryCount: 0 }), redactor) });
    const error = await client.getBlockNumber().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const shown = everythingIn(error);
    expect(shown).not.toContain(RPC_KEY);
    expect(shown).toContain('[TEMPO_RPC_URL]');
  });

  it('log lines show no configured secret, wherever it sits (message, error, nested field, headers)', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()) });
    const log = createLogger('info', redactor, sink);
    log.error({ err: new Error(`request to ${rpcUrl} failed`) }, 'rpc down');
    log.warn({ context: { url: `postgres://app:${DB_PASSWORD}@db.internal:5432/payroll`, key: EVM_KEY.slice(2) } }, `signing with ${EVM_KEY}`);
    log.info({ request: { headers: { authorization: 'Bearer some-token-value-123' } } }, 'outgoing');
    const text = lines.join('');
    expect(lines).toHaveLength(3);
    for (const secret of [RPC_KEY, DB_PASSWORD, EVM_KEY.slice(2), 'some-token-value-123']) expect(text).not.toContain(secret);
    expect(text).toContain('[TEMPO_RPC_URL]');
    expect(text).toContain('[EVM_SERVICE_KEY]');
  });

  it('leaves text without secrets alone, and short URL parts are not treated as secrets', () => {
    expect(redactor.redact('engine postgres on db.internal, path /v2/ and port 5432')).toBe('engine postgres on db.internal, path /v2/ and port 5432');
  });
});
