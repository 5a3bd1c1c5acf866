import { defineConfig } from 'vitest/config';

/**
 * Browser tests (`npm run test:web`): Chromium through playwright-core against the real server in
 * local mode. Kept apart from `npm test` (vitest.config.ts), which never picks up `*.e2e.ts`.
 */
export default defineConfig({
  test: {
    include: ['test/web/**/*.e2e.ts'],
    globalSetup: ['test/web/global-setup.ts'],
    // One server, one browser per file, files one after another: the flows share the demo tenant.
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    silent: 'passed-only',
  },
});
