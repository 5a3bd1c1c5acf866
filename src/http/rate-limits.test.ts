import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSharedDatabase } from '../../test/support/shared-database.js';
import type { Database } from '../db/client.js';
import { DEFAULT_RATE_LIMITS, RateLimits, rateLimitRules } from './rate-limits.js';

/** The shared limiter: counts in the database, so two instances (two handles, two RateLimits) count together. */
let shared: Awaited<ReturnType<typeof openSharedDatabase>>;
let first: Database;
let second: Database;

beforeAll(async () => {
  shared = await openSharedDatabase();
  ({ first, second } = shared);
});
afterAll(() => shared?.close());

const rules = rateLimitRules({ oauthRegister: 3 });

describe('RateLimits', () => {
  it('refuses the hit after N, counted over two instances, with the seconds left in the window', async () => {
    const a = new RateLimits(first, rules);
    const b = new RateLimits(second, rules);
    expect(await a.consume('oauthRegister', 'ip:192.0.2.1')).toEqual({ ok: true });
    expect(await b.consume('oauthRegister', 'ip:192.0.2.1')).toEqual({ ok: true });
    expect(await a.consume('oauthRegister', 'ip:192.0.2.1')).toEqual({ ok: true });
    const refused = await b.consume('oauthRegister', 'ip:192.0.2.1');
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.retryAfterSeconds).toBeGreaterThan(3500);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
    }
    // Another key, and the same key on another limit, have their own counts.
    expect(await b.consume('oauthRegister', 'ip:192.0.2.2')).toEqual({ ok: true });
    expect(await b.consume('oauthToken', 'ip:192.0.2.1')).toEqual({ ok: true });
  });

  it('counts concurrent hits exactly', async () => {
    const a = new RateLimits(first, rules);
    const b = new RateLimits(second, rules);
    const verdicts = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).consume('oauthRegister', 'ip:192.0.2.3')));
    expect(verdicts.filter((v) => v.ok)).toHaveLength(3);
  });

  it('gives a lease to one holder at a time on any instance, until released', async () => {
    const a = new RateLimits(first, rules);
    const b = new RateLimits(second, rules);
    const held = await a.lease('demoRunning', 'ip:192.0.2.4', 60);
    expect(held.ok).toBe(true);
    const refused = await b.lease('demoRunning', 'ip:192.0.2.4', 60);
    expect(refused).toMatchObject({ ok: false });
    if (!refused.ok) expect(refused.retryAfterSeconds).toBeGreaterThan(55);
    if (held.ok) await held.release();
    const next = await b.lease('demoRunning', 'ip:192.0.2.4', 60);
    expect(next.ok).toBe(true);
  });

  it('never refuses a limit set to 0 points, and takes keys longer than the store column', async () => {
    const off = new RateLimits(first, rateLimitRules({ oauthRegister: 0 }));
    for (let i = 0; i < 5; i++) expect(await off.consume('oauthRegister', 'ip:192.0.2.5')).toEqual({ ok: true });
    const long = `agent:${'x'.repeat(400)}`;
    const limits = new RateLimits(first, rateLimitRules({ proofFailures: 1 }));
    expect(await limits.consume('proofFailures', long)).toEqual({ ok: true });
    expect((await limits.consume('proofFailures', long)).ok).toBe(false);
  });

  it('keeps the defaults for limits the settings leave out', () => {
    expect(rules.oauthToken).toEqual(DEFAULT_RATE_LIMITS.oauthToken);
    expect(rules.oauthRegister).toEqual({ points: 3, durationSeconds: DEFAULT_RATE_LIMITS.oauthRegister.durationSeconds });
  });
});
