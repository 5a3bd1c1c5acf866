import { createHash } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Database } from '../db/client.js';
import type { AppEnv } from './context.js';
import { AppError } from '../errors.js';

/**
 * Abuse limits shared by every instance: each counter is a row of `rate_limits` (rate-limiter-flexible's
 * PostgreSQL store; one atomic upsert per hit), so N instances behind a load balancer allow what one
 * would. A limit is a fixed window: `points` hits per `durationSeconds`; `points: 0` turns it off.
 */
export interface LimitRule {
  points: number;
  durationSeconds: number;
}

export type LimitName =
  /** POST /api/oauth/register, per client IP. */
  | 'oauthRegister'
  /** GET and POST /api/oauth/authorize (the consent page and the decision), per client IP. */
  | 'oauthAuthorize'
  /** POST /api/oauth/token, per client IP and, separately, per client_id. */
  | 'oauthToken'
  /** Refused agent identity proofs, per agent identifier. */
  | 'proofFailures'
  /** POST /api/demo/run-agent, per client IP. */
  | 'demoRuns'
  /** POST /api/employees/{id}/advance (free, from the portal), per employee: each claim is a transaction we pay gas for. */
  | 'freeAdvances';

export type RateLimitRules = Record<LimitName, LimitRule>;

export const DEFAULT_RATE_LIMITS: RateLimitRules = {
  oauthRegister: { points: 30, durationSeconds: 3600 },
  oauthAuthorize: { points: 120, durationSeconds: 60 },
  oauthToken: { points: 60, durationSeconds: 60 },
  proofFailures: { points: 20, durationSeconds: 900 },
  demoRuns: { points: 3, durationSeconds: 600 },
  freeAdvances: { points: 1, durationSeconds: 60 },
};

/** The defaults with the points the settings override (Config.rateLimits). */
export function rateLimitRules(points: Partial<Record<LimitName, number>>): RateLimitRules {
  const rules = { ...DEFAULT_RATE_LIMITS };
  for (const [name, value] of Object.entries(points) as [LimitName, number][]) rules[name] = { ...rules[name], points: value };
  return rules;
}

export type Verdict = { ok: true } | { ok: false; retryAfterSeconds: number };

/** The store's key column is varchar(255): longer keys (agent identifiers can be URIs) are hashed. */
const MAX_KEY = 200;

export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterPostgres>();

  constructor(
    private readonly database: Database,
    readonly rules: RateLimitRules = DEFAULT_RATE_LIMITS,
  ) {}

  /** Counts one hit of `key` against `name`; refused once the window's points are used up. */
  async consume(name: LimitName, key: string): Promise<Verdict> {
    const rule = this.rules[name];
    if (rule.points === 0) return { ok: true };
    return this.hit(this.limiter(name, rule), storeKey(key));
  }

  /**
   * A lease that at most one holder has at a time, on any instance, until it is released or
   * `seconds` pass (a crashed holder cannot keep it).
   */
  async lease(name: string, key: string, seconds: number): Promise<{ ok: true; release(): Promise<void> } | { ok: false; retryAfterSeconds: number }> {
    const limiter = this.limiter(`lease-${name}`, { points: 1, durationSeconds: seconds });
    const id = storeKey(key);
    const verdict = await this.hit(limiter, id);
    if (!verdict.ok) return verdict;
    let released = false;
    return {
      ok: true,
      release: async () => {
        if (released) return;
        released = true;
        await limiter.delete(id);
      },
    };
  }

  private async hit(limiter: RateLimiterPostgres, key: string): Promise<Verdict> {
    try {
      await limiter.consume(key, 1);
      return { ok: true };
    } catch (refusal) {
      // The library rejects with a RateLimiterRes when over the limit, with an Error when the store failed.
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) };
    }
  }

  private limiter(name: string, rule: LimitRule): RateLimiterPostgres {
    let limiter = this.limiters.get(name);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: unnamedStatements(this.database),
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true, // by our migrations
        keyPrefix: name,
        points: rule.points,
        duration: rule.durationSeconds,
        // One sweeper of expired rows per instance is enough.
        clearExpiredByTimeout: this.limiters.size === 0,
      });
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}

/**
 * The library names its prepared statements; on PGlite every socket connection shares one session,
 * so a name prepared by one connection collides on the next (ARCHITECTURE.md). Unnamed statements
 * cost one parse per query on PostgreSQL too, nothing more.
 */
function unnamedStatements(database: Database) {
  return {
    query: (query: { text: string; values?: unknown[] }) => database.pool.query({ text: query.text, values: query.values }),
  };
}

function storeKey(key: string): string {
  return key.length <= MAX_KEY ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** The project's 429: `{ error, code: 'RATE_LIMITED' }` with `Retry-After` in seconds. */
export function rateLimited(message: string, retryAfterSeconds: number): AppError {
  return new AppError('RATE_LIMITED', `${message}; try again in ${retryAfterSeconds} s.`, {}, { 'Retry-After': String(retryAfterSeconds) });
}

/** Requests whose socket address is unknown (no Node server behind the app) share one key. */
const UNKNOWN_CLIENT = 'unknown';

/**
 * The client address limits count by: the socket's peer address. X-Forwarded-For is believed only
 * with `trustProxy`, and then only its last entry (the one our proxy appended; earlier ones are the
 * client's to write).
 */
export function clientKey(c: Context<AppEnv>, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header('X-Forwarded-For')?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  try {
    return getConnInfo(c).remote.address ?? UNKNOWN_CLIENT;
  } catch {
    // Not behind @hono/node-server (app.request in tests, other runtimes).
    return UNKNOWN_CLIENT;
  }
}
