import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { CHECKS, CLUSTER_CHECKS, type Check } from './figures.js';

// RELIABILITY.md holds both suites; the cluster's part starts here and runs to the end.
const CLUSTER_HEADING = '## Several instances';

/**
 * Writes RELIABILITY.md from the figures the reliability tests record (figures.ts): one line per
 * figure with the test's outcome and its file. A run that left out a check (a file filter) prints
 * the table instead of writing the file, so the record is always a whole run. The reliability suite
 * writes the document and keeps the cluster's section; the cluster suite (`{ suite: 'cluster' }`)
 * rewrites only its section.
 */
export default class ReliabilityReporter implements Reporter {
  private started = Date.now();
  private readonly suite: 'reliability' | 'cluster';

  constructor(options: { suite?: 'reliability' | 'cluster' } = {}) {
    this.suite = options.suite ?? 'reliability';
  }

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
    const order = Object.keys(this.suite === 'cluster' ? CLUSTER_CHECKS : CHECKS) as Check[];
    const names: Record<string, string> = { ...CHECKS, ...CLUSTER_CHECKS };
    rows.sort((a, b) => order.indexOf(a.check) - order.indexOf(b.check));
    const missing = order.filter((check) => !rows.some((row) => row.check === check));
    const ofSuite = rows.filter((row) => order.includes(row.check));
    const cpus = os.cpus();
    const table = [
      '| check | measured | outcome | test file |',
      '|---|---|---|---|',
      ...ofSuite.map((row) => `| ${names[row.check]} | ${row.summary.replaceAll('|', '\\|')} | ${row.outcome} | \`${row.file}\` |`),
    ].join('\n');
    const machine = `${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}; Node ${process.version}`;
    const outcome = `${Math.round((Date.now() - this.started) / 1000)} s; ${failed.length === 0 ? 'every test passed' : `${failed.length} test(s) failed: ${failed.join('; ')}`}`;
    if (missing.length > 0) {
      process.stdout.write(`\nRELIABILITY.md not written: this run left out ${missing.map((check) => names[check]).join(', ')}.\n${table}\n`);
      return;
    }
    const file = path.join(process.cwd(), 'RELIABILITY.md');
    const existing = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const at = existing.indexOf(`\n${CLUSTER_HEADING}`);
    if (this.suite === 'cluster') {
      const section = `${CLUSTER_HEADING}

Written by \`npm run test:cluster\` (vitest.cluster.config.ts, test/cluster/): PostgreSQL, one devnet process, three service
processes sharing the database and DATA_DIR, and a round-robin proxy in front; every request of a burst goes through the proxy.

- Date: ${new Date().toISOString()}
- Machine: ${machine}
- Duration: ${outcome}

${table}
`;
      fs.writeFileSync(file, `${(at >= 0 ? existing.slice(0, at) : existing).trimEnd()}\n\n${section}`);
      process.stdout.write(`\nRELIABILITY.md: "${CLUSTER_HEADING}" written (${ofSuite.length} figures).\n`);
      return;
    }
    const document = `# Reliability

Written by \`npm run test:reliability\` (vitest.reliability.config.ts, test/reliability/); do not edit by hand.
Every figure is asserted by its test: a line marked FAIL is a broken guarantee, not a statistic.

- Date: ${new Date().toISOString()}
- Machine: ${machine}
- Database: ${process.env.TEST_DATABASE_URL ? 'PostgreSQL (TEST_DATABASE_URL)' : 'PGlite (embedded)'}; all traffic on loopback or in process
- Duration: ${outcome}

${table}
`;
    fs.writeFileSync(file, at >= 0 ? `${document}${existing.slice(at)}` : document);
    process.stdout.write(`\nRELIABILITY.md written (${rows.length} figures).\n`);
  }
}
