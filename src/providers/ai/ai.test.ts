import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { ConfigError, loadConfig, type AiConfig } from '../../config.js';
import { AnthropicAiProvider } from './anthropic.js';
import { completeJson, createAiProvider, extractJson, OfflineAiProvider, type AiProvider } from './index.js';
import { OpenAiCompatibleProvider } from './openai.js';

/**
 * The AI adapters against a local stub server (no real network): what they send, what they read,
 * and that every failure (HTTP error, garbage, timeout, refusal, oversized or closed port) is a
 * null answer, so callers keep their deterministic result.
 */
interface Seen {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}
let stub: LoopbackServer;
let seen: Seen[] = [];
/** What the stub answers next, by path suffix. */
let behaviour: 'ok' | 'error' | 'garbage' | 'slow' | 'refusal' | 'huge' | 'empty' = 'ok';

beforeAll(async () => {
  stub = await serveOnLoopback(async (request) => {
    const url = new URL(request.url);
    seen.push({ path: url.pathname, headers: Object.fromEntries(request.headers), body: (await request.json()) as Record<string, unknown> });
    const anthropic = url.pathname.endsWith('/v1/messages');
    if (behaviour === 'error') return Response.json({ error: { message: 'overloaded' } }, { status: 529 });
    if (behaviour === 'garbage') return new Response('<html>not json', { headers: { 'content-type': 'text/html' } });
    if (behaviour === 'slow') await new Promise((r) => setTimeout(r, 1_000));
    if (behaviour === 'huge') return new Response('x'.repeat(2 * 1024 * 1024));
    if (anthropic) {
      if (behaviour === 'refusal') return Response.json({ content: [], stop_reason: 'refusal' });
      const text = behaviour === 'empty' ? '' : 'Hello from the stub';
      return Response.json({ content: [{ type: 'text', text }], stop_reason: 'end_turn' });
    }
    if (behaviour === 'refusal') return Response.json({ choices: [{ message: { content: null, refusal: 'no' } }] });
    return Response.json({ choices: [{ message: { content: behaviour === 'empty' ? '  ' : 'Hello from the stub' } }] });
  });
});
afterAll(() => stub.close());

const config = (provider: AiConfig['provider'], overrides: Partial<AiConfig> = {}): AiConfig => ({
  provider,
  apiKey: 'test-key',
  baseUrl: provider === 'openai' ? `${stub.url}/v1` : stub.url,
  model: 'stub-model',
  timeoutMs: 300,
  ...overrides,
});
const request = { system: 'Be brief.', prompt: 'Say hello.', maxTokens: 50 };

async function answer(provider: AiProvider, mode: typeof behaviour) {
  behaviour = mode;
  seen = [];
  return provider.complete(request);
}

