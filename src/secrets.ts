/**
 * The configured secrets, and the one place that removes them from text: every log line passes
 * through `redact` (src/log.ts), and every error an outside system's client throws is cleaned before
 * it can reach an answer (`redactError`, at the adapter boundary: RPC transports, facilitator).
 */

/** One secret value and the setting it came from, which replaces it: `[TEMPO_RPC_URL]`. */
export interface Secret {
  setting: string;
  value: string;
}

// Shorter fragments (a URL's `v2`, a word of a path) are not secret and would garble every line.
const MIN_SECRET_LENGTH = 8;

/** The parts of a credentialed URL that must not be shown: the URL itself, its password, and each longer path segment or query value (API keys live there). */
export function urlSecrets(setting: string, url: string | undefined): Secret[] {
  if (!url) return [];
  const parts = [url, url.replace(/\/+$/, '')];
  try {
    const parsed = new URL(url);
    parts.push(decodeURIComponent(parsed.password), parsed.password);
    parts.push(...parsed.pathname.split('/').map(decodeURIComponent), ...[...parsed.searchParams.values()]);
  } catch {
    // not a URL: the whole text is the secret
  }
  return parts.filter((part) => part.length >= MIN_SECRET_LENGTH).map((value) => ({ setting, value }));
}

/** A plain secret setting (a key, a token); a private key is also matched without its 0x. */
export function valueSecrets(setting: string, value: string | undefined): Secret[] {
  if (!value) return [];
  const parts = [value, value.replace(/^0x/, '')];
  // A JWK's private part is secret wherever it appears on its own.
  try {
    const jwk = JSON.parse(value) as { d?: unknown };
    if (typeof jwk?.d === 'string') parts.push(jwk.d);
  } catch {
    // not JSON
  }
  return parts.filter((part) => part.length >= MIN_SECRET_LENGTH).map((v) => ({ setting, value: v }));
}

export class SecretRedactor {
  private readonly secrets: Secret[];

  constructor(secrets: readonly Secret[]) {
    // Longest first, so a URL is replaced whole before its key alone is.
    const unique = new Map(secrets.map((s) => [s.value, s]));
    this.secrets = [...unique.values()].sort((a, b) => b.value.length - a.value.length);
  }

  get isEmpty(): boolean {
    return this.secrets.length === 0;
  }

  redact(text: string): string {
    let result = text;
    for (const { setting, value } of this.secrets) {
      if (result.includes(value)) result = result.replaceAll(value, `[${setting}]`);
      // JSON-escaped forms (a secret inside a serialised log field) differ when it holds quotes or slashes.
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value && result.includes(escaped)) result = result.replaceAll(escaped, `[${setting}]`);
    }
    return result;
  }

  /** Cleans an error thrown by an outside system's client in place (message, stack, viem's url/details, causes) and returns it. */
  redactError<E>(error: E): E {
    const seen = new Set<unknown>();
    const clean = (value: unknown): void => {
      if (typeof value !== 'object' || value === null || seen.has(value)) return;
      seen.add(value);
      const record = value as Record<string, unknown>;
      for (const key of Object.getOwnPropertyNames(record)) {
        const field = record[key];
        if (typeof field === 'string') {
          const cleaned = this.redact(field);
          if (cleaned !== field) setField(record, key, cleaned);
        } else if (Array.isArray(field)) {
          const cleaned = field.map((item) => (typeof item === 'string' ? this.redact(item) : item));
          if (cleaned.some((item, i) => item !== field[i])) setField(record, key, cleaned);
          field.forEach(clean);
        } else if (key === 'cause' || field instanceof Error) {
          clean(field);
        }
      }
    };
    clean(error);
    return error;
  }
}

function setField(record: Record<string, unknown>, key: string, value: unknown): void {
  try {
    Object.defineProperty(record, key, { value, writable: true, configurable: true, enumerable: Object.prototype.propertyIsEnumerable.call(record, key) });
  } catch {
    // a frozen field: nothing we can do, the logger still redacts it
  }
}
