import { postJson, trimBase, type ProviderHttpOptions } from './http.js';
import type { AiProvider, AiRequest } from './provider.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

interface MessagesResponse {
  content?: { type?: string; text?: string }[];
  stop_reason?: string;
}

/** Anthropic's Messages API (`POST {base}/v1/messages`) over fetch. */
export class AnthropicAiProvider implements AiProvider {
  readonly name = 'anthropic' as const;

  constructor(
    private readonly settings: { apiKey: string; model: string; baseUrl?: string | undefined },
    private readonly http: ProviderHttpOptions,
  ) {}

  async complete(request: AiRequest): Promise<string | null> {
    const answer = (await postJson(
      `${trimBase(this.settings.baseUrl ?? ANTHROPIC_BASE_URL)}/v1/messages`,
      { 'x-api-key': this.settings.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      {
        model: this.settings.model,
        max_tokens: request.maxTokens,
        system: request.system,
        messages: [{ role: 'user', content: request.prompt }],
      },
      this.http,
      this.name,
    )) as MessagesResponse | null;
    if (!answer || !Array.isArray(answer.content) || answer.stop_reason === 'refusal') return null;
    const text = answer.content
      .filter((block) => block?.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text)
      .join('')
      .trim();
    return text === '' ? null : text;
  }
}
