import { postJson, trimBase, type ProviderHttpOptions } from './http.js';
import type { AiProvider, AiRequest } from './provider.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

interface ChatCompletionResponse {
  choices?: { message?: { content?: unknown; refusal?: unknown }; finish_reason?: string }[];
}

/**
 * OpenAI-compatible chat completions (`POST {base}/chat/completions`) over fetch. The base URL is
 * configurable, so local model servers (llama.cpp, vLLM, Ollama's /v1) work too; they may run
 * without a key (local mode only, see config.ts).
 */
export class OpenAiCompatibleProvider implements AiProvider {
  readonly name = 'openai' as const;

  constructor(
    private readonly settings: { apiKey?: string | undefined; model: string; baseUrl?: string | undefined },
    private readonly http: ProviderHttpOptions,
  ) {}

  async complete(request: AiRequest): Promise<string | null> {
    const answer = (await postJson(
      `${trimBase(this.settings.baseUrl ?? OPENAI_BASE_URL)}/chat/completions`,
      this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {},
      {
        model: this.settings.model,
        max_tokens: request.maxTokens,
        messages: [
          { role: 'system', content: request.system },
          { role: 'user', content: request.prompt },
        ],
      },
      this.http,
      this.name,
    )) as ChatCompletionResponse | null;
    const message = Array.isArray(answer?.choices) ? answer.choices[0]?.message : undefined;
    if (!message || (typeof message.refusal === 'string' && message.refusal !== '')) return null;
    const text = typeof message.content === 'string' ? message.content.trim() : '';
    return text === '' ? null : text;
  }
}
