import type { AiConfig } from '../../config.js';
import type { Logger } from '../../log.js';
import { AnthropicAiProvider } from './anthropic.js';
import { OfflineAiProvider } from './offline.js';
import { OpenAiCompatibleProvider } from './openai.js';
import type { AiProvider } from './provider.js';

export type { AiProvider, AiRequest } from './provider.js';
export { completeJson, extractJson } from './provider.js';
export { OfflineAiProvider } from './offline.js';

/** The configured provider (AI_PROVIDER); config.ts has already refused a hosted one without its key. */
export function createAiProvider(config: AiConfig, log?: Logger, fetchImpl?: typeof fetch): AiProvider {
  const http = { timeoutMs: config.timeoutMs, log, ...(fetchImpl ? { fetch: fetchImpl } : {}) };
  switch (config.provider) {
    case 'anthropic':
      if (!config.apiKey) throw new Error('AI_PROVIDER=anthropic needs AI_API_KEY');
      return new AnthropicAiProvider({ apiKey: config.apiKey, model: config.model, baseUrl: config.baseUrl }, http);
    case 'openai':
      return new OpenAiCompatibleProvider({ apiKey: config.apiKey, model: config.model, baseUrl: config.baseUrl }, http);
    case 'offline':
      return new OfflineAiProvider();
  }
}
