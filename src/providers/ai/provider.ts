import type { z } from 'zod';

/** One completion request: a system prompt, the user prompt, and a cap on the answer's length. */
export interface AiRequest {
  system: string;
  prompt: string;
  /** Upper bound on the answer's tokens. */
  maxTokens: number;
}

export type AiProviderName = 'offline' | 'anthropic' | 'openai';

/**
 * The AI provider port (ARCHITECTURE.md, stack row "AI"). Callers always hold a deterministic
 * answer of their own: the provider may only improve on it, so `complete` never throws. It
 * answers null when there is no model (offline), on a timeout, an HTTP error, a refusal or an
 * empty answer, and the caller keeps its deterministic result.
 */
export interface AiProvider {
  readonly name: AiProviderName;
  /** The model's text, or null when there is none (see above). */
  complete(request: AiRequest): Promise<string | null>;
}

/** The JSON object in a model's answer (bare, or in a ```json fence), or null. */
export function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  const candidate = (fenced?.[1] ?? text).trim();
  const start = candidate.indexOf('{');
  const end = candidate.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    return JSON.parse(candidate.slice(start, end + 1)) as unknown;
  } catch {
    return null;
  }
}

/**
 * A completion parsed as JSON and validated by `schema`; null when the provider has no answer or
 * the answer does not validate, so the caller falls back to its deterministic result.
 */
export async function completeJson<T extends z.ZodType>(provider: AiProvider, request: AiRequest, schema: T): Promise<z.infer<T> | null> {
  let text: string | null;
  try {
    text = await provider.complete(request);
  } catch {
    // Adapters never throw; a custom one that does still only loses its rewording.
    return null;
  }
  if (text === null) return null;
  const parsed = schema.safeParse(extractJson(text));
  return parsed.success ? parsed.data : null;
}
