import type { AiProvider } from './provider.js';

/**
 * Local mode's provider: no network and no model. It never answers, so every caller serves its
 * deterministic result, the same on every run.
 */
export class OfflineAiProvider implements AiProvider {
  readonly name = 'offline' as const;

  complete(): Promise<string | null> {
    return Promise.resolve(null);
  }
}
