import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, ERRORS, badRequest } from './errors.js';

describe('error catalog', () => {
  it('gives each AppError its catalogued status', () => {
    expect(new AppError('RATE_LIMITED', 'slow down').status).toBe(429);
    expect(badRequest('amount', 'must be positive')).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: { field: 'amount' } });
  });

  it("lists every code the source answers with, also those written outside AppError (the payment gate's 402s, spend gates, proofs)", () => {
    const sources = execFileSync('git', ['ls-files', 'src'], { encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && file !== 'src/errors.ts');
    const written = new Set<string>();
    for (const file of sources) {
      const text = fs.readFileSync(file, 'utf8');
      for (const [, code] of text.matchAll(/\bcode: '([A-Z][A-Z0-9_]{2,})'/g)) written.add(code!);
      for (const [, code] of text.matchAll(/paymentRequired\([^)]*?'([A-Z][A-Z0-9_]{2,})'/g)) written.add(code!);
    }
    // Not error answers: compliance reasons and payroll run warnings (inside a 200), a Node DNS error code, the devnet's own 500.
    const notAnswers = new Set(['SANCTIONED', 'EMPLOYER_BLOCKLIST', 'TIP403_UNAUTHORIZED', 'PERIOD_ALREADY_PAID', 'RECENTLY_PAID', 'AMOUNT_OUTLIER', 'ENOTFOUND', 'INTERNAL']);
    expect([...written].filter((code) => !notAnswers.has(code) && !(code in ERRORS))).toEqual([]);
    expect(written.size).toBeGreaterThan(10);
  });
});
