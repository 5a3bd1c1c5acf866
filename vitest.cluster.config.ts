import { defineConfig } from 'vitest/config';

/**
 * The multi-instance test (`npm run test:cluster`): PostgreSQL (TEST_DATABASE_URL, default the local
 * server), one devnet process, three service processes and a round-robin proxy. Its figures go to
 * RELIABILITY.md's "Several instances" section (test/reliability/reporter.ts).
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.cluster.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 300_000,
    silent: 'passed-only',
    reporters: ['default', ['./test/reliability/reporter.ts', { suite: 'cluster' }]],
  },
});
