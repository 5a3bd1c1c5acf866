import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { CHECKS, type Check } from './figures.js';

/**
 * Writes RELIABILITY.md from the figures the reliability tests record (figures.ts): one line per
 * figure with the test's outcome and its file. A run that left out a check (a file filter) prints
 * the table instead of writing the file, so the record is always a whole run.
 */
export default class ReliabilityReporter implements Reporter {
  private started = Date.now();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows: { check: Check; summary: string; outcome: string; file: string; test: string }[] = [];
    const failed: string[] = [];
    for (const module of testModules) {
      const file = path.relative(process.cwd(), module.moduleId);
      for (const test of module.children.allTests()) {
        const outcome = test.result().state;
        if (outcome === 'failed') failed.push(`${file}: ${test.fullName}`);
        for (const figure of test.meta().reliability ?? []) rows.push({ ...figure, outcome: outcome === 'passed' ? 'pass' : outcome === 'failed' ? '**FAIL**' : outcome, file, test: test.name });
      }
    }
    const order = Object.keys(CHECKS) as Check[];
    rows.sort((a, b) => order.indexOf(a.check) - order.indexOf(b.check));
    const missing = order.filter((check) => !rows.some((row) => row.check === check));
    const cpus = os.cpus();
    const table = [
      '| check | measured | outcome | test file |',
      '|---|---|---|---|',
      ...rows.map((row) => `| ${CHECKS[row.check]} | ${row.summary.replaceAll('|', '\\|')} | ${row.outcome} | \`${row.file}\` |`),
    ].join('\n');
    const document = `# Reliability

Written by \`npm run test:reliability\` (vitest.reliability.config.ts, test/reliability/); do not edit by hand.
Every figure is asserted by its test: a line marked FAIL is a broken guarantee, not a statistic.

- Date: ${new Date().toISOString()}
- Machine: ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}; Node ${process.version}
- Database: ${process.env.TEST_DATABASE_URL ? 'PostgreSQL (TEST_DATABASE_URL)' : 'PGlite (embedded)'}; all traffic on loopback or in process
- Duration: ${Math.round((Date.now() - this.started) / 1000)} s; ${failed.length === 0 ? 'every test passed' : `${failed.length} test(s) failed: ${failed.join('; ')}`}

${table}
`;
    if (missing.length > 0) {
      process.stdout.write(`\nRELIABILITY.md not written: this run left out ${missing.map((check) => CHECKS[check]).join(', ')}.\n${table}\n`);
      return;
    }
    fs.writeFileSync(path.join(process.cwd(), 'RELIABILITY.md'), document);
    process.stdout.write(`\nRELIABILITY.md written (${rows.length} figures).\n`);
  }
}
