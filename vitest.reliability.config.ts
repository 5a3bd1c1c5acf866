import { defineConfig } from 'vitest/config';

/**
 * The reliability suite (`npm run test:reliability`): races, replays, kill -9 crashes, fuzzing,
 * auth attacks, tenant isolation and SSRF, each reporting counts that test/reliability/reporter.ts
 * writes to RELIABILITY.md. Kept apart from `npm test` (vitest.config.ts never picks up
 * `*.reliability.ts`); every loop in it is bounded in count and time.
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.reliability.ts'],
    pool: 'forks',
    // Two cores: one file at a time keeps the races and the crash timings honest.
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
    silent: 'passed-only',
    reporters: ['default', './test/reliability/reporter.ts'],
  },
});
