import { ApiError, tokenStore } from '../../../api';

/** An API error that keeps the whole body: the payroll 422s carry `employees`, `blocked_wallets`, `available_usd`, `required_usd`. */
export class DetailedApiError extends ApiError {
  constructor(
    status: number,
    code: string,
    message: string,
    field: string | undefined,
    readonly details: Record<string, unknown>,
  ) {
    super(status, code, message, field);
  }
}

/** Like `api()` (same bearer, same errors), but a failure keeps its body in `details`. */
export async function apiDetailed<T>(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  const token = tokenStore.get();
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const response = await fetch(path, { method: init.method ?? 'GET', headers, body });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { error: text };
  }
  if (!response.ok) {
    throw new DetailedApiError(response.status, String(parsed.code ?? response.status), String(parsed.error ?? response.statusText), parsed.field as string | undefined, parsed);
  }
  return parsed as T;
}

/** A fresh Idempotency-Key for one user action (retries of the same action reuse it). */
export function newIdempotencyKey(): string {
  return globalThis.crypto?.randomUUID?.() ?? `k-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}
