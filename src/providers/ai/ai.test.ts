import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import type { AiConfig } from '../../config.js';
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
