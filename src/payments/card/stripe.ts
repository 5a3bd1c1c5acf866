import { setTimeout as sleep } from 'node:timers/promises';
import { stripe } from 'mppx/server';
import type { CardRail } from '../mpp/rail.js';

/**
 * Live card fallback: mppx's stripe method charges through our Stripe client, refunds go to
 * Stripe's API directly. Every call is bounded (`timeoutMs` per attempt) and retried on network
 * errors, 429 and 5xx (or when Stripe says `Stripe-Should-Retry: true`) with the SAME idempotency
 * key, so a retry replays the first attempt's effect instead of charging or refunding again.
 */

export interface StripeOptions {
  secretKey: string;
  networkId: string;
  /** Per attempt, answer body included. */
  timeoutMs: number;
  /** Attempts in all (1: no retry). */
  maxAttempts: number;
  /** Default https://api.stripe.com (tests: a local server that answers like it). */
  apiBaseUrl?: string;
  /** First retry's wait, doubled for each retry after (default 250 ms). */
  backoffMs?: number;
}

interface StripeAnswer {
  status: number;
  body: Record<string, unknown>;
  /** Stripe answered this key with the result of an earlier request (`idempotent-replayed`). */
  replayed: boolean;
}

const RETRYABLE = (status: number) => status === 429 || status >= 500;

/** A Stripe API error as mppx and our logs see it: status, code and Stripe's message, never the key. */
class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'StripeApiError';
  }
}

/** POSTs a form to Stripe with an idempotency key, retried as the module comment says. */
async function post(options: StripeOptions, path: string, form: URLSearchParams, idempotencyKey: string, headers: Record<string, string> = {}): Promise<StripeAnswer> {
  const backoffMs = options.backoffMs ?? 250;
  let lastFailure = '';
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    if (attempt > 1) await sleep(backoffMs * 2 ** (attempt - 2) * (0.5 + Math.random() / 2));
    let answer: StripeAnswer & { retry: boolean };
    try {
      answer = await once(options, path, form, { ...headers, 'Idempotency-Key': idempotencyKey });
    } catch (error) {
      // No answer (timeout, reset): the request may have been done; the same key finds out.
      lastFailure = error instanceof Error && error.name === 'TimeoutError' ? `timed out after ${options.timeoutMs} ms` : `failed (${(error as Error).message})`;
      continue;
    }
    if (answer.status < 300) return { ...answer, replayed: answer.replayed && attempt === 1 };
    const message = stripeMessage(answer.body);
    if (!answer.retry) throw new StripeApiError(answer.status, stripeCode(answer.body), `${answer.status}: ${message}`);
    lastFailure = `answered ${answer.status}: ${message}`;
  }
  throw new Error(`${lastFailure} (gave up after ${options.maxAttempts} attempt${options.maxAttempts === 1 ? '' : 's'})`);
}

async function once(options: StripeOptions, path: string, form: URLSearchParams, headers: Record<string, string>): Promise<StripeAnswer & { retry: boolean }> {
  const response = await fetch(`${options.apiBaseUrl ?? 'https://api.stripe.com'}${path}`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${options.secretKey}:`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: form,
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { error: { message: text.slice(0, 200) } };
  }
  const advice = response.headers.get('stripe-should-retry');
  return {
    status: response.status,
    body,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    retry: advice === null ? RETRYABLE(response.status) : advice === 'true',
  };
}

const stripeError = (body: Record<string, unknown>) => (body.error ?? {}) as { message?: string; code?: string };
const stripeMessage = (body: Record<string, unknown>) => stripeError(body).message ?? 'no message';
const stripeCode = (body: Record<string, unknown>) => stripeError(body).code;

/** Stripe's form encoding of nested parameters: `a[b]=c`, `list[0]=x`. */
function toForm(params: Record<string, unknown>, form = new URLSearchParams(), prefix = ''): URLSearchParams {
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const name = prefix ? `${prefix}[${key}]` : key;
    if (value !== null && typeof value === 'object') toForm(value as Record<string, unknown>, form, name);
    else form.append(name, String(value));
  }
  return form;
}

/**
 * The duck-typed Stripe SDK client mppx's stripe method takes (`paymentIntents.create`). A replay
 * caused by our own retry is reported as a fresh answer: mppx refuses a replayed PaymentIntent as
 * already processed, which would turn a charge whose first answer was lost into a refusal.
 */
export function stripeApiClient(options: StripeOptions) {
  return {
    paymentIntents: {
      async create(params: Record<string, unknown>, request: { idempotencyKey?: string; apiVersion?: string; stripeAccount?: string } = {}) {
        if (!request.idempotencyKey) throw new Error('a PaymentIntent needs an idempotency key');
        const headers: Record<string, string> = {};
        if (request.apiVersion) headers['Stripe-Version'] = request.apiVersion;
        if (request.stripeAccount) headers['Stripe-Account'] = request.stripeAccount;
        const answer = await post(options, '/v1/payment_intents', toForm(params), request.idempotencyKey, headers);
        const replayHeader: Record<string, string> = answer.replayed ? { 'idempotent-replayed': 'true' } : {};
        return { ...answer.body, id: String(answer.body.id), status: String(answer.body.status), lastResponse: { headers: replayHeader } };
      },
    },
  };
}

export function stripeCardRail(options: StripeOptions): CardRail {
  return {
    method: stripe.charge({ client: stripeApiClient(options), networkId: options.networkId, paymentMethodTypes: ['card'] }) as never,
    networkId: options.networkId,
    async refund(paymentIntentId, part) {
      const form = new URLSearchParams({ payment_intent: paymentIntentId, ...(part && { amount: part.cents.toString() }) });
      try {
        // Keyed by the charge (or the part): every attempt, and every later refund job run, is the same refund.
        await post(options, '/v1/refunds', form, part?.key ?? `refund_${paymentIntentId}`);
      } catch (error) {
        // Refunded already (after the key's 24 hours, or from the dashboard): nothing left to give back.
        if (error instanceof StripeApiError && error.code === 'charge_already_refunded') return;
        throw new Error(`Stripe refund of ${paymentIntentId} ${(error as Error).message}`, { cause: error });
      }
    },
  };
}