describe('AI provider adapters', () => {
  it('the offline provider never answers and never touches the network', async () => {
    const offline = createAiProvider(config('offline'));
    expect(offline).toBeInstanceOf(OfflineAiProvider);
    expect(await answer(offline, 'ok')).toBeNull();
    expect(seen).toHaveLength(0);
  });

  it('Anthropic: Messages API with the key, version, model, system and token cap', async () => {
    const anthropic = createAiProvider(config('anthropic'));
    expect(anthropic).toBeInstanceOf(AnthropicAiProvider);
    expect(await answer(anthropic, 'ok')).toBe('Hello from the stub');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/v1/messages');
    expect(seen[0]!.headers).toMatchObject({ 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    expect(seen[0]!.body).toEqual({ model: 'stub-model', max_tokens: 50, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello.' }] });
  });

  it('OpenAI-compatible: chat completions at the configured base URL, bearer only when there is a key', async () => {
    const openai = createAiProvider(config('openai'));
    expect(openai).toBeInstanceOf(OpenAiCompatibleProvider);
    expect(await answer(openai, 'ok')).toBe('Hello from the stub');
    expect(seen[0]!.path).toBe('/v1/chat/completions');
    expect(seen[0]!.headers.authorization).toBe('Bearer test-key');
    expect(seen[0]!.body).toEqual({
      model: 'stub-model',
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello.' },
      ],
    });
    const keyless = createAiProvider(config('openai', { apiKey: undefined, baseUrl: `${stub.url}/v1/` }));
    expect(await answer(keyless, 'ok')).toBe('Hello from the stub');
    expect(seen[0]!.path).toBe('/v1/chat/completions');
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it.each(['error', 'garbage', 'slow', 'refusal', 'huge', 'empty'] as const)('answers null, never throws, when the provider is %s', async (mode) => {
    for (const provider of [createAiProvider(config('anthropic')), createAiProvider(config('openai'))]) {
      const started = Date.now();
      expect(await answer(provider, mode)).toBeNull();
      expect(Date.now() - started).toBeLessThan(900); // the timeout (300 ms) cut the slow answer short
    }
  });

  it('answers null when nothing listens at the base URL', async () => {
    const closed = await serveOnLoopback(() => new Response('bye'));
    await closed.close();
    expect(await createAiProvider(config('openai', { baseUrl: closed.url })).complete(request)).toBeNull();
    expect(await createAiProvider(config('anthropic', { baseUrl: closed.url })).complete(request)).toBeNull();
  });

  it('completeJson reads bare or fenced JSON, validates it, and turns anything else into null', async () => {
    const fixed = (text: string | null): AiProvider => ({ name: 'openai', complete: () => Promise.resolve(text) });
    const schema = z.object({ answer: z.number() });
    expect(await completeJson(fixed('{"answer": 42}'), request, schema)).toEqual({ answer: 42 });
    expect(await completeJson(fixed('Sure!\n```json\n{"answer": 7}\n```'), request, schema)).toEqual({ answer: 7 });
    expect(await completeJson(fixed('{"answer": "many"}'), request, schema)).toBeNull();
    expect(await completeJson(fixed('no json here'), request, schema)).toBeNull();
    expect(await completeJson(fixed(null), request, schema)).toBeNull();
    const throwing: AiProvider = { name: 'openai', complete: () => Promise.reject(new Error('boom')) };
    expect(await completeJson(throwing, request, schema)).toBeNull();
    expect(extractJson('{"a": [1, }')).toBeNull();
  });
});

describe('AI settings', () => {
  const LIVE = {
    DATABASE_URL: 'postgres://db.example/payroll',
    PUBLIC_BASE_URL: 'https://pay.example/',
    IDP_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
    IDP_ISSUER: 'https://idp.example/',
    IDP_AUDIENCE: 'payroll',
    TEMPO_RPC_URL: 'https://rpc.tempo.example',
    BASE_RPC_URL: 'https://rpc.base.example',
    SOLANA_RPC_URL: 'https://rpc.solana.example',
    X402_FACILITATOR_URL: 'https://facilitator.example',
    MPP_SECRET_KEY: 'k'.repeat(32),
    SMTP_URL: 'smtp://mail.example',
    EVM_SERVICE_KEY: `0x${'11'.repeat(32)}`,
    SOLANA_SERVICE_KEY: JSON.stringify([...Array(32).fill(7), ...Array(32).fill(9)]),
    TEMPO_CONTRACTS: JSON.stringify({
      payrollTreasury: `0x${'01'.repeat(20)}`,
      streamVesting: `0x${'02'.repeat(20)}`,
      yieldRouter: `0x${'03'.repeat(20)}`,
      agentIdentityRegistry: `0x${'04'.repeat(20)}`,
      agentReputationRegistry: `0x${'05'.repeat(20)}`,
    }),
  };

  it('defaults to the offline provider, in local and live mode', () => {
    expect(loadConfig({}).ai).toEqual({ provider: 'offline', apiKey: undefined, baseUrl: undefined, model: 'offline', timeoutMs: 10_000 });
    expect(loadConfig({ AI_PROVIDER: '' }).ai.provider).toBe('offline');
    expect(loadConfig(LIVE).ai.provider).toBe('offline');
  });

  it('live mode with a hosted provider and no key refuses to start, naming AI_API_KEY with the other missing settings', () => {
    let error: unknown;
    try {
      loadConfig({ ...LIVE, AI_PROVIDER: 'anthropic', SMTP_URL: '' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/live mode is missing required settings: .*SMTP_URL.*AI_API_KEY/);
    expect(() => loadConfig({ ...LIVE, AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:8080/v1' })).toThrow(/AI_API_KEY/);
    const live = loadConfig({ ...LIVE, AI_PROVIDER: 'anthropic', AI_API_KEY: 'sk-ant', AI_TIMEOUT_MS: '4000' });
    expect(live.ai).toEqual({ provider: 'anthropic', apiKey: 'sk-ant', baseUrl: undefined, model: 'claude-sonnet-4-5', timeoutMs: 4000 });
  });

  it('local mode: a keyless provider only for an OpenAI-compatible local model server', () => {
    expect(() => loadConfig({ AI_PROVIDER: 'anthropic' })).toThrow(/AI_API_KEY: required with AI_PROVIDER=anthropic/);
    expect(() => loadConfig({ AI_PROVIDER: 'openai' })).toThrow(/AI_API_KEY/);
    const local = loadConfig({ AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:11434/v1', AI_MODEL: 'llama3.2' });
    expect(local.ai).toMatchObject({ provider: 'openai', apiKey: undefined, baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
    expect(loadConfig({ AI_PROVIDER: 'openai', AI_API_KEY: 'sk' }).ai.model).toBe('gpt-4o-mini');
  });

  it('names invalid AI settings', () => {
    expect(() => loadConfig({ AI_PROVIDER: 'gemini' })).toThrow(/AI_PROVIDER/);
    expect(() => loadConfig({ AI_TIMEOUT_MS: '5' })).toThrow(/AI_TIMEOUT_MS/);
    expect(() => loadConfig({ AI_BASE_URL: 'not a url', AI_PROVIDER: 'openai' })).toThrow(/AI_BASE_URL/);
  });
});
