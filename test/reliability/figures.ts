/**
 * What a reliability test reports for RELIABILITY.md: the check it belongs to and the counts it
 * measured. The test asserts its own threshold; the reporter (reporter.ts) writes the line with
 * the test's outcome and file.
 */
export const CHECKS = {
  'spend-race': 'spend race',
  'fee-race': 'fee races on acting routes',
  'payment-replay': 'payment replay',
  crash: 'crash (kill -9, restart)',
  fuzz: 'fuzz (malformed requests per OpenAPI route)',
  auth: 'auth attacks',
  'tenant-isolation': 'tenant isolation',
  ssrf: 'SSRF corpus (deliverable fetcher)',
} as const;

/** The multi-instance checks (`npm run test:cluster`, test/cluster/). */
export const CLUSTER_CHECKS = {
  'cluster-nonces': 'one service key, three instances',
  'cluster-cap': 'spend race across instances',
  'cluster-replay': 'payment replay across instances',
  'cluster-kill': 'an instance killed mid-execute',
} as const;
export type Check = keyof typeof CHECKS | keyof typeof CLUSTER_CHECKS;

export interface ReliabilityFigure {
  check: Check;
  /** One sentence with the counts, e.g. "200 concurrent calls: 40 paid, 160 refused at the cap; overshoot 0". */
  summary: string;
}

declare module 'vitest' {
  interface TaskMeta {
    reliability?: ReliabilityFigure[];
  }
}

/** Records a figure on the running test (pass `task` from the test context). */
export function reportFigure(task: { meta: { reliability?: ReliabilityFigure[] } }, figure: ReliabilityFigure): void {
  (task.meta.reliability ??= []).push(figure);
}
