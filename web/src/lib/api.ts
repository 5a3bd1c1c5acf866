import type { components } from './api-types';

/** The API's error body: `{error, code, field?, ...details}` (docs/api.md "Conventions"), all of it kept in `details`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'payroll.token';

export const tokenStore = {
  get: (): string | null => localStorage.getItem(TOKEN_KEY),
  set: (token: string) => localStorage.setItem(TOKEN_KEY, token),
  clear: () => localStorage.removeItem(TOKEN_KEY),
};

/** A non-2xx answer as an ApiError, from its parsed body. */
function errorOf(response: Response, parsed: Record<string, unknown>): ApiError {
  return new ApiError(response.status, String(parsed.code ?? response.status), String(parsed.error ?? response.statusText), parsed.field as string | undefined, parsed);
}

/** JSON over the API with the signed-in user's bearer; throws ApiError for any non-2xx answer. */
export async function api<T>(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
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
  let parsed: Record<string, unknown>;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { error: text };
  }
  if (!response.ok) {
    throw errorOf(response, parsed);
  }
  return parsed as T;
}

/**
 * Saves a file the API serves (a payslip PDF) under the name its Content-Disposition gives: the
 * bearer cannot ride on a plain link, so it is fetched, then handed to the browser as an object URL.
 */
export async function download(path: string, fallbackName: string): Promise<void> {
  const token = tokenStore.get();
  const response = await fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!response.ok) {
    const parsed = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    throw errorOf(response, parsed);
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

/** A fresh Idempotency-Key for one user action (retries of the same action reuse it). */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

type Schemas = components['schemas'];

// The response shapes the pages read, from the API's own schemas (lib/api-types.ts, generated: `npm run gen:api-types`).
export type Employee = Schemas['Employee'];
export type Team = Schemas['Team'];
export type Employer = Schemas['Employer'];
export type PayrollRun = Schemas['PayrollRun'];
export type PreparedPayrollRun = Schemas['PreparedPayrollRun'];
export type Runs = Schemas['PayrollRuns'];
export type Transaction = Schemas['PayrollTransaction'];
export type Transactions = Schemas['PayrollTransactions'];
export type Treasury = Schemas['EmployerTreasury'];
export type YieldSummary = Schemas['EmployerYieldSummary'];
export type ComplianceSummary = Schemas['ComplianceOverview'];
export type Payslip = Schemas['EmployeePayslip'];
export type DevNetwork = Schemas['DevChains']['networks'][number];

/** Any named shape of the API's document, for the pages' one-off reads. */
export type Schema<Name extends keyof Schemas> = Schemas[Name];
